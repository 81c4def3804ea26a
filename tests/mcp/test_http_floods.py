"""Sockets that trickle their request headers are cut, so they cannot use up the server's
file descriptors (a real server on loopback and real sockets)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import make_home, start_http

from conftest import write_skill
from skilldeck.mcp.slow_headers import HEADER_SECONDS


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Read git history. Use for git logs.")
    home = make_home(tmp_path / "home")
    proc, url = start_http(root, home)
    yield url, home
    proc.kill()
    proc.wait(timeout=30)


def test_sockets_that_trickle_their_headers_are_cut(served: tuple[str, Path]) -> None:
    url, _ = served
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
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
