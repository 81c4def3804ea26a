"""Pilot tests of the sessions screen: the pending queue and the mode seen through the
store, approve and deny, widening the mode only after a confirmation, ending a session."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptools import focused, new_app, painted, ready, screen_is, text_of, toast, wait_for
from rich.cells import cell_len
from textual.widgets import Input, OptionList, Static

from conftest import allowed_skill
from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.cli.main import main as cli_main
from skilldeck.core.config import Settings
from skilldeck.core.execution import execute
from skilldeck.core.sessions import SessionStore

BAD = "import sys\nsys.exit(3)\n"
"""A script that fails with exit status 3."""


def pending_ids(screen: SessionsScreen) -> list[str]:
    pending = screen.query_one("#pending", OptionList)
    options = [pending.get_option_at_index(i) for i in range(pending.option_count)]
    return [option.id for option in options if option.id is not None]  # not "nothing waiting"


async def open_sessions(pilot: object, session_id: str | None = None) -> SessionsScreen:
    """f5 from the main screen; waits until ``session_id`` (if given) is selected."""
    await pilot.press("down", "f5")  # type: ignore[attr-defined]
    screen = await screen_is(pilot, SessionsScreen)  # type: ignore[arg-type]
    if session_id is not None:
        await wait_for(
            pilot,  # type: ignore[arg-type]
            lambda: screen.selected is not None and screen.selected.id == session_id,
            what=f"session {session_id} selected",
        )
    return screen


async def pending_are(pilot: object, screen: SessionsScreen, expected: list[str]) -> None:
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: pending_ids(screen) == expected,
        what=f"pending {expected}",
        seen=lambda: pending_ids(screen),
    )


async def test_approvals_pending_queue_and_mode_seen_through_the_store(
    skills_root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot, session.id)
        # another process asks for two tools: the queue appears on the next poll
        assert store.check(session.id, "Bash", actor="agent").requires_approval
        assert store.check(session.id, "WebFetch", actor="agent").requires_approval
        app._poll_store()
        await pending_are(pilot, screen, ["Bash", "WebFetch"])
        screen.query_one("#pending", OptionList).focus()
        await focused(pilot, OptionList, "pending")
        await pilot.press("a")
        dialog = await screen_is(pilot, ConfirmDialog)
        question = text_of(dialog.query_one("#question", Static))
        assert question.startswith(f"Approve Bash in session {session.id}?")
        await pilot.press("y")
        await pending_are(pilot, screen, ["WebFetch"])
        assert store.get(session.id).approved == ["Bash"]
        await pilot.press("d")
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("y")
        await pending_are(pilot, screen, [])
        assert store.get(session.id).denied == ["WebFetch"]
        await pilot.press("m")  # approval -> permissive widens access: asks first
        await screen_is(pilot, ConfirmDialog)
        assert store.get(session.id).mode == "approval"
        await pilot.press("y")
        await wait_for(
            pilot, lambda: store.get(session.id).mode == "permissive", what="permissive mode"
        )
        await screen_is(pilot, SessionsScreen)
        await pilot.press("t", *"Edit", "enter")
        await pilot.click("#deny")
        await wait_for(pilot, lambda: "Edit" in store.get(session.id).denied, what="Edit denied")
        await pilot.press("n")
        await wait_for(
            pilot,
            lambda: len(store.list()) == 2 and app.session_id not in (None, session.id),
            what="a new session created and selected",
        )
        await pilot.press("k")
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: store.get(app.session_id or "").ended is not None,
            what="the new session ended",
        )
        audit = store.audit(session.id)
        operator = {(e.action, e.subject) for e in audit if e.actor == "operator"}
        assert len(operator) >= 3
    store.close()


async def test_sessions_confirm_widening_and_approve_exactly_the_highlighted(
    skills_root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="strict", actor="agent")
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot, session.id)
        await pilot.press("m")
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("n")  # cancelled: nothing changes
        await screen_is(pilot, SessionsScreen)
        assert store.get(session.id).mode == "strict"
        await pilot.press("m")
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("y")
        await wait_for(
            pilot, lambda: store.get(session.id).mode == "approval", what="approval mode"
        )
        await screen_is(pilot, SessionsScreen)
        store.check(session.id, "WebFetch", actor="agent")
        app._poll_store()
        await pending_are(pilot, screen, ["WebFetch"])
        # A typed tool does not override the request highlighted in the focused queue.
        screen.query_one("#tool", Input).value = "Read"
        pending = screen.query_one("#pending", OptionList)
        pending.focus()
        await focused(pilot, OptionList, "pending")
        await pilot.press("a")
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("y")
        await pending_are(pilot, screen, [])
        assert store.get(session.id).approved == ["WebFetch"]
        for tool in ("Bash(git push:*)", "Bash"):
            store.check(session.id, tool, actor="agent")
        app._poll_store()
        await pending_are(pilot, screen, ["Bash(git push:*)", "Bash"])
        pending.focus()
        await focused(pilot, OptionList, "pending")
        pending.highlighted = 1  # "Bash": approving it settles the git push request too
        await pilot.press("a")
        dialog = await screen_is(pilot, ConfirmDialog)
        assert "Bash(git push:*)" in text_of(dialog.query_one("#question", Static))
        await pilot.press("n")
        await screen_is(pilot, SessionsScreen)
        assert store.get(session.id).pending == ["Bash(git push:*)", "Bash"]
    store.close()


async def test_small_screen_tool_box_placeholder_fits(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot)
        tool = screen.query_one("#tool", Input)
        assert cell_len(tool.placeholder) <= tool.content_region.width
        assert tool.placeholder.startswith("tool")


async def test_an_ended_session_changes_no_more(skills_root: Path) -> None:
    """The old screen switched the mode of an ended session and wrote the audit row of a
    change that granted nothing; the write door refuses it as it does on the CLI."""
    store = SessionStore()
    session = store.create(mode="strict", actor="operator")
    store.end(session.id, actor="operator")
    before = store.audit(session.id)
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await open_sessions(pilot, session.id)
        await pilot.press("m")  # strict -> approval widens access: asks first
        await screen_is(pilot, ConfirmDialog)
        await pilot.press("y")
        assert "has ended" in await toast(pilot, "has ended")
    assert store.get(session.id).mode == "strict"
    assert store.audit(session.id) == before
    store.close()


async def test_the_audit_log_shows_how_each_run_ended(
    tmp_path: Path, exec_on: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit table listed ``script_exit`` rows without their exit codes: the operator
    saw that a run ended, not whether it failed. It shows them as ``session show`` does."""
    root = tmp_path / "skills"
    skill = allowed_skill(root, {"scripts/ok.py": "print('ok')\n", "scripts/bad.py": BAD})
    store = SessionStore()
    session = store.create(mode="strict", actor="agent")
    for script in ("scripts/ok.py", "scripts/bad.py"):
        execute(exec_on, skill, script, [], store=store, session_id=session.id)
    assert cli_main(["session", "show", session.id]) == 0
    cli_rows = [line for line in capsys.readouterr().out.splitlines() if "script_exit" in line]
    assert [row.split()[-2:] for row in cli_rows] == [["exit", "0"], ["exit", "3"]]
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot, session.id)
        audit = screen.query_one("#audit", Static)
        await wait_for(pilot, lambda: "script_exit" in text_of(audit), what="the audit rows")
        shown = painted(app, audit)
        assert re.findall(r"script_exit +(exit \d+) +demo/scripts/", shown) == ["exit 3", "exit 0"]
        assert shown.splitlines()[0].split()[3] == "outcome"
    store.close()
