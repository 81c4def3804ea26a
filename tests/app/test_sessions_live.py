"""The sessions screen on a PostgreSQL store: a request made on another host shows,
announced by LISTEN/NOTIFY (the app's poll timer is off in these tests, so nothing else
could bring it). How fast it shows is measured by ``tests/benchmarks/bench_timing.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import new_app, ready, screen_is, wait_for
from textual.widgets import OptionList

from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.core.config import Settings
from skilldeck.core.sessions import SessionStore


def _pending(screen: SessionsScreen) -> list[str]:
    pending = screen.query_one("#pending", OptionList)
    options = [pending.get_option_at_index(i) for i in range(pending.option_count)]
    return [option.id for option in options if option.id is not None]


async def test_request_from_another_host_shows_without_polling(
    skills_root: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", pg_url)
    other_host = SessionStore(settings=Settings(telemetry=False, sessions_url=pg_url))
    session = other_host.create(mode="approval", actor="agent")
    app = new_app([skills_root])
    assert app.poll_interval == 0  # only the store's announcement can bring the request
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("down", "f5")
        screen = await screen_is(pilot, SessionsScreen)
        await wait_for(
            pilot,
            lambda: screen.selected is not None and screen.selected.id == session.id,
            what=f"session {session.id} selected",
        )
        await wait_for(pilot, lambda: screen.listening, what="the live listener up")
        assert _pending(screen) == []
        other_host.check(session.id, "WebFetch", actor="agent")
        await wait_for(
            pilot,
            lambda: _pending(screen) == ["WebFetch"],
            what="the request from the other host listed",
            seen=lambda: _pending(screen),
        )
        await pilot.press("escape")
        await wait_for(
            pilot,
            lambda: (
                not [w for w in app.workers if w.group == "sessions-live" and not w.is_finished]
            ),
            what="the listener stopped with its screen",
        )
    other_host.close()
