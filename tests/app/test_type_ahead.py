"""Pilot tests of issue #25: type-ahead never runs a skill action nor answers a dialog,
dialogs that write ignore keys for their first moments, and a typed tool can be approved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from apptools import burst, focused, main_screen, new_app, ready, rows_for, screen_is, value_is
from apptools import wait_for as wait
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.dialogs.force_load import ForceLoadDialog
from skilldeck.app.dialogs.guarded import GuardedDialog
from skilldeck.app.dialogs.tool_decision import ToolDecisionDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.sessions import SessionStore

GUARD = 1.0
"""The key guard in these tests: long enough that keys queued before a dialog showed are
handled inside it even on a loaded machine."""


@pytest.fixture
def root(skills_root: Path) -> Path:
    for name in ("docker-compose", "docker-build", "docker-logs"):
        write_skill(skills_root, name, description=f"Docker {name[7:]}. Use when running docker.")
    write_skill(
        skills_root, "jekyll-site", description="Builds a Jekyll site. Use for jekyll blogs."
    )
    return skills_root


def registry_text(app: SkilldeckApp) -> str | None:
    path = app.workspace.settings.registry_file
    return path.read_text(encoding="utf-8") if path.exists() else None


async def guard_over(pilot: Pilot[int], dialog: GuardedDialog[Any]) -> None:
    """Wait until ``dialog`` answers keys."""
    await wait(pilot, lambda: not dialog.guarded, what=f"{type(dialog).__name__}'s guard over")


async def test_letters_typed_in_the_results_go_to_the_search(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        before = registry_text(app)
        await pilot.press(*"docker", "down", "down", *"jekyll", "e", "y", "l")
        search = main_screen(app).query_one("#search", SearchBox)
        await value_is(pilot, search, "dockerjekylleyl")
        assert isinstance(app.screen, MainScreen)
        await focused(pilot, SearchBox)
        assert registry_text(app) == before
        assert all(skill.enabled for skill in app.workspace.catalog.skills)
        # the function keys still act from the results list
        await pilot.press("ctrl+u", *"docker", "down", "f7")
        await screen_is(pilot, ConfirmDialog)


async def test_fast_burst_keeps_the_order_and_never_answers(root: Path) -> None:
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        keys = [*((c, c) for c in "docker"), ("down", None), ("down", None)]
        burst(app, [*keys, *((c, c) for c in "jekyll"), ("e", "e"), ("y", "y")])
        search = main_screen(app).query_one("#search", SearchBox)
        await value_is(pilot, search, "dockerjekylley")
        assert isinstance(app.screen, MainScreen)
        assert all(skill.enabled for skill in app.workspace.catalog.skills)


async def test_disable_confirm_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        before = registry_text(app)
        await pilot.press(*"docker")
        await rows_for(pilot, "docker")
        await pilot.press("down")
        await focused(pilot, ResultsList)
        burst(app, [("f7", None), ("y", "y")])
        dialog = await screen_is(pilot, ConfirmDialog)
        burst(app, [("enter", "\r")])
        await pilot.pause()
        assert app.screen is dialog
        assert registry_text(app) == before
        await guard_over(pilot, dialog)
        await pilot.press("y")
        await screen_is(pilot, MainScreen)
        await wait(
            pilot,
            lambda: "false" in json.dumps(json.loads(registry_text(app) or "{}")).lower(),
            what="the registry written",
        )
        current = main_screen(app).query_one(ResultsList).current
        assert current is not None and not current.enabled


async def on_a_result(pilot: Pilot[int]) -> None:
    """Launch finished, ``pdf`` typed, the focus on its first result."""
    await ready(pilot)
    await pilot.press(*"pdf")
    await rows_for(pilot, "pdf")
    await pilot.press("down")
    await focused(pilot, ResultsList)


async def test_force_load_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    store = SessionStore()
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_a_result(pilot)
        burst(app, [("f6", None), *((c, c) for c in "abc"), ("ctrl+s", None), ("enter", "\r")])
        dialog = await screen_is(pilot, ForceLoadDialog)
        text = dialog.query_one("#text", TextArea)
        await wait(pilot, lambda: "fill.py" in text.text, what="the text to load shown")
        assert dialog.query_one("#arguments", Input).value == ""
        assert store.list() == []
        await guard_over(pilot, dialog)
        await pilot.press(*"x.pdf")
        await wait(
            pilot,
            lambda: dialog.result is not None and dialog.result.arguments == "x.pdf",
            what="the text loaded with x.pdf",
        )
        await pilot.press("ctrl+s")
        await screen_is(pilot, MainScreen)
        await wait(pilot, lambda: len(store.list()) == 1, what="one session")
    [session] = store.list()
    assert session.active_skills == ["pdf-forms"]
    store.close()


async def test_keys_typed_before_force_load_count_when_typed_not_when_handled(
    root: Path,
) -> None:
    """A busy machine handles type-ahead late: keys typed before the dialog showed but
    handled after its guard ended (the focus then in the arguments box) still do nothing."""
    store = SessionStore()
    app = new_app([root], key_guard=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_a_result(pilot)
        typed = [events.Key(c, c) for c in "abc"]
        typed += [events.Key("ctrl+s", None), events.Key("enter", "\r")]
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        await guard_over(pilot, dialog)
        await focused(pilot, Input, "arguments")
        for event in typed:  # handled now, typed before the dialog showed
            app.post_message(event)
        await pilot.press("x")
        box = dialog.query_one("#arguments", Input)
        await value_is(pilot, box, "x")
        assert app.screen is dialog
        assert store.list() == []
    store.close()


async def test_quit_typed_before_a_dialog_showed_still_quits(root: Path) -> None:
    """Dropping keys typed before a dialog answers never drops the user's ``ctrl+q``."""
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_a_result(pilot)
        typed = events.Key("ctrl+q", None)
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        assert dialog.typed_while_guarded(typed)
        app.post_message(typed)
        await wait(pilot, lambda: app.return_code is not None, what="the app quitting")


async def open_sessions(pilot: Pilot[int], session_id: str) -> SessionsScreen:
    await pilot.press("down", "f5")
    screen = await screen_is(pilot, SessionsScreen)
    await wait(
        pilot,
        lambda: screen.selected is not None and screen.selected.id == session_id,
        what=f"session {session_id} selected",
    )
    return screen


async def test_policy_widening_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="strict", actor="agent")
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await open_sessions(pilot, session.id)
        burst(app, [("m", "m"), ("y", "y"), ("enter", "\r")])
        dialog = await screen_is(pilot, ConfirmDialog)
        await pilot.pause()
        assert app.screen is dialog
        assert store.get(session.id).mode == "strict"
        await guard_over(pilot, dialog)
        await pilot.press("enter")  # the focused button answers once the guard is over
        await wait(pilot, lambda: store.get(session.id).mode == "approval", what="approval mode")
    store.close()


async def test_enter_in_the_tool_box_offers_approve_or_deny(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    app = new_app([root], key_guard=GUARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot, session.id)
        tool = screen.query_one("#tool", Input)
        await pilot.press("t", *"Bash")
        await value_is(pilot, tool, "Bash")
        await pilot.press("enter")
        burst(app, [("a", "a")])
        dialog = await screen_is(pilot, ToolDecisionDialog)
        assert dialog.tool == "Bash"
        await pilot.pause()
        assert store.get(session.id).approved == []  # "a" came before the dialog showed
        await guard_over(pilot, dialog)
        await pilot.press("a")
        await screen_is(pilot, SessionsScreen)
        await wait(pilot, lambda: store.get(session.id).approved == ["Bash"], what="Bash approved")
        await value_is(pilot, tool, "")
        # deny works the same way, and escape decides nothing
        await pilot.press("t", *"WebFetch")
        await value_is(pilot, tool, "WebFetch")
        await pilot.press("enter")
        await guard_over(pilot, await screen_is(pilot, ToolDecisionDialog))
        await pilot.press("escape")
        await screen_is(pilot, SessionsScreen)
        await pilot.press("enter")
        await guard_over(pilot, await screen_is(pilot, ToolDecisionDialog))
        await pilot.press("d")
        await wait(
            pilot, lambda: store.get(session.id).denied == ["WebFetch"], what="WebFetch denied"
        )
    now = store.get(session.id)
    assert now.approved == ["Bash"] and now.denied == ["WebFetch"]
    store.close()
