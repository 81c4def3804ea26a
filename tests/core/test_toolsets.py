"""Toolsets: the protocol (typed tools -> JSON schemas), ``describe`` and ``call`` in a real
child process, broken modules and tools, the timeout, isolation from the server process,
and approvals pinned to the module's hash (real subprocesses and a real session store)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import allowlist_line, write_skill
from skilldeck.core.config import Settings, load_settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import (
    call_toolset,
    mount_toolset,
    parse_spec,
    preview_tools,
    toolset_approval_for,
    toolset_status,
)
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore

SPEC = "toolsets/index:HelloToolset"
MODULE = """\
from __future__ import annotations

import os
from typing import Optional


class HelloToolset:
    def greet(self, name: str, times: int = 1, loud: bool = False) -> str:
        \"\"\"Greet someone by name.

        Longer text that is not the description.\"\"\"
        print("printed noise")
        text = " ".join([f"Hello, {name}!"] * times)
        return text.upper() if loud else text

    def total(self, values: list[float], label: Optional[str] = None) -> dict:
        \"\"\"Add numbers.\"\"\"
        return {"label": label, "sum": sum(values)}

    def where(self) -> dict:
        \"\"\"Where the tool runs.\"\"\"
        try:
            import skilldeck  # noqa: F401
            importable = True
        except ImportError:
            importable = False
        return {"pid": os.getpid(), "cwd": os.getcwd(), "skilldeck": importable,
                "env": sorted(os.environ)}

    def boom(self, what: str = "nope") -> None:
        \"\"\"Raise an error.\"\"\"
        raise ValueError(what)

    def _hidden(self) -> None:
        pass
"""


def make_skill(root: Path, module: str = MODULE, spec: str = SPEC) -> Skill:
    path = write_skill(root, "hello", extra=f'toolsets: ["{spec}"]\n')
    (path.parent / "toolsets").mkdir(exist_ok=True)
    (path.parent / "toolsets" / "index.py").write_text(module, encoding="utf-8")
    return parse_skill_file(path, root=root)


@pytest.fixture
def exec_on(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name in ("SKILLDECK_SKILLS_EXEC", "SKILLDECK_SKILLS_V1", "SKILLDECK_EXEC_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    (isolated_home / "config.toml").write_text(
        "skills_exec = true\nexec_timeout_s = 5\n", encoding="utf-8"
    )
    return load_settings()


def allow(home: Path, skill: Skill) -> None:
    line = allowlist_line(skill.base_dir, "toolsets/index.py")
    (home / "ALLOWLIST.txt").write_text(line + "\n", encoding="utf-8")


def test_spec_parsing() -> None:
    assert parse_spec("toolsets/index:HelloToolset") == ("toolsets/index.py", "HelloToolset")
    assert parse_spec("tools.py:TOOLS") == ("tools.py", "TOOLS")
    for bad in ("toolsets/index", ":X", "a:not-an-identifier"):
        with pytest.raises(SkilldeckError):
            parse_spec(bad)


def test_schemas_from_type_hints_in_a_child(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    skill = make_skill(tmp_path / "skills")
    allow(isolated_home, skill)
    toolset = mount_toolset(exec_on, skill, SPEC)
    tools = {t.name: t for t in toolset.tools}
    assert sorted(tools) == ["boom", "greet", "total", "where"]
    greet = tools["greet"]
    assert greet.description == "Greet someone by name."
    assert greet.input_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "times": {"type": "integer", "default": 1},
            "loud": {"type": "boolean", "default": False},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    total = tools["total"].input_schema
    assert total["properties"]["values"] == {"type": "array", "items": {"type": "number"}}
    assert total["properties"]["label"] == {"type": "string", "default": None}
    assert total["required"] == ["values"]
    # The source-only preview (used before approval) agrees with the child's answer.
    preview = preview_tools(MODULE.encode(), "HelloToolset")
    assert {t.name: t.input_schema for t, _ in preview} == {
        name: tool.input_schema for name, tool in tools.items()
    }


def test_list_of_functions_and_unsupported_parameters(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    module = (
        "def shout(text: str) -> str:\n    '''Upper-case.'''\n    return text.upper()\n\n"
        "def bad(thing: object) -> None:\n    '''Object is not supported.'''\n\n"
        "async def later(n: int = 2) -> int:\n    return n * 2\n\n"
        "TOOLS = [shout, bad, later]\n"
    )
    skill = make_skill(tmp_path / "skills", module, "toolsets/index:TOOLS")
    allow(isolated_home, skill)
    toolset = mount_toolset(exec_on, skill, "toolsets/index:TOOLS")
    assert [t.name for t in toolset.tools] == ["later", "shout"]
    assert toolset.problems and toolset.problems[0].startswith("bad: parameter thing")
    out = call_toolset(exec_on, skill, "toolsets/index:TOOLS", "shout", {"text": "hi"})
    assert out.result == "HI"
    assert call_toolset(exec_on, skill, "toolsets/index:TOOLS", "later", {}).result == 4
    states = {row.tool: (row.state, row.error) for row in toolset_status(exec_on, skill)}
    assert states["shout"] == ("allowlist", "") and states["bad"][0] == "error"


def test_call_runs_in_a_confined_child(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    skill = make_skill(tmp_path / "skills")
    allow(isolated_home, skill)
    out = call_toolset(exec_on, skill, SPEC, "greet", {"name": "Ada", "times": 2})
    assert out.result == "Hello, Ada! Hello, Ada!" and out.allowed_by == "allowlist"
    assert "printed noise" in out.stderr  # prints never reach the answer
    where = call_toolset(exec_on, skill, SPEC, "where", {}).result
    assert where["pid"] != __import__("os").getpid()
    assert Path(where["cwd"]) == skill.base_dir
    assert where["skilldeck"] is False  # the project is not importable in the child
    assert "SKILLDECK_HOME" not in where["env"]
    total = call_toolset(exec_on, skill, SPEC, "total", {"values": [1, 2.5], "label": "x"})
    assert total.result == {"label": "x", "sum": 3.5}
    # Nothing of the module ever lands in this process.
    assert "skill_toolset" not in sys.modules
    assert not any(
        "toolsets/index.py" in str(getattr(m, "__file__", "")) for m in sys.modules.values()
    )


def test_bad_arguments_and_unknown_tool(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    skill = make_skill(tmp_path / "skills")
    allow(isolated_home, skill)
    for tool, args, reason in (
        ("greet", {}, "bad_arguments"),
        ("greet", {"name": 3}, "bad_arguments"),
        ("greet", {"name": "x", "extra": 1}, "bad_arguments"),
        ("total", {"values": ["a"]}, "bad_arguments"),
        ("nothing", {}, "unknown_tool"),
        ("_hidden", {}, "unknown_tool"),
    ):
        with pytest.raises(SkilldeckError) as caught:
            call_toolset(exec_on, skill, SPEC, tool, args)
        assert caught.value.details["reason"] == reason, (tool, args)


def test_tool_raising_is_a_clean_error(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    skill = make_skill(tmp_path / "skills")
    allow(isolated_home, skill)
    with pytest.raises(SkilldeckError) as caught:
        call_toolset(exec_on, skill, SPEC, "boom", {"what": "kaput"})
    error = caught.value
    assert error.code.value == "EXECUTION_ERROR" and error.details["reason"] == "tool_error"
    line = MODULE.splitlines().index("        raise ValueError(what)") + 1
    assert error.message == f"boom raised ValueError: kaput (toolsets/index.py line {line})"
    assert "Traceback" not in error.message


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("class HelloToolset:\n    def f(self) ->\n", "toolsets/index.py line 2"),
        ("raise RuntimeError('at import')\n", "RuntimeError: at import (toolsets/index.py line 1)"),
        ("X = 1\n", "has no attribute 'HelloToolset'"),
        ("HelloToolset = 3\n", "not a class or a list of functions"),
    ],
)
def test_malformed_modules(
    tmp_path: Path, exec_on: Settings, isolated_home: Path, module: str, expected: str
) -> None:
    skill = make_skill(tmp_path / "skills", module)
    allow(isolated_home, skill)
    with pytest.raises(SkilldeckError) as caught:
        mount_toolset(exec_on, skill, SPEC)
    assert caught.value.details["reason"] == "module_error"
    assert expected in caught.value.message
    rows = toolset_status(exec_on, skill)
    assert rows and all(row.state == "error" and row.error for row in rows)


def test_timeout_kills_the_child(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLDECK_EXEC_TIMEOUT_S", raising=False)
    monkeypatch.delenv("SKILLDECK_SKILLS_EXEC", raising=False)
    (isolated_home / "config.toml").write_text(
        "skills_exec = true\nexec_timeout_s = 1\n", encoding="utf-8"
    )
    module = (
        "import time\n\nclass HelloToolset:\n    def wait(self) -> None:\n        time.sleep(30)\n"
    )
    skill = make_skill(tmp_path / "skills", module)
    allow(isolated_home, skill)
    started = time.monotonic()
    with pytest.raises(SkilldeckError) as caught:
        call_toolset(load_settings(), skill, SPEC, "wait", {})
    assert caught.value.details["reason"] == "timeout"
    assert time.monotonic() - started < 10


def test_exec_flag_off_refuses_and_runs_nothing(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLDECK_SKILLS_EXEC", raising=False)
    marker = tmp_path / "ran"
    module = f"open({str(marker)!r}, 'w').close()\n\n"
    module += "class HelloToolset:\n    def f(self) -> int:\n        return 1\n"
    skill = make_skill(tmp_path / "skills", module)
    allow(isolated_home, skill)
    settings = load_settings()
    assert settings.skills_exec is False
    for attempt in (
        lambda: mount_toolset(settings, skill, SPEC),
        lambda: call_toolset(settings, skill, SPEC, "f", {}),
    ):
        with pytest.raises(SkilldeckError) as caught:
            attempt()
        assert caught.value.details["reason"] == "exec_disabled"
    assert [row.state for row in toolset_status(settings, skill)] == ["exec off"]
    assert not marker.exists()


def test_approval_is_pinned_to_the_hash(
    tmp_path: Path, exec_on: Settings, isolated_home: Path
) -> None:
    skill = make_skill(tmp_path / "skills")
    with SessionStore(isolated_home / "sessions.db", settings=exec_on) as store:
        session = store.create(mode="approval", actor="operator")
        sid = session.id
        in_session: dict[str, Any] = {"store": store, "session_id": sid}

        def states() -> set[str]:
            return {row.state for row in toolset_status(exec_on, skill, store, sid)}

        assert states() == {"not approved"}
        with pytest.raises(SkilldeckError) as caught:
            mount_toolset(exec_on, skill, SPEC, store=store, session_id=sid)
        assert caught.value.details["reason"] == "requires_approval"
        key = toolset_approval_for(skill, "toolsets/index.py")
        assert key.startswith("Toolset(hello/toolsets/index.py@skill-sha256:")
        assert store.pending(sid) == [key] and states() == {"pending"}
        store.approve(sid, key, actor="operator")
        assert states() == {"approved"}
        out = call_toolset(
            exec_on, skill, SPEC, "greet", {"name": "A"}, store=store, session_id=sid
        )
        assert out.allowed_by == "approved"
        # An edited module needs a new approval.
        module = skill.base_dir / "toolsets" / "index.py"
        module.write_text(MODULE.replace("Hello,", "Bye,"), encoding="utf-8")
        with pytest.raises(SkilldeckError) as caught:
            call_toolset(exec_on, skill, SPEC, "greet", {"name": "A"}, **in_session)
        assert caught.value.details["reason"] == "requires_approval"
        assert states() == {"pending"}
        store.approve(sid, toolset_approval_for(skill, "toolsets/index"), actor="operator")
        again = call_toolset(
            exec_on, skill, SPEC, "greet", {"name": "A"}, store=store, session_id=sid
        )
        assert again.result == "Bye, A!"
        # A denial wins over the approval and the allowlist.
        allow(isolated_home, skill)
        store.deny(sid, toolset_approval_for(skill, "toolsets/index.py"), actor="operator")
        assert states() == {"denied"}
        with pytest.raises(SkilldeckError) as caught:
            call_toolset(exec_on, skill, SPEC, "greet", {"name": "A"}, **in_session)
        assert caught.value.details["reason"] == "denied"
        actions = [e.action for e in store.audit(sid)]
    assert actions.count("toolset_call") == 2 and actions.count("toolset_refused") == 3


DEEP_MODULE = "x = " + "+".join(["1"] * 200_000) + "\n\n" + MODULE
"""A toolset module with a 200,000-term expression: too deep for Python's parser."""


DEEP_ANNOTATION = MODULE.replace("name: str,", "name: '" + "|".join(["str"] * 200_000) + "',")
"""A module that compiles (the annotation is a string) but whose annotation is too deep."""


@pytest.mark.parametrize("module", [DEEP_MODULE, DEEP_ANNOTATION], ids=["code", "annotation"])
def test_a_module_nested_too_deeply_is_a_module_error(
    tmp_path: Path, exec_on: Settings, isolated_home: Path, module: str
) -> None:
    """The preview (what the TUI lists) and the child both answer a diagnostic for a
    module the parser cannot nest that deep: an error row, never a RecursionError."""
    with pytest.raises(SkilldeckError) as caught:
        preview_tools(module.encode(), "HelloToolset", "toolsets/index.py")
    assert caught.value.details["reason"] == "module_error"
    assert "nested too deeply" in caught.value.message
    skill = make_skill(tmp_path / "skills", module)
    rows = toolset_status(exec_on, skill)
    assert [(row.state, row.error) for row in rows] == [("error", caught.value.message)]
    allow(isolated_home, skill)
    if module == DEEP_MODULE:  # the string annotation compiles: only the preview reads it
        with pytest.raises(SkilldeckError) as mounting:
            mount_toolset(exec_on, skill, SPEC)
        assert mounting.value.details["reason"] == "module_error"
        assert "nested too deeply to compile" in mounting.value.message
        assert "Traceback" not in str(mounting.value.details.get("stderr", ""))
