"""The HTTP server refuses callers without the bearer token, and Host or Origin headers
that do not name it in any spelling of its address (a real server on loopback, a real
HTTP client, and the SDK client with and without the token)."""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp_harness import http_transport, make_home, serve_args, server_env, start_http

from conftest import write_skill
from mcp import Client
from skilldeck.mcp.http_guard import host_allowed

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write_skill(skills, "git-history", description="Read git history. Use for git logs.")
    return skills


@pytest.fixture
def server(root: Path, tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    home = make_home(tmp_path / "home")
    proc, url = start_http(root, home)
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    yield "127.0.0.1", port, home
    proc.terminate()
    proc.wait(timeout=30)


def post(port: int, headers: dict[str, str], host: str = "127.0.0.1") -> int:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    body = json.dumps(INIT)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    conn.request("POST", "/mcp", body=body, headers={**base, **headers})
    status = conn.getresponse().status
    conn.close()
    return status


def test_the_token_is_made_private_and_required(server: tuple[str, int, Path]) -> None:
    _, port, home = server
    token_file = home / "mcp-token"
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    token = token_file.read_text(encoding="utf-8").strip()
    host = {"Host": f"127.0.0.1:{port}"}
    assert post(port, host) == 401
    assert post(port, {**host, "Authorization": "Bearer wrong"}) == 401
    assert post(port, {**host, "Authorization": f"Bearer {token}"}) == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example:{port}"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example:{port}"},
        {"Host": "127.0.0.2:{port}"},
        {"Host": "127.0.0.1:1"},
    ],
)
def test_foreign_hosts_and_origins_are_refused_even_with_the_token(
    server: tuple[str, int, Path], headers: dict[str, str]
) -> None:
    _, port, home = server
    token = (home / "mcp-token").read_text(encoding="utf-8").strip()
    filled = {k: v.format(port=port) for k, v in headers.items()}
    assert post(port, {**filled, "Authorization": f"Bearer {token}"}) in (403, 421)


def test_the_sdk_client_works_with_the_token_and_not_without(
    server: tuple[str, int, Path],
) -> None:
    _, port, home = server
    url = f"http://127.0.0.1:{port}/mcp"

    async def names(transport: object) -> list[str]:
        async with Client(transport, mode="legacy") as client:  # type: ignore[arg-type]
            return [t.name for t in (await client.list_tools()).tools]

    assert "search_skills" in anyio.run(names, http_transport(url, home))
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own errors
        anyio.run(names, http_transport(url, home, token="not-the-token"))


@pytest.mark.parametrize(
    ("header", "bound", "ok"),
    [
        ("127.0.0.1:80", "127.0.0.1", True),
        ("LOCALHOST:80", "127.0.0.1", True),
        ("localhost:80", "localhost", True),
        ("[::1]:80", "::1", True),
        ("[0:0:0:0:0:0:0:1]:80", "::1", True),
        ("[0:0:0:0:0:0:0:1]:80", "LOCALHOST", True),
        ("127.0.0.2:80", "127.0.0.2", True),
        ("localhost:80", "127.0.0.2", False),
        ("evil.example:80", "LOCALHOST", False),
        ("evil.example:80", "0:0:0:0:0:0:0:1", False),
        ("127.0.0.1", "127.0.0.1", False),
        ("127.0.0.1:81", "127.0.0.1", False),
        ("127.0.0.1:x", "127.0.0.1", False),
    ],
)
def test_every_spelling_of_the_bound_address(header: str, bound: str, ok: bool) -> None:
    assert host_allowed(header, bound, 80) is ok


def test_no_auth_is_an_explicit_choice_with_a_warning(root: Path, tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, *serve_args(root, "--http", "127.0.0.1:0", "--no-auth")],
        env=server_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not any("listening on" in line for line in lines):
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        port = int(lines[-1].rsplit(":", 1)[1].split("/", 1)[0])
        assert post(port, {"Host": f"127.0.0.1:{port}"}) == 200
        assert post(port, {"Host": "evil.example"}) == 421  # the Host check still holds
        assert not (home / "mcp-token").exists()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert any("WARNING: --no-auth" in line for line in lines)
