"""HTTP clients get sessions by what they hold, not by what they say: a 2026-era client's
session belongs to its bearer token, connection sessions are capped and end when idle, and
one client's slow calls cannot take the worker threads another client needs (a real server
on loopback with the SDK client, and the server's call path in process)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_harness import cli, http_transport, make_home, start_http

from conftest import write_skill
from mcp import Client
from skilldeck.mcp.server import CALLS_PER_CLIENT, SkilldeckMCP
from skilldeck.mcp.service import ToolOutput


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write_skill(skills, "git-history", description="Read git history. Use for git logs.")
    return skills


def check_bash(url: str, home: Path, token: str | None = None, mode: str = "auto") -> Any:
    """``check_tool Bash`` from a fresh SDK client; its structured answer."""

    async def go() -> Any:
        transport = http_transport(url, home, token)
        async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
            result = await client.call_tool("check_tool", {"tool": "Bash"})
            return result.structured_content

    return anyio.run(go)


def test_a_session_belongs_to_the_token_not_to_the_declared_name(
    root: Path, tmp_path: Path
) -> None:
    home = make_home(tmp_path / "home")
    bot_token = cli(home, "token", "add", "ci-bot").strip().splitlines()[-1]
    proc, url = start_http(root, home, "127.0.0.1", "--mode", "approval")
    try:
        first = check_bash(url, home)
        assert first["requires_approval"]
        cli(home, "--root", str(root), "session", "approve", first["session"], "Bash")
        again = check_bash(url, home)  # a new client with the same token and clientInfo
        assert again["session"] == first["session"] and again["allowed"]
        other = check_bash(url, home, bot_token)  # same clientInfo, another token
        assert other["session"] != first["session"]
        assert not other["allowed"] and other["requires_approval"]
        cli(home, "token", "revoke", "ci-bot")
        with pytest.raises(BaseException):  # noqa: B017 - 401 surfaces as a transport error
            check_bash(url, home, bot_token)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_declared_names_do_not_make_sessions(root: Path, tmp_path: Path) -> None:
    """Requests declaring 30 different client names make one session, not 30."""
    home = make_home(tmp_path / "home")
    proc, url = start_http(root, home, "127.0.0.1", "--mode", "approval")
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    token = (home / "mcp-token").read_text(encoding="utf-8").strip()
    sessions = set()
    try:
        for n in range(30):
            body = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {
                    "name": "check_tool",
                    "arguments": {"tool": "Bash"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": f"c{n}", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "check_tool",
            }
            conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
            reply = conn.getresponse()
            text = reply.read().decode()
            conn.close()
            assert reply.status == 200, text
            payload = json.loads(text[text.index("{") :].splitlines()[0])
            sessions.add(payload["result"]["structuredContent"]["session"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert len(sessions) == 1


def session_rows(home: Path, root: Path) -> list[dict[str, Any]]:
    out = cli(home, "--root", str(root), "session", "list", "--all", "--format", "json")
    rows = json.loads(out)
    return list(rows["sessions"] if isinstance(rows, dict) else rows)


def post(port: int, token: str, body: dict[str, Any], sid: str = "") -> tuple[int, str, str]:
    """One JSON-RPC POST (handshake era); status, the Mcp-Session-Id, the body text."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if sid:
        headers |= {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
    reply = conn.getresponse()
    text = reply.read().decode()
    conn.close()
    return reply.status, reply.getheader("mcp-session-id") or sid, text


def open_session(port: int, token: str) -> str:
    """A handshake-era connection session opened with ``token``: its Mcp-Session-Id."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "owner", "version": "1"},
        },
    }
    status, sid, _ = post(port, token, init)
    assert status == 200 and sid
    post(port, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


def quiet_client(port: int, token: str) -> tuple[int, str]:
    """A handshake-era client that asks one thing and then goes quiet (no GET stream): the
    status of its initialize, and its store session (empty when refused)."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "quiet", "version": "1"},
        },
    }
    status, sid, _ = post(port, token, init)
    if status != 200:
        return status, ""
    post(port, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    call = {"name": "check_tool", "arguments": {"tool": "Bash"}}
    _, _, text = post(
        port, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, sid
    )
    payload = json.loads(text[text.index("{") :].splitlines()[0])
    return status, str(payload["result"]["structuredContent"]["session"])


def test_connection_sessions_are_capped_and_idle_ones_end(root: Path, tmp_path: Path) -> None:
    """Two quiet clients fill a cap of 2 (a third gets 503); once they idle past
    --session-idle they are closed and their store sessions ended, and a new client gets
    in."""
    home = make_home(tmp_path / "home")
    extra = ("--mode", "approval", "--max-sessions", "2", "--session-idle", "1.5")
    proc, url = start_http(root, home, "127.0.0.1", *extra)
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    token = (home / "mcp-token").read_text(encoding="utf-8").strip()
    try:
        first, second = quiet_client(port, token), quiet_client(port, token)
        assert first[0] == second[0] == 200 and first[1] != second[1]
        assert quiet_client(port, token)[0] == 503
        time.sleep(3)
        assert quiet_client(port, token)[0] == 200
        rows = {r["id"]: r for r in session_rows(home, root)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert rows[first[1]].get("ended") and rows[second[1]].get("ended")


def test_one_clients_slow_calls_leave_threads_for_another(tmp_path: Path) -> None:
    """60 blocked calls of one client (more than the 40 worker threads) do not delay a
    second client's call: each client has CALLS_PER_CLIENT turns."""

    class Service:
        def instructions(self) -> str:
            return ""

    app = SkilldeckMCP(Service(), transport="http")  # type: ignore[arg-type]
    release = threading.Event()
    running = 0
    lock = threading.Lock()

    def slow() -> ToolOutput:
        nonlocal running
        with lock:
            running += 1
        release.wait(30)
        return ToolOutput({}, "slow")

    async def main() -> tuple[float, int]:
        async with anyio.create_task_group() as tg:
            for _ in range(60):
                tg.start_soon(app._answer, "http-client:hog", "run_skill_script", slow)
            await anyio.sleep(0.3)
            started = time.monotonic()
            await app._answer("http-client:other", "search_skills", lambda: ToolOutput({}, "ok"))
            took = time.monotonic() - started
            busy = running
            release.set()
        return took, busy

    took, busy = anyio.run(main)
    assert busy == CALLS_PER_CLIENT
    assert took < 1.0


def exchange(
    port: int, method: str, token: str, sid: str, body: dict[str, Any] | None = None
) -> tuple[int, str]:
    """One request on the connection session ``sid``: the status and the body's start (an
    event stream is not read to its end)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": sid,
        "MCP-Protocol-Version": "2025-06-18",
    }
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, "/mcp", body=json.dumps(body) if body else None, headers=headers)
    reply = conn.getresponse()
    text = reply.read(200).decode() if reply.status != 200 or method != "GET" else ""
    conn.close()
    return reply.status, text


def test_a_connection_session_answers_only_the_token_that_opened_it(
    root: Path, tmp_path: Path
) -> None:
    """Another client's token cannot call on a session, stream it or DELETE it: each gets
    404 as for an unknown session, and the owner's session keeps working."""
    home = make_home(tmp_path / "home")
    bot = cli(home, "token", "add", "ci-bot").strip().splitlines()[-1]
    proc, url = start_http(root, home, "127.0.0.1", "--mode", "approval")
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    owner = (home / "mcp-token").read_text(encoding="utf-8").strip()
    call = {"name": "check_tool", "arguments": {"tool": "Bash"}}
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}
    try:
        sid = open_session(port, owner)
        for method, body in (("POST", request), ("GET", None), ("DELETE", None)):
            status, text = exchange(port, method, bot, sid, body)
            assert status == 404, (method, status, text)
            assert "Session not found" in text
        status, text = exchange(port, "POST", owner, sid, request)
        assert status == 200 and '"id":7,"result"' in text
        assert exchange(port, "DELETE", owner, sid)[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
