"""The one MCP client (:mod:`skilldeck.core.mcp_client`) against real peers.

* A server on the MCP SDK that speaks only 2026-07-28 (``initialize`` is "Method not
  found", its Skills methods exist only in that revision) is federated over stdio through
  ``skilldeck list`` and ``search``, and its skills load with every file verified.
* ``agentskills-mcp-server`` (a separate implementation of the Skills extension, on PyPI;
  it needs Python 3.12 or later) the same way, when ``SKILLDECK_AGENTSKILLS_SERVER`` names
  its executable or it is on the PATH.
* A handshake-only peer gets the 2025-11-25 handshake, over stdio and HTTP.
* A peer answering one byte per 0.2 s is cut at the deadline, over stdio and HTTP (its
  whole answer, or only its body): the deadline is wall clock, not per read, and local
  skills are listed while it is reported.
* A 100,000-deep JSON line on stdout is skipped, not a crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, write_skill
from skilldeck.core.config import Settings
from skilldeck.core.mcp_client import HttpServer, McpError, ServerSpec, connect
from skilldeck.core.remote import Federation, clear_cache

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MODERN_ONLY = FIXTURES / "skills_2026_server.py"
TRICKLE = FIXTURES / "trickle_peer.py"
DEADLINE = 1.5
"""Seconds given to a trickling peer (``timeout_s`` of its remote)."""


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Path]:
    """A remote's skills: ``invoices`` with a supporting file."""
    clear_cache()
    root = tmp_path / "team"
    write_skill(root, "invoices", description="Team invoice rules. Use when invoicing.")
    (root / "invoices" / "notes.md").write_text("Net 30.\n", encoding="utf-8")
    yield root
    clear_cache()


def _configure(home: Path, label: str, table: str) -> None:
    (home / "config.toml").write_text(
        f"semantic = false\n\n[remotes.{label}]\n{table}\n", encoding="utf-8"
    )


def _local(tmp_path: Path) -> Path:
    root = tmp_path / "local"
    write_skill(root, "git-workflow", description="Commit conventions. Use for commits.")
    return root


def _federates(capsys: pytest.CaptureFixture[str], local: Path, label: str) -> None:
    """``skilldeck list`` and ``search`` show ``LABEL:invoices`` beside the local skill."""
    code, out, err = run_cli(capsys, "--root", str(local), "list", "--format", "json")
    assert code == 0, err
    listed = json.loads(out)
    assert {s["name"] for s in listed["skills"]} == {"git-workflow", f"{label}:invoices"}
    assert listed["remotes"][0]["ok"], listed["remotes"]
    code, out, err = run_cli(capsys, "--root", str(local), "search", "invoice", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["name"] == f"{label}:invoices"


def test_a_2026_only_sdk_server_is_federated_over_stdio(
    tmp_path: Path, team: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = json.dumps([sys.executable, str(MODERN_ONLY), str(team)])
    _configure(isolated_home, "new", f"command = {command}\ntimeout_s = 30")
    _federates(capsys, _local(tmp_path), "new")
    server = [sys.executable, str(MODERN_ONLY), str(team)]
    federation = Federation(Settings(remotes={"new": {"command": server, "timeout_s": 30}}))
    loaded = federation.load("new:invoices", agent=False)
    assert loaded.data == (team / "invoices" / "SKILL.md").read_bytes()
    assert federation.read("new:invoices", "notes.md", agent=False)[2] == b"Net 30.\n"
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
    old_client = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    done = subprocess.run(
        server,
        input=json.dumps(old_client).encode() + b"\n",
        capture_output=True,
        timeout=60,
    )
    assert json.loads(done.stdout.splitlines()[0])["error"]["message"] == "Method not found"


CLIENT = {"name": "handshake-only", "version": "0"}


def _agentskills_server() -> str | None:
    return os.environ.get("SKILLDECK_AGENTSKILLS_SERVER") or shutil.which("agentskills-mcp-server")


@pytest.mark.skipif(
    _agentskills_server() is None,
    reason="agentskills-mcp-server is not installed (it needs Python >= 3.12: install it into "
    "a 3.12 venv with agentskills-fs and set SKILLDECK_AGENTSKILLS_SERVER to its executable)",
)
def test_agentskills_mcp_server_is_federated_over_stdio(
    tmp_path: Path, team: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "server.json"
    skills = [{"id": "invoices", "provider": "fs", "options": {"root": str(team)}}]
    config.write_text(json.dumps({"name": "asv", "skills": skills}), encoding="utf-8")
    command = [str(_agentskills_server()), "--config", str(config)]
    _configure(isolated_home, "asv", f"command = {json.dumps(command)}\ntimeout_s = 60")
    _federates(capsys, _local(tmp_path), "asv")
    federation = Federation(Settings(remotes={"asv": {"command": command, "timeout_s": 60}}))
    assert federation.read("asv:invoices", "notes.md", agent=False)[2] == b"Net 30.\n"


# ---------------------------------------------------------------------- the handshake

LEGACY_STDIO = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "server/discover":
        reply = {"error": {"code": -32601, "message": "Method not found"}}
    elif msg["method"] == "initialize":
        reply = {"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}}
    else:
        assert "_meta" not in msg.get("params", {})
        reply = {"result": {"tools": [{"name": "old_tool", "inputSchema": {}}]}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **reply}), flush=True)
"""


class LegacyHttp(BaseHTTPRequestHandler):
    """A streamable-HTTP server of the handshake era: a session from ``initialize``."""

    seen: list[tuple[str, str, str]] = []

    def log_message(self, *args: Any) -> None:
        return

    def _reply(self, status: int, body: dict[str, Any] | None, session: str = "") -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if session:
            self.send_header("Mcp-Session-Id", session)
        self.end_headers()
        self.wfile.write(data)

    def do_DELETE(self) -> None:
        self.seen.append(("DELETE", self.headers.get("Mcp-Session-Id", ""), ""))
        self._reply(200, None)

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        session = self.headers.get("Mcp-Session-Id", "")
        self.seen.append((msg["method"], session, self.headers.get("MCP-Protocol-Version", "")))
        if msg["method"] == "initialize":
            result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {}}
            self._reply(
                200,
                {"jsonrpc": "2.0", "id": msg["id"], "result": result},
                session="s-1",
            )
        elif session != "s-1":
            error = {"code": -32600, "message": "Bad Request: Missing session ID"}
            self._reply(400, {"jsonrpc": "2.0", "id": None, "error": error})
        elif "id" not in msg:
            self._reply(202, None)
        else:
            result = {"tools": [{"name": "old_tool", "inputSchema": {}}]}
            self._reply(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


def test_a_handshake_only_peer_gets_the_handshake_over_stdio_and_http() -> None:
    spec = ServerSpec("old", sys.executable, ["-c", LEGACY_STDIO])
    with connect(spec, 20) as client:
        assert client.version == "2025-11-25"
        assert client.pages("tools/list", "tools", 10)[0]["name"] == "old_tool"

    server = ThreadingHTTPServer(("127.0.0.1", 0), LegacyHttp)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
        with connect(HttpServer(url), 20) as client:
            assert client.version == "2025-11-25"
            assert client.pages("tools/list", "tools", 10)[0]["name"] == "old_tool"
    finally:
        server.shutdown()
        server.server_close()
    assert LegacyHttp.seen == [
        ("server/discover", "", "2026-07-28"),
        ("initialize", "", ""),
        ("notifications/initialized", "s-1", "2025-11-25"),
        ("tools/list", "s-1", "2025-11-25"),
        ("DELETE", "s-1", ""),
    ]


# ---------------------------------------------------------------------- deadlines


@pytest.fixture
def trickling_http(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a trickle peer (``head`` or ``body``: what it trickles)."""
    proc = subprocess.Popen(
        [sys.executable, str(TRICKLE), "http", "0.2", request.param],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    yield proc.stdout.readline().split()[-1]
    proc.kill()
    proc.wait(timeout=10)


@pytest.mark.parametrize("trickling_http", ["head", "body"], indirect=True)
def test_a_trickling_http_peer_is_cut_at_the_deadline(
    tmp_path: Path,
    trickling_http: str,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()
    with pytest.raises(McpError) as caught, connect(HttpServer(trickling_http), DEADLINE):
        pass
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < DEADLINE + 0.5

    _configure(isolated_home, "slow", f"url = {json.dumps(trickling_http)}\ntimeout_s = {DEADLINE}")
    started = time.monotonic()
    code, out, err = run_cli(capsys, "--root", str(_local(tmp_path)), "list", "--format", "json")
    took = time.monotonic() - started
    assert code == 0, err
    listed = json.loads(out)
    assert [s["name"] for s in listed["skills"]] == ["git-workflow"]
    assert listed["remotes"][0]["error"].startswith("timeout")
    assert took < DEADLINE + 1.0, f"skilldeck list took {took:.1f} s"


def test_a_trickling_stdio_peer_is_cut_at_the_deadline() -> None:
    table = {"command": [sys.executable, str(TRICKLE), "stdio", "0.2"], "timeout_s": DEADLINE}
    federation = Federation(Settings(remotes={"slow": table}))
    started = time.monotonic()
    (status,) = federation.listing().statuses
    assert time.monotonic() - started < DEADLINE + 0.5
    assert not status.ok and status.error.startswith("timeout")


DEEP_STDIO = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    print("[" * 100_000, flush=True)
    result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
    if msg["method"] == "tools/list":
        result = {"tools": [{"name": "deep_ok", "inputSchema": {}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def test_a_deeply_nested_line_is_skipped_not_a_crash() -> None:
    with connect(ServerSpec("deep", sys.executable, ["-c", DEEP_STDIO]), 20) as client:
        assert client.pages("tools/list", "tools", 10)[0]["name"] == "deep_ok"


def test_concurrent_listings_share_one_request_to_a_slow_remote(tmp_path: Path) -> None:
    """Four searches at once against a remote that takes a second per answer: one
    conversation with it, not four (each caller waits at most its deadline)."""
    from fake_remote import TOKEN, FakeRemote

    clear_cache()
    remote = FakeRemote()
    remote.add("invoices", "Team invoice rules. Use when invoicing.")
    remote.stall = 0.5
    (tmp_path / "token").write_text(TOKEN)
    table = {"url": remote.url, "token_file": str(tmp_path / "token"), "timeout_s": 5}
    try:
        threads = [
            threading.Thread(target=Federation(Settings(remotes={"team": table})).listing)
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert [m for m, _h in remote.requests] == ["server/discover", "skills/list"]
    finally:
        remote.close()
        clear_cache()
