"""Tool availability: preset, tools file, real stdio MCP servers, validation modes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings, cache_dir
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.model import Severity, Skill, ToolRef
from skilldeck.core.tools import (
    BUILTIN_TOOLS,
    McpError,
    ServerSpec,
    ToolRegistry,
    check_skill_tools,
    find_mcp_config,
    list_tools,
    tool_diagnostics,
    validation_mode,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mcp_tools_server.py"


def _skill(tmp_path: Path, tools: tuple[ToolRef, ...], **frontmatter: object) -> Skill:
    return Skill(
        name="s",
        description="d",
        path=tmp_path / "s" / "SKILL.md",
        base_dir=tmp_path / "s",
        tools=tools,
        frontmatter=dict(frontmatter),
    )


def _mcp_config(folder: Path, servers: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _fixture_server(*extra: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(FIXTURE), *extra]}


def test_preset_and_switch(tmp_path: Path) -> None:
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    assert set(BUILTIN_TOOLS) <= set(registry.available())
    assert registry.available()["Bash"].source == "preset"
    off = ToolRegistry.load(Settings(builtin_tools=False), cwd=tmp_path)
    assert off.available() == {}


def test_tools_file_forms_and_hidden(isolated_home: Path, tmp_path: Path) -> None:
    (isolated_home / "tools.toml").write_text(
        'hidden = ["WebSearch"]\n'
        '[[tools]]\nname = "deploy"\ndescription = "Ship it"\n'
        '[[tools]]\nname = "secret"\nhidden = true\n',
        encoding="utf-8",
    )
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    tools = registry.available()
    assert tools["deploy"].source == "tools-file" and not tools["deploy"].hidden
    assert tools["secret"].hidden and tools["WebSearch"].hidden
    assert "deploy" in registry.names() and "secret" not in registry.names()
    assert "secret" in registry.names(include_hidden=True)
    skill = _skill(
        tmp_path,
        (
            ToolRef("deploy", required=True),
            ToolRef("secret", required=True),
            ToolRef("WebSearch", required=True),
            ToolRef("nothing", required=False),
        ),
    )
    availability = registry.availability(skill)
    assert availability.available == ["deploy"]
    assert availability.hidden == ["secret", "WebSearch"]
    assert availability.missing == ["nothing"]
    assert not availability.complete
    assert [e.status for e in availability.entries] == ["available", "hidden", "hidden", "missing"]


def test_tools_file_list_form_and_builtin_off(isolated_home: Path, tmp_path: Path) -> None:
    (isolated_home / "tools.toml").write_text(
        'builtin = false\ntools = ["A", "B"]\n', encoding="utf-8"
    )
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    assert sorted(registry.available()) == ["A", "B"]


def test_bad_tools_file_is_a_diagnostic(isolated_home: Path, tmp_path: Path) -> None:
    (isolated_home / "tools.toml").write_text("tools = [", encoding="utf-8")
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    assert [d.code for d in registry.diagnostics] == ["ST001"]
    assert "Read" in registry.available()
    (isolated_home / "tools.toml").write_text("tools = [1]\nhidden = 3\n", encoding="utf-8")
    codes = [d.code for d in ToolRegistry.load(Settings(), cwd=tmp_path).diagnostics]
    assert codes == ["ST002", "ST002"]


def test_availability_of_a_parsed_skill(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path,
        "gitlog",
        extra=(
            'allowed-tools: "Bash(git log:*) Read"\n'
            "tools:\n  - name: github.create_issue\n    purpose: file issues\n"
            "    required: true\n"
        ),
    )
    skill = parse_skill_file(path)
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    availability = registry.availability(skill)
    assert "Bash" in availability.available and "Read" in availability.available
    assert availability.missing == ["github.create_issue"]
    assert not availability.complete
    assert availability.missing_required == ["github.create_issue"]
    data = availability.to_dict()
    assert data["complete"] is False and data["entries"][0]["name"] == "github.create_issue"


def test_validation_modes(tmp_path: Path) -> None:
    registry = ToolRegistry.load(Settings(), cwd=tmp_path)
    skill = _skill(
        tmp_path, (ToolRef("Nope", required=True), ToolRef("Maybe"), ToolRef("Read", required=True))
    )
    availability = registry.availability(skill)
    strict = tool_diagnostics(skill, availability, "strict")
    assert [(d.code, d.severity) for d in strict] == [
        ("ST201", Severity.ERROR),
        ("ST204", Severity.INFO),
    ]
    warn = tool_diagnostics(skill, availability, "warn")
    assert [(d.code, d.severity) for d in warn] == [
        ("ST201", Severity.WARNING),
        ("ST204", Severity.INFO),
    ]
    assert tool_diagnostics(skill, availability, "ignore") == []


def test_validation_mode_per_skill(tmp_path: Path) -> None:
    settings = Settings(tool_validation="strict")
    plain = _skill(tmp_path, ())
    assert validation_mode(plain, settings) == ("strict", [])
    relaxed = _skill(tmp_path, (ToolRef("Nope", required=True),), **{"tool-validation": "ignore"})
    assert validation_mode(relaxed, settings)[0] == "ignore"
    nested = _skill(tmp_path, (), metadata={"tool-validation": "warn"})
    assert validation_mode(nested, settings)[0] == "warn"
    wrong = _skill(tmp_path, (), **{"tool-validation": "loud"})
    mode, diags = validation_mode(wrong, settings)
    assert mode == "strict" and [d.code for d in diags] == ["ST203"]
    registry = ToolRegistry.load(settings, cwd=tmp_path)
    assert check_skill_tools(relaxed, registry)[1] == []


def test_find_mcp_config_walks_to_project_root(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    config = _mcp_config(project, {})
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    assert find_mcp_config(Settings(), deep) == config
    assert find_mcp_config(Settings(mcp_config=tmp_path / "x.json"), deep) == tmp_path / "x.json"
    assert find_mcp_config(Settings(), tmp_path) is None


def test_real_mcp_server_tools_are_listed_and_cached(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _mcp_config(project, {"fx": _fixture_server(), "paged": _fixture_server("--paged", "7")})
    registry = ToolRegistry.load(Settings(), cwd=project)
    assert [d.code for d in registry.diagnostics] == ["ST106", "ST106"]
    assert "fx.echo" not in registry.available()
    statuses = registry.refresh_mcp(timeout=30)
    assert [s.error for s in statuses] == [None, None]
    tools = registry.available()
    assert tools["fx.echo"].source == "mcp:fx" and tools["echo"].source == "mcp:fx"
    assert tools["fx.add"].description == "Add two numbers."
    assert [f"paged.tool_{i}" for i in range(7)] == sorted(
        k for k in tools if k.startswith("paged.")
    )
    assert registry.diagnostics == []
    cache = json.loads((cache_dir() / "mcp-tools.json").read_text())
    entries = list(cache["servers"].values())
    assert all(e["queried_at"] <= time.time() for e in entries)
    started = time.perf_counter()
    again = ToolRegistry.load(Settings(), cwd=project)
    assert time.perf_counter() - started < 1.0
    assert "fx.echo" in again.available() and again.mcp_status["fx"].queried_at
    skill = _skill(tmp_path, (ToolRef("fx.echo"), ToolRef("add"), ToolRef("mcp__paged__tool_3")))
    assert again.availability(skill).complete


def test_env_expansion_and_changed_recipe_invalidates_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_PATH", str(FIXTURE))
    project = tmp_path / "proj"
    _mcp_config(
        project,
        {
            "fx": {
                "command": sys.executable,
                "args": ["${FIXTURE_PATH}", "${UNSET_VAR:---paged}", "2"],
            }
        },
    )
    registry = ToolRegistry.load(Settings(), cwd=project, query_missing=True, timeout=30)
    assert "fx.tool_1" in registry.available()
    _mcp_config(project, {"fx": _fixture_server("--paged", "3")})
    changed = ToolRegistry.load(Settings(), cwd=project)
    assert "fx.tool_1" not in changed.available()
    assert [d.code for d in changed.diagnostics] == ["ST106"]


def test_failing_servers_are_diagnostics(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _mcp_config(
        project,
        {
            "missing": {"command": str(tmp_path / "no-such-binary")},
            "dies": {
                "command": sys.executable,
                "args": ["-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
            },
            "silent": {"command": sys.executable, "args": ["-c", "import time; time.sleep(30)"]},
            "garbage": {
                "command": sys.executable,
                "args": [
                    "-c",
                    "import sys; sys.stdin.readline(); "
                    'print(\'{"jsonrpc":"2.0","id":1,"error":'
                    '{"code":-1,"message":"nope"}}\', flush=True)',
                ],
            },
            "web": {"type": "http", "url": "https://example.invalid/mcp"},
            "broken": {"args": []},
        },
    )
    started = time.perf_counter()
    registry = ToolRegistry.load(Settings(), cwd=project, query_missing=True, timeout=2)
    assert time.perf_counter() - started < 10
    by_message = {d.message.split("'")[1]: d for d in registry.diagnostics}
    assert by_message["missing"].code == "ST103"
    assert by_message["dies"].code == "ST104" and "boom" in by_message["dies"].message
    assert by_message["silent"].code == "ST105"
    assert by_message["garbage"].code == "ST104" and "nope" in by_message["garbage"].message
    assert by_message["web"].code == "ST102" and by_message["web"].severity is Severity.INFO
    assert by_message["broken"].code == "ST102"
    assert "Read" in registry.available()
    cached = ToolRegistry.load(Settings(), cwd=project)
    assert {d.code for d in cached.diagnostics} == {"ST102", "ST103", "ST104", "ST105"}


def test_bad_mcp_config_is_a_diagnostic(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text("{not json", encoding="utf-8")
    registry = ToolRegistry.load(Settings(mcp_config=config), cwd=tmp_path)
    assert [d.code for d in registry.diagnostics] == ["ST101"]


def test_list_tools_raises_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(McpError) as err:
        list_tools(ServerSpec("x", str(tmp_path / "nothing")), timeout=1)
    assert err.value.kind == "start"


HOSTILE_SERVER = r"""
import json, sys
mode = sys.argv[1]
if mode == "stderr-flood":
    while True:
        sys.stderr.write("x" * 65536)
if mode == "stdout-flood":
    while True:
        sys.stdout.write("y" * 65536 + "\n")
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "h"}}
    else:
        names = ["good_tool", "bad\x1b[2Jtool", "new\nline", "x" * 300, "rtl\u202etool", 5]
        result = {"tools": [{"name": n, "inputSchema": {}} for n in names]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""

LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (768 * 1024 * 1024,) * 2)
from skilldeck.core.tools import ServerSpec, list_tools, McpError
try:
    list_tools(ServerSpec("h", sys.executable, ["-c", sys.argv[1], sys.argv[2]]), timeout=4)
except McpError as exc:
    print(exc.kind, len(exc.stderr))
"""


def test_hostile_server_tool_names_are_left_out(tmp_path: Path) -> None:
    spec = ServerSpec("h", sys.executable, ["-c", HOSTILE_SERVER, "names"])
    assert [t["name"] for t in list_tools(spec, timeout=10)] == ["good_tool"]


@pytest.mark.parametrize("mode", ["stderr-flood", "stdout-flood"])
def test_flooding_server_is_bounded(mode: str) -> None:
    """A server that floods stdout or stderr (no newline) for the whole timeout: the
    client stays within 768 MB of address space and reports a timeout."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", LIMITED, HOSTILE_SERVER, mode],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    kind, tail = done.stdout.split()
    assert kind == "timeout" and int(tail) < 50_000
