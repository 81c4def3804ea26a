"""Deadlines for reading an HTTP request: its head and its body.

uvicorn times out an idle keep-alive connection but never a request that trickles in: a
head sent a byte at a time, or a complete head whose body never finishes (a large
``Content-Length`` and a byte now and then). A few hundred such sockets exhaust the
server's file descriptors and normal requests then fail. :class:`DeadlineH11` closes a
connection whose request head is not complete within ``head_seconds`` (from the
connection, or from the end of the previous response), and answers 408 and closes one
whose body is not complete within ``body_seconds`` of its head. Bytes arriving meanwhile
do not reset either deadline. Imported only when serving HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0
"""Time a connection has to send a complete request head."""
BODY_SECONDS = 30.0
"""Default time a request has to send its whole body once its head is complete."""


class DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's head and body.

    It relies on uvicorn's ``loop``, ``cycle``, ``conn`` and ``transport`` attributes
    (uvicorn 0.3x to 0.5x); tests drive it with real slow clients. Use
    :func:`deadline_protocol` to choose the body deadline.
    """

    head_seconds = HEADER_SECONDS
    body_seconds = BODY_SECONDS
    _head_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    _timed: object | None = None
    """The request cycle whose head was seen last (None: none yet)."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._head_timer = self.loop.call_later(self.head_seconds, self._head_late)

    def handle_events(self) -> None:
        super().handle_events()
        cycle = self.cycle
        if cycle is None or self.transport.is_closing():
            return
        if cycle is not self._timed:  # a new request head is complete
            self._timed = cycle
            self._stop_head()
            if cycle.more_body:
                self._body_timer = self.loop.call_later(self.body_seconds, self._body_late)
        if not cycle.more_body:
            self._stop_body()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._waiting_for_head() and not self.transport.is_closing():
            # the next request head, on a kept-alive connection (none pipelined already)
            self._head_timer = self.loop.call_later(self.head_seconds, self._head_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head()
        self._stop_body()
        super().connection_lost(exc)

    def _stop_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _stop_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _waiting_for_head(self) -> bool:
        """True when no request is in progress: the next head has not arrived."""
        return self.cycle is None or self.cycle.response_complete

    def _head_late(self) -> None:
        self._head_timer = None
        if self._waiting_for_head() and not self.transport.is_closing():
            self.transport.close()

    def _body_late(self) -> None:
        """Answer 408 (unless the app answered already) and close the connection."""
        self._body_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or cycle is None:
            return
        if not cycle.response_started:
            cycle.disconnected = True  # the app's receive() reports a disconnect, send() a no-op
            cycle.message_event.set()
            self._send_408()
        self.transport.close()

    def _send_408(self) -> None:
        body = f"the request body did not arrive within {self.body_seconds:g} s\n".encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            for event in (
                h11.Response(status_code=408, headers=headers, reason=b"Request Timeout"),
                h11.Data(data=body),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:
            pass  # the connection is closed below either way


def deadline_protocol(body_seconds: float = BODY_SECONDS) -> type[DeadlineH11]:
    """The protocol class uvicorn should use, with ``body_seconds`` as the body deadline."""
    return type("DeadlineH11", (DeadlineH11,), {"body_seconds": body_seconds})
