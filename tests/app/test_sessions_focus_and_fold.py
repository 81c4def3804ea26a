"""Sessions screen: approve and deny act on the request looked at and name it before
writing; ended sessions are folded under the open ones (Pilot, a real session store)."""

from __future__ import annotations

from pathlib import Path

from apptools import focused, new_app, ready, screen_is, text_of, toast, wait_for
from textual.widgets import OptionList, Static

from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.screens.sessions_screen import ENDED_FOLD, SessionsScreen
from skilldeck.core.sessions import SessionStore


def ids(listing: OptionList) -> list[str | None]:
    return [listing.get_option_at_index(i).id for i in range(listing.option_count)]


async def test_deny_hits_the_request_looked_at_even_after_a_reload(skills_root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    for tool in ("Bash", "WebFetch"):
        store.check(session.id, tool, actor="agent")
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        app.session_id = session.id
        await pilot.press("f5")
        screen = await screen_is(pilot, SessionsScreen)
        pending = screen.query_one("#pending", OptionList)
        await wait_for(pilot, lambda: ids(pending) == ["Bash", "WebFetch"], what="two pending")
        await focused(pilot, OptionList, "session-list")
        await pilot.press("d")  # no request is looked at from the sessions list
        await toast(pilot, "Highlight the request in Pending")
        await focused(pilot, OptionList, "pending")
        assert store.get(session.id).pending == ["Bash", "WebFetch"]
        await pilot.press("down")
        await wait_for(pilot, lambda: pending.highlighted == 1, what="WebFetch highlighted")
        store.check(session.id, "Edit", actor="agent")  # another process: a reload
        app._poll_store()
        await wait_for(pilot, lambda: len(ids(pending)) == 3, what="the reload")
        assert pending.highlighted == 1
        await pilot.press("d")
        dialog = await screen_is(pilot, ConfirmDialog)
        question = text_of(dialog.query_one("#question", Static))
        assert question.startswith(f"Deny WebFetch in session {session.id}?")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: store.get(session.id).denied == ["WebFetch"], what="WebFetch denied"
        )
        assert store.get(session.id).pending == ["Bash", "Edit"]
    store.close()


async def test_ended_sessions_are_folded_under_the_open_ones(skills_root: Path) -> None:
    store = SessionStore()
    opened = store.create(actor="agent")
    ended = [store.create(actor="agent") for _ in range(3)]
    for session in ended:
        store.end(session.id, actor="agent")
    newest = store.create(actor="agent")
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f5")
        screen = await screen_is(pilot, SessionsScreen)
        listing = screen.query_one("#session-list", OptionList)
        await wait_for(
            pilot,
            lambda: ids(listing) == [newest.id, opened.id, ENDED_FOLD],
            what="open sessions, then one fold row",
            seen=lambda: ids(listing),
        )
        fold = listing.get_option_at_index(2).prompt
        assert "3 ended" in str(fold)
        await pilot.press("down", "down", "enter")
        expected = [newest.id, opened.id, ENDED_FOLD, *(s.id for s in reversed(ended))]
        await wait_for(
            pilot,
            lambda: sorted(map(str, ids(listing))) == sorted(map(str, expected)),
            what="the ended sessions unfolded",
            seen=lambda: ids(listing),
        )
        assert ids(listing)[:3] == [newest.id, opened.id, ENDED_FOLD]
        assert (
            screen.selected is not None and screen.selected.id == opened.id
        )  # the fold is no session
    store.close()
