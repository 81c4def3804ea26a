"""A line nested too deeply for the parser gets a JSON-RPC Parse error and the server
keeps serving, over stdio (a real ``skilldeck serve`` subprocess spoken to with raw
lines) and over HTTP (a real server on loopback)."""

from __future__ import annotations

import http.client
import json
import select
import signal
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import RawServer, make_home, start_http

from conftest import write_skill

DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
"""100,000 nested arrays: deeper than Python's recursion limit."""


def deep_request(ident: int, depth: int) -> str:
    """A ``tools/call`` whose arguments nest ``depth`` objects: valid JSON to Python's
    parser when ``depth`` is under its recursion limit, too deep for the SDK's."""
    arguments = '{"a":' * depth + "1" + "}" * depth
    return (
        f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
        f'"params":{{"name":"list_skills","arguments":{arguments}}}}}'
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write_skill(skills, "git-history", description="Read git history. Use for git logs.")
    return skills


def answer_to(raw: RawServer, line: str, timeout: float = 20) -> dict[str, Any]:
    """Send one raw line; the next line the server writes, as JSON."""
    assert raw.proc.stdin is not None and raw.proc.stdout is not None
    raw.proc.stdin.write(line + "\n")
    raw.proc.stdin.flush()
    ready, _, _ = select.select([raw.proc.stdout], [], [], timeout)
    assert ready, f"no answer to {line[:40]!r}… (server alive: {raw.proc.poll() is None})"
    reply: dict[str, Any] = json.loads(raw.proc.stdout.readline())
    return reply


def test_stdio_answers_a_parse_error_to_deep_json_and_keeps_serving(
    root: Path, tmp_path: Path
) -> None:
    raw = RawServer(root, make_home(tmp_path / "home"))
    try:
        assert "result" in raw.initialize()
        for line in (DEEP_ARRAY, deep_request(5, 100_000), deep_request(6, 500)):
            reply = answer_to(raw, line)
            assert reply["id"] is None and reply["error"]["code"] == -32700, reply
            assert "recursion limit" in reply["error"]["message"]
        assert "result" in raw.request(7, "tools/list", {}), "the server keeps serving"
        raw.proc.send_signal(signal.SIGTERM)
        assert raw.proc.wait(timeout=15) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
    assert raw.proc.stderr is not None
    assert "Traceback" not in raw.proc.stderr.read()


def post(port: int, token: str, body: str) -> tuple[int, dict[str, Any]]:
    """One POST to /mcp with the token: the status and the JSON answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    conn.request("POST", "/mcp", body=body.encode(), headers=headers)
    reply = conn.getresponse()
    text = reply.read().decode()
    conn.close()
    return reply.status, json.loads(text[text.index("{") :].splitlines()[0])


def test_http_answers_a_parse_error_to_deep_json_and_keeps_serving(
    root: Path, tmp_path: Path
) -> None:
    home = make_home(tmp_path / "home")
    proc, url = start_http(root, home)
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    token = (home / "mcp-token").read_text(encoding="utf-8").strip()
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "deep", "version": "1"},
        },
    }
    try:
        for body in (DEEP_ARRAY, deep_request(5, 100_000)):
            status, reply = post(port, token, body)
            assert status == 400 and reply["error"]["code"] == -32700, reply
        status, reply = post(port, token, json.dumps(initialize))
        assert status == 200 and "result" in reply
    finally:
        proc.terminate()
        proc.wait(timeout=30)
