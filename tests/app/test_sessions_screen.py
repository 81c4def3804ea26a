"""Pilot tests of the sessions screen: the pending queue and the mode seen through the
store, approve and deny, widening the mode only after a confirmation, ending a session."""

from __future__ import annotations

from pathlib import Path

from apptools import focused, new_app, ready, screen_is, text_of, wait_for
from rich.cells import cell_len
from textual.widgets import Input, OptionList, Static

from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.core.sessions import SessionStore


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
