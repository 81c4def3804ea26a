"""Pilot tests of issue #25: type-ahead never runs a skill action nor answers a dialog,
dialogs that write ignore keys for their first moments, and a typed tool can be approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptools import build_root, new_app, settle
from test_exec_approvals import SCRIPT_TEXT, queue_run
from test_rough_edges import burst
from textual.widgets import Input

from conftest import write_skill
from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.dialogs.force_load import ForceLoadDialog
from skilldeck.app.dialogs.request_review import RequestReviewDialog
from skilldeck.app.dialogs.tool_decision import ToolDecisionDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.sessions import SessionStore

GUARD = 0.3
PAST_GUARD = 0.35


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = build_root(tmp_path / "skills")
    for name in ("docker-compose", "docker-build", "docker-logs"):
        write_skill(root, name, description=f"Docker {name[7:]}. Use when running docker.")
    write_skill(root, "jekyll-site", description="Builds a Jekyll site. Use for jekyll blogs.")
    return root


@pytest.fixture
def exec_root(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Skill ``demo`` with a script, skills_exec on (as in ``test_exec_approvals``)."""
    monkeypatch.delenv("SKILLDECK_SKILLS_EXEC", raising=False)
    (isolated_home / "config.toml").write_text("skills_exec = true\n", encoding="utf-8")
    root = tmp_path / "exec-skills"
    write_skill(root, "demo", description="Demo skill. Use when testing scripts.")
    (root / "demo" / "scripts").mkdir()
    (root / "demo" / "scripts" / "hello.py").write_text(SCRIPT_TEXT, encoding="utf-8")
    return root


def registry_text(app: object) -> str | None:
    path = app.workspace.settings.registry_file  # type: ignore[attr-defined]
    return path.read_text(encoding="utf-8") if path.exists() else None


async def test_letters_typed_in_the_results_go_to_the_search(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = registry_text(app)
        await pilot.press(*"docker", "down", "down", *"jekyll", "e", "y", "l")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        search = app.screen.query_one("#search", SearchBox)
        assert search.value == "dockerjekylleyl"
        assert app.focused is search
        assert registry_text(app) == before
        assert all(skill.enabled for skill in app.workspace.catalog.skills)
        # the function keys still act from the results list
        await pilot.press("ctrl+u", *"docker", "down", "f7")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)


async def test_fast_burst_keeps_the_order_and_never_answers(root: Path) -> None:
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = [*((c, c) for c in "docker"), ("down", None), ("down", None)]
        burst(app, [*keys, *((c, c) for c in "jekyll"), ("e", "e"), ("y", "y")])
        await settle(pilot)
        assert app.screen.query_one("#search", SearchBox).value == "dockerjekylley"
        assert all(skill.enabled for skill in app.workspace.catalog.skills)


async def test_disable_confirm_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = registry_text(app)
        await pilot.press(*"docker", "down")
        await settle(pilot)
        burst(app, [("f7", None), ("y", "y")])
        await pilot.pause()
        burst(app, [("enter", "\r")])
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert registry_text(app) == before
        await pilot.pause(PAST_GUARD)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert "false" in json.dumps(json.loads(registry_text(app) or "{}")).lower()
        current = app.screen.query_one(ResultsList).current
        assert current is not None and not current.enabled


async def test_force_load_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    store = SessionStore()
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down")
        await settle(pilot)
        burst(app, [("f6", None), *((c, c) for c in "abc"), ("ctrl+s", None), ("enter", "\r")])
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ForceLoadDialog)
        await settle(pilot)
        assert dialog.query_one("#arguments", Input).value == ""
        assert store.list() == []
        await pilot.pause(PAST_GUARD)
        await pilot.press(*"x.pdf")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
    [session] = store.list()
    assert session.active_skills == ["pdf-forms"]
    store.close()


async def test_policy_widening_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="strict", actor="agent")
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        burst(app, [("m", "m"), ("y", "y"), ("enter", "\r")])
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert store.get(session.id).mode == "strict"
        await pilot.pause(PAST_GUARD)
        await pilot.press("enter")  # the focused button answers once the guard is over
        await settle(pilot)
        assert store.get(session.id).mode == "approval"
    store.close()


async def test_request_review_ignores_keys_typed_before_it_appeared(
    exec_root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(exec_root, store, session)
    app = new_app([exec_root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        burst(app, [("a", "a"), ("a", "a"), ("d", "d")])  # the first opens the review
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestReviewDialog)
        assert store.get(session.id).pending == [entry]
        await pilot.pause(PAST_GUARD)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
    assert store.get(session.id).approved == [entry]
    store.close()


async def test_enter_in_the_tool_box_offers_approve_or_deny(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        await pilot.press("t", *"Bash", "enter")
        burst(app, [("a", "a")])
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ToolDecisionDialog) and dialog.tool == "Bash"
        assert store.get(session.id).approved == []  # "a" came before the dialog showed
        await pilot.pause(PAST_GUARD)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert store.get(session.id).approved == ["Bash"]
        assert app.screen.query_one("#tool", Input).value == ""
        # deny works the same way, and escape decides nothing
        await pilot.press("t", *"WebFetch", "enter")
        await pilot.pause(PAST_GUARD)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("enter")
        await pilot.pause(PAST_GUARD)
        await pilot.press("d")
        await settle(pilot)
    now = store.get(session.id)
    assert now.approved == ["Bash"] and now.denied == ["WebFetch"]
    store.close()
