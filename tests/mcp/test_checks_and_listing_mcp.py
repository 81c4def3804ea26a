"""Issue 36 through the MCP SDK client against ``skilldeck serve``.

1. a loaded skill's ``tools:`` entries join a strict session's allowlist;
3. ``load_skill`` and ``skilldeck load --format json`` give the same tool availability;
4. ``validate_skill`` and ``lint_skill`` answer with the CLI's findings and codes,
   read-only, under the ``skills`` category;
5. ``list_skills`` entries and the ``<available_skills>`` text carry version and tags;
7. a broken SKILL.md is INTERNAL_ERROR with its SD code; a read the system refuses is
   PERMISSION_DENIED.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters
from mcp_harness import ServerClient, error_code, make_home, server_env, text_of

from conftest import write_skill

MISSING = "tools:\n  - name: NoSuchTool\n    purpose: publish\n    required: true\n"
BROKEN = "---\nname: broken\ndescription: Broken: on purpose, the colon breaks YAML.\n---\nb\n"


def build_root(base: Path) -> Path:
    root = base / "skills"
    write_skill(
        root,
        "needs-tool",
        "Publishes things. Use when publishing.",
        extra=MISSING + "tool-validation: warn\n",
    )
    write_skill(root, "vague", description="Helps.", body="# Vague\n\nSee [x](missing.md).\n")
    write_skill(root, "hidden-one", extra="disable-model-invocation: true\n")
    write_skill(
        root,
        "tagged",
        "Fills PDF forms. Use when filling forms.",
        extra="metadata:\n  version: 1.2.0\n  tags: [pdf, forms]\n",
    )
    write_skill(
        root,
        "csv-tagged",
        "Cleans CSV files. Use when cleaning CSV.",
        extra="metadata:\n  version: 0.3.1\n  tags: csv, data\n",
    )
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text(BROKEN, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerClient, Path, Path]]:
    base = tmp_path_factory.mktemp("mcp-round3")
    root = build_root(base)
    home = make_home(base / "home")
    client = ServerClient(root, home).start()
    try:
        yield client, root, home
    finally:
        client.close()


def run_cli(home: Path, *argv: str) -> tuple[int, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(home),
    )
    return proc.returncode, json.loads(proc.stdout)


def data_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    return data


def cli_entry(report: dict[str, Any], name: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(s for s in report["skills"] if s["name"] == name)
    return entry


def test_check_tools_are_listed_read_only_in_the_skills_category(
    served: tuple[ServerClient, Path, Path],
) -> None:
    server, _, _ = served
    tools = {t.name: t for t in server.run(lambda c: c.list_tools()).tools}
    for name in ("validate_skill", "lint_skill"):
        tool = tools[name]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.meta == {"category": "skills"}
        assert tool.input_schema["required"] == ["name"]


@pytest.mark.parametrize("name", ["needs-tool", "vague", "broken"])
def test_validate_skill_gives_the_cli_findings(
    served: tuple[ServerClient, Path, Path], name: str
) -> None:
    server, root, home = served
    data = data_of(server.call("validate_skill", {"name": name}))
    _, report = run_cli(home, "--root", str(root), "--format", "json", "validate")
    expected = cli_entry(report, name)
    assert {k: data[k] for k in expected} == expected
    if name == "needs-tool":
        assert ("ST201", "warning") in [(d["code"], d["severity"]) for d in data["diagnostics"]]
    if name == "broken":
        assert data["valid"] is False and "SD103" in text_of(
            server.call("validate_skill", {"name": name})
        )


@pytest.mark.parametrize("name", ["vague", "needs-tool"])
def test_lint_skill_gives_the_cli_findings(
    served: tuple[ServerClient, Path, Path], name: str
) -> None:
    server, root, home = served
    data = data_of(server.call("lint_skill", {"name": name}))
    _, report = run_cli(home, "--root", str(root), "--format", "json", "lint", "--exit-zero")
    expected = cli_entry(report, name)
    assert {k: data[k] for k in expected} == expected
    if name == "vague":
        assert data["diagnostics"], "the vague skill has lint findings"


def test_checks_refuse_what_a_model_may_not_see_and_change_nothing(
    served: tuple[ServerClient, Path, Path],
) -> None:
    server, root, _ = served
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    assert error_code(server.call("validate_skill", {"name": "hidden-one"})) == "PERMISSION_DENIED"
    assert error_code(server.call("lint_skill", {"name": "no-such"})) == "NOT_FOUND"
    assert (
        error_code(server.call("validate_skill", {"name": "x", "path": "/etc"})) == "INVALID_PARAM"
    )
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def test_load_skill_and_cli_load_carry_the_same_tool_availability(
    served: tuple[ServerClient, Path, Path],
) -> None:
    server, root, home = served
    data = data_of(server.call("load_skill", {"name": "needs-tool"}))
    code, cli = run_cli(home, "--root", str(root), "--format", "json", "load", "needs-tool")
    assert code == 0
    assert data["tools"] == cli["tools"] and data["tools"]["missing"] == ["NoSuchTool"]
    assert data["warnings"] == cli["warnings"]


def test_load_of_a_skill_that_does_not_parse_is_internal_error(
    served: tuple[ServerClient, Path, Path],
) -> None:
    server, _, _ = served
    refused = server.call("load_skill", {"name": "broken"})
    assert error_code(refused) == "INTERNAL_ERROR"
    error = refused.structured_content["error"]  # type: ignore[index]
    assert error["reason"] == "parse_failed" and error["diagnostics"] == ["SD103"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_load_the_system_refuses_is_permission_denied(readable_tmp: Path) -> None:
    root = readable_tmp / "skills"
    md = write_skill(root, "locked")
    write_skill(root, "open-one")
    for folder in (root, md.parent, root / "open-one"):
        folder.chmod(0o755)
    md.chmod(0o000)
    home = make_home(readable_tmp / "home")
    for path in (home, home / "user-home"):
        path.chmod(0o777)
    (home / "config.toml").chmod(0o644)
    client = ServerClient(root, home)
    params = client.params
    client.params = StdioServerParameters(
        command="setpriv",
        args=["--reuid=65534", "--regid=65534", "--clear-groups", params.command, *params.args],
        env=params.env,
    )
    client.start()
    try:
        refused = client.call("load_skill", {"name": "locked"})
        assert error_code(refused) == "PERMISSION_DENIED", text_of(refused)
        assert refused.structured_content["error"]["reason"] == "os_refused"  # type: ignore[index]
    finally:
        client.close()


def test_list_skills_gives_version_and_tags_within_the_budget(
    served: tuple[ServerClient, Path, Path],
) -> None:
    server, _, _ = served
    data = data_of(server.call("list_skills", {}))
    entries = {e["name"]: e for e in data["skills"]}
    assert entries["tagged"] == {"name": "tagged", "version": "1.2.0", "tags": ["pdf", "forms"]}
    assert entries["csv-tagged"]["tags"] == ["csv", "data"]
    assert entries["vague"] == {"name": "vague", "version": None, "tags": []}
    text = data["text"]
    tagged = text[text.index("<name>\ntagged\n</name>") :]
    tagged = tagged[: tagged.index("</skill>")]
    assert "<version>\n1.2.0\n</version>" in tagged and "<tags>\npdf, forms\n</tags>" in tagged
    for budget in (400, 700, 1000):
        small = data_of(server.call("list_skills", {"budget": budget}))
        assert small["chars"] <= budget
        assert [e["name"] for e in small["skills"]] == small["included"]


@pytest.mark.parametrize(("value", "picked_up"), [("0", False), ("1", True), (None, True)])
def test_refresh_on_call_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None, picked_up: bool
) -> None:
    from skilldeck.core.config import load_settings
    from skilldeck.mcp import service as service_module
    from skilldeck.mcp.service import SkillService

    monkeypatch.setattr(service_module, "_INLINE_CHECK_MAX_SECONDS", 60.0)  # no timing
    if value is not None:
        monkeypatch.setenv("SKILLS_REFRESH_ON_CALL", value)
    root = tmp_path / "skills"
    write_skill(root, "first", "First skill. Use when testing.")
    settings = load_settings()
    settings.semantic = False
    service = SkillService(settings, [root])
    try:
        write_skill(root, "second", "Second skill. Use when testing.")
        assert service.refresh(inline=True) is picked_up  # what each tool call does
        assert ("second" in service.workspace.catalog.names()) is picked_up
        service.refresh()  # the background poll still picks changes up
        assert "second" in service.workspace.catalog.names()
    finally:
        service.close()


def test_a_skills_tool_refs_join_a_strict_sessions_allowlist(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "searcher",
        "Searches code. Use when searching code.",
        extra="tools:\n  - name: Grep\n    purpose: find matches\n  - name: NoSuchTool\n",
    )
    write_skill(root, "reader", "Reads files. Use when reading.", extra="allowed-tools: Read\n")
    home = make_home(tmp_path / "home")
    server = ServerClient(root, home, "--mode", "strict").start()
    try:
        before = server.call("check_tool", {"tool": "Grep"}).structured_content
        assert before is not None and before["allowed"] is False
        assert before["reason"] == "not_in_allowlist"
        loaded = data_of(server.call("load_skill", {"name": "searcher"}))
        assert loaded["tools"]["complete"] is True  # NoSuchTool is optional: not incomplete
        assert loaded["tools"]["missing"] == ["NoSuchTool"]
        data_of(server.call("load_skill", {"name": "reader"}))
        for tool in ("Grep", "Read"):  # the union over every active skill decides
            after = server.call("check_tool", {"tool": tool}).structured_content
            assert after is not None and after["allowed"] is True, after
        other = server.call("check_tool", {"tool": "Bash"}).structured_content
        assert other is not None and other["allowed"] is False
    finally:
        server.close()
