"""A deadline for a new HTTP connection's first request head.

uvicorn times out an idle keep-alive connection but never a new one whose request headers
trickle in, so a few hundred such sockets exhaust the server's file descriptors and normal
requests then fail. :class:`HeaderTimeoutH11` closes a connection whose first request is
not complete within :data:`HEADER_SECONDS`; bytes arriving meanwhile do not reset it.
Imported only when serving HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0
"""Time a new connection has to send its first complete request head."""


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the first request head.

    It relies on uvicorn's ``loop``, ``cycle`` and ``transport`` attributes (uvicorn 0.3x
    to 0.5x); a test drives it with a real slow client.
    """

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None:
            self._stop_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()

    def _stop_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
