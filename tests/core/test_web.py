"""The core's one bounded GET: a total deadline per fetch, and addresses checked after the
lookup. Real servers on 127.0.0.1 trickle their answers a byte at a time."""

from __future__ import annotations

import http.server
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_skill
from skilldeck.core.config import load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import load_skill
from skilldeck.core.store import LocalStore
from skilldeck.core.web import get, names_internal
from skilldeck.core.workspace import Workspace

DRIP = 0.2
"""Seconds between two bytes of a trickling answer."""
DEADLINE = 1.0
SLACK = 0.75
"""How late past the deadline a fetch may give up (a busy 2-core machine)."""


class _Trickle(http.server.BaseHTTPRequestHandler):
    """``/body``: headers at once, then 100 bytes one every DRIP seconds; ``/head``: the
    status line and headers themselves one byte every DRIP seconds; ``/fast``: at once."""

    def do_GET(self) -> None:
        head = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"
        try:
            if self.path == "/fast":
                self.wfile.write(head + b"x" * 100)
            elif self.path == "/head":
                self._drip(head + b"x" * 100)
            else:
                self.wfile.write(head)
                self._drip(b"x" * 100)
        except OSError:
            return

    def _drip(self, data: bytes) -> None:
        for byte in data:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(DRIP)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def trickle() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("path", ["/body", "/head"])
def test_a_trickling_server_is_cut_at_the_deadline(trickle: str, path: str) -> None:
    """The old timeout applied to each socket read: a byte every 0.2 s kept the fetch
    going for the whole 20 s of the answer."""
    start = time.monotonic()
    with pytest.raises(SkilldeckError) as caught:
        get(trickle + path, cap=10_000, timeout=DEADLINE)
    took = time.monotonic() - start
    assert caught.value.details.get("reason") == "deadline", caught.value.message
    assert caught.value.code is ErrorCode.EXECUTION_ERROR
    assert "no complete answer within 1s" in caught.value.message
    assert took < DEADLINE + SLACK, took


def test_a_prompt_server_is_answered_and_known_as_this_machine(trickle: str) -> None:
    answer = get(trickle + "/fast", cap=1000, timeout=DEADLINE)
    assert answer.data == b"x" * 100 and answer.internal


def test_public_only_refuses_this_machine_before_connecting(trickle: str) -> None:
    with pytest.raises(SkilldeckError) as caught:
        get(trickle + "/fast", cap=1000, public_only=True)
    assert caught.value.details.get("reason") == "internal_address"


@pytest.mark.parametrize(
    ("host", "internal"),
    [
        ("127.1", True),
        ("0x7f000001", True),
        ("2130706433", True),
        ("0177.0.0.1", True),
        ("[::ffff:127.0.0.1]", True),
        ("::ffff:10.1.2.3", True),
        ("169.254.169.254", True),
        ("fe80::1%eth0", True),
        ("0.0.0.0", True),
        ("LOCALHOST.", True),
        ("example.com", False),
        ("93.184.215.14", False),
        ("2606:4700::1111", False),
    ],
)
def test_how_a_host_is_spelled_does_not_hide_this_machine(host: str, internal: bool) -> None:
    assert names_internal(host) is internal


def test_instructions_url_gives_up_at_instruction_timeout_s(tmp_path: Path, trickle: str) -> None:
    root = tmp_path / "skills"
    write_skill(root, "slow", extra=f"instructions:\n  url: {trickle}/body\n")
    home = Path(os.environ["SKILLDECK_HOME"])
    (home / "config.toml").write_text(
        'instruction_hosts = ["127.0.0.1"]\ninstruction_timeout_s = 1\n', encoding="utf-8"
    )
    workspace = Workspace(load_settings(), [root], store=LocalStore.open())
    workspace.discover()
    skill = workspace.by_name("slow")
    assert skill is not None
    start = time.monotonic()
    with pytest.raises(SkilldeckError) as caught:
        load_skill(skill, store=workspace.store)
    assert time.monotonic() - start < DEADLINE + SLACK
    assert "no complete answer within 1s" in caught.value.message
