"""The sessions screen on a PostgreSQL store: a request made on another host shows within
a second, announced by LISTEN/NOTIFY (the app's poll timer is off in these tests)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from apptools import build_root, new_app
from textual.pilot import Pilot
from textual.widgets import OptionList

from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.core.config import Settings
from skilldeck.core.sessions import SessionStore


async def _quiet(pilot: Pilot[int]) -> None:
    """Wait for the workers, except the long-lived ones (file watch, live listener)."""
    for _ in range(100):
        await pilot.pause()
        busy = [
            w
            for w in pilot.app.workers
            if not w.is_finished and w.group not in ("watch", "sessions-live")
        ]
        if not busy:
            return
        await asyncio.gather(*(w.wait() for w in busy), return_exceptions=True)


def _pending(screen: SessionsScreen) -> list[str]:
    pending = screen.query_one("#pending", OptionList)
    return [str(pending.get_option_at_index(i).id) for i in range(pending.option_count)]


async def test_request_from_another_host_shows_within_a_second(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", pg_url)
    other_host = SessionStore(settings=Settings(telemetry=False, sessions_url=pg_url))
    session = other_host.create(mode="approval", actor="agent")
    app = new_app([build_root(tmp_path / "skills")])
    async with app.run_test(size=(120, 40)) as pilot:
        await _quiet(pilot)
        await pilot.press("down", "f5")
        await _quiet(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert screen.selected is not None and screen.selected.id == session.id
        await pilot.pause(0.3)  # the listener is up
        started = time.monotonic()
        other_host.check(session.id, "WebFetch", actor="agent")
        while _pending(screen) != ["WebFetch"] and time.monotonic() - started < 5:
            await pilot.pause(0.02)
        assert _pending(screen) == ["WebFetch"]
        assert time.monotonic() - started < 1.0
        await pilot.press("escape")
        await _quiet(pilot)
    other_host.close()
