"""Slow requests are cut: sockets that trickle their request head or body, or that were
refused and trickle a long body, cannot use up the server's connections while an
authenticated client is answered (a real server on loopback and real sockets)."""

from __future__ import annotations

import contextlib
import http.client
import json
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import make_home, start_http

from conftest import write_skill
from skilldeck.mcp.request_deadlines import HEADER_SECONDS

BODY_SECONDS = 1.0
"""The ``--body-timeout`` of the server under test."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """A server's port and bearer token."""
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Read git history. Use for git logs.")
    home = make_home(tmp_path / "home")
    proc, url = start_http(root, home, "127.0.0.1", "--body-timeout", str(BODY_SECONDS))
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    yield port, (home / "mcp-token").read_text(encoding="utf-8").strip()
    proc.kill()
    proc.wait(timeout=30)


def head(port: int, token: str = "", length: int = 100_000_000) -> bytes:
    """A POST head announcing a ``length``-byte JSON body (with ``token`` when given)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {length}\r\n\r\n{{"
    ).encode()


def search_took(port: int, token: str) -> float:
    """Seconds a 2026-era ``search_skills`` call takes to be answered (it must succeed)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "search_skills",
            "arguments": {"query": "git"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "search_skills",
    }
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
    reply = conn.getresponse()
    text = reply.read().decode()
    conn.close()
    assert reply.status == 200 and "git-history" in text, text
    return time.monotonic() - started


def trickle_until_closed(socks: list[socket.socket], limit: float) -> list[bytes]:
    """Send each socket a byte every 0.1 s until the server closes it (or ``limit``
    seconds pass); what each socket the server closed received."""
    selector = selectors.DefaultSelector()
    received = {sock: b"" for sock in socks}
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    closed: list[bytes] = []
    deadline = time.monotonic() + limit
    while received and time.monotonic() < deadline:
        for sock in received:
            with contextlib.suppress(OSError):
                sock.send(b" ")
        for key, _ in selector.select(0.1):
            sock = socks[socks.index(key.fileobj)]  # type: ignore[arg-type]
            try:
                chunk = sock.recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                chunk = b""
            if chunk:
                received[sock] += chunk
                continue
            closed.append(received.pop(sock))
            selector.unregister(sock)
    selector.close()
    return closed


def test_sockets_that_trickle_their_headers_are_cut(served: tuple[int, str]) -> None:
    port, _ = served
    slow = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.append(sock)
    started = time.monotonic()
    for sock in slow:  # a byte now and then does not keep a connection alive
        sock.sendall(b"X-Slow: 1\r\n")
    for sock in slow:
        assert sock.recv(1024) == b""  # closed by the server
        sock.close()
    assert time.monotonic() - started < HEADER_SECONDS + 5


def test_refused_sockets_that_trickle_a_body_are_closed(served: tuple[int, str]) -> None:
    """300 sockets without a token send a head announcing 100 MB and then trickle it:
    each gets its 401 and is closed at once, and an authenticated client is answered
    quickly meanwhile."""
    port, token = served
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(300)]
    for sock in socks:
        sock.sendall(head(port))
    took = search_took(port, token)
    received = trickle_until_closed(socks, limit=15.0)
    took = max(took, search_took(port, token))
    for sock in socks:
        sock.close()
    assert len(received) == len(socks)
    assert all(r.startswith(b"HTTP/1.1 401 ") for r in received)
    assert all(b"connection: close" in r.lower() for r in received)
    assert took < 5.0


def test_a_body_that_trickles_is_cut_at_the_body_deadline(served: tuple[int, str]) -> None:
    """With the token, a body sent a byte at a time is answered 408 and closed once
    --body-timeout has passed since its head (bytes arriving do not extend it)."""
    port, token = served
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(head(port, token, length=100_000))
    started = time.monotonic()
    received = trickle_until_closed([sock], limit=10.0)
    took = time.monotonic() - started
    sock.close()
    assert len(received) == 1 and received[0].startswith(b"HTTP/1.1 408 ")
    assert BODY_SECONDS - 0.2 < took < BODY_SECONDS + 3


def test_the_next_request_head_on_a_kept_connection_has_a_deadline(
    served: tuple[int, str],
) -> None:
    """After one answered request, a kept-alive connection that trickles the next head
    is closed within the head deadline."""
    port, token = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn.request("POST", "/mcp", body=b"{}", headers=headers)
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 406 and not reply.will_close  # no Accept header
    sock = conn.sock
    assert isinstance(sock, socket.socket)
    sock.sendall(b"POST /mcp HTTP/1.1\r\n")
    started = time.monotonic()
    received = trickle_slowly(sock, HEADER_SECONDS + 10)
    assert received == b"" and time.monotonic() - started < HEADER_SECONDS + 3
    sock.close()


def trickle_slowly(sock: socket.socket, limit: float) -> bytes | None:
    """Send a header line every 0.5 s until the server closes ``sock``: what it sent
    then, or None when ``limit`` seconds passed first."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            sock.sendall(b"X-Slow: 1\r\n")
            return sock.recv(65536)
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return b""
    return None


def test_a_long_event_stream_on_a_kept_connection_is_not_cut(served: tuple[int, str]) -> None:
    """The deadlines cover reading requests only: a GET event stream sent on a connection
    that already carried requests stays open past the head deadline."""
    port, token = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "listener", "version": "1"},
        },
    }
    conn.request("POST", "/mcp", body=json.dumps(init), headers=headers)
    reply = conn.getresponse()
    reply.read()
    headers |= {
        "Mcp-Session-Id": reply.getheader("mcp-session-id") or "",
        "MCP-Protocol-Version": "2025-06-18",
    }
    conn.request("GET", "/mcp", headers=headers)
    stream = conn.getresponse()
    assert stream.status == 200
    sock = conn.sock
    assert isinstance(sock, socket.socket)
    readable = selectors.DefaultSelector()
    readable.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + HEADER_SECONDS + 3
    while time.monotonic() < deadline:
        if readable.select(deadline - time.monotonic()):
            assert sock.recv(65536) != b"", "the stream was closed"
    readable.close()
    conn.close()
