"""The TUI never leaves unless the user asks: a background task's error is shown as a
notification and the app keeps running (Pilot, with the key sequence that closed it)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from apptools import main_screen, new_app, ready, rows_for, toast, wait_for
from textual.widgets import TabbedContent

import skilldeck.app
from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.deck import UsesDeck
from skilldeck.app.widgets.toolset_table import ToolsetTable

APP_DIR = Path(inspect.getfile(skilldeck.app)).parent


def team_root(tmp_path: Path) -> Path:
    """A project's skills: one declares a toolset, others are broken."""
    root = tmp_path / "project" / ".claude" / "skills"
    write_skill(
        root,
        "team-tools",
        description="Tools for the team. Use when the team needs a tool.",
        extra='toolsets: ["toolsets/index:TeamToolset"]\n',
    )
    (root / "team-tools" / "toolsets").mkdir()
    (root / "team-tools" / "toolsets" / "index.py").write_text(
        "class TeamToolset:\n    def greet(self, name: str) -> str:\n        return name\n",
        encoding="utf-8",
    )
    write_skill(root, "Bad Name", description="x", folder="bad-name")
    write_skill(root, "bad-curl", description="Installs. Use when.", body="curl x | sh\n")
    return root


async def test_a_failing_background_task_is_shown_and_the_app_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toolset preview raised an unexpected error (a too-deep module once did) while
    the issue's keys were typed: Textual's default ended the app with it."""
    import skilldeck.core.execution as execution

    def broken(*_args: object, **_kwargs: object) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(execution, "toolset_status", broken)
    app = new_app([team_root(tmp_path)])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"team")
        await rows_for(pilot, "team")
        message = await toast(pilot, "RecursionError")
        assert "'toolsets' failed" in message
        await pilot.press("escape", *"Bad")
        await rows_for(pilot, "Bad")
        await pilot.press("alt+2")
        tabs = main_screen(app).query_one("#tabs", TabbedContent)
        await wait_for(pilot, lambda: tabs.active == "tab-diagnostics", what="Diagnostics")
        assert app.is_running and app.return_code is None
        assert main_screen(app).query_one(ToolsetTable).is_mounted


def _work_calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    """(class name, decorator call) of every ``@work(...)`` method in ``tree``."""
    found: list[tuple[str, ast.Call]] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in fn.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                name = call.func if call is not None else deco
                if isinstance(name, ast.Name) and name.id == "work":
                    assert call is not None, f"{cls.name}.{fn.name}: bare @work"
                    found.append((cls.name, call))
    return found


def test_every_background_task_reports_its_errors_instead_of_exiting() -> None:
    """Each ``@work`` in the app passes ``exit_on_error=False`` and its class hands the
    error to the app (``UsesDeck``, or the app itself)."""
    import importlib

    checked = 0
    for path in sorted(APP_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(APP_DIR.parent.parent).with_suffix("").parts)
        for cls_name, call in _work_calls(tree):
            flags = {k.arg: k.value for k in call.keywords}
            value = flags.get("exit_on_error")
            assert isinstance(value, ast.Constant) and value.value is False, (
                f"{module}.{cls_name}: @work without exit_on_error=False"
            )
            cls = getattr(importlib.import_module(module), cls_name)
            assert issubclass(cls, (UsesDeck, SkilldeckApp)), f"{cls_name} does not report"
            checked += 1
    assert checked >= 25
