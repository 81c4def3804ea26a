"""Test harness: a real ``skilldeck serve`` subprocess driven by the MCP SDK's own client.

The SDK client lives in a background thread with its own event loop, so synchronous tests
(and module-scoped fixtures) can share one server process without depending on how
pytest-asyncio scopes event loops.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp.client.stdio import StdioServerParameters

from mcp import Client

T = TypeVar("T")


def server_env(home: Path) -> dict[str, str]:
    """Environment for a server subprocess using the state folder ``home``."""
    env = {"SKILLDECK_HOME": str(home), "NO_COLOR": "1", "HOME": str(home / "user-home")}
    for key in ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def make_home(path: Path) -> Path:
    """A state folder with the embedding signal off (keeps server start-up fast)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "user-home").mkdir(exist_ok=True)
    (path / "config.toml").write_text("semantic = false\n", encoding="utf-8")
    return path


def serve_args(root: Path, *extra: str) -> list[str]:
    """Arguments of ``python -m skilldeck --root ROOT serve ...``."""
    return ["-m", "skilldeck", "--root", str(root), "serve", *extra]


def cli(home: Path, *args: str) -> str:
    """Run ``python -m skilldeck ARGS`` with the state folder ``home``; its stdout (it must
    succeed): the operator's CLI in another process."""
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(home),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def http_transport(url: str, home: Path, token: str | None = None) -> Any:
    """A streamable-HTTP client transport for ``url`` sending the server's bearer token
    (read from ``home``, where ``serve --http`` keeps it, unless ``token`` is given)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    token = token or (home / "mcp-token").read_text(encoding="utf-8").strip()
    headers = {"Authorization": f"Bearer {token}"}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


def start_http(
    root: Path,
    home: Path,
    host: str = "127.0.0.1",
    *extra: str,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[str], str]:
    """A ``serve --http HOST:0`` subprocess (``env``: more environment variables) and the
    URL it says it listens on."""
    proc = subprocess.Popen(
        [sys.executable, *serve_args(root, "--http", f"{host}:0", *extra)],
        env=server_env(home) | (env or {}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("HTTP server did not start")


class ServerClient:
    """An SDK :class:`mcp.Client` connected over stdio to a ``skilldeck serve`` process.

    Args:
        root: Skills root given to the server.
        home: SKILLDECK_HOME of the server.
        extra: More ``serve`` arguments.
        mode: The client's protocol negotiation (``auto`` or ``legacy``).
    """

    def __init__(self, root: Path, home: Path, *extra: str, mode: str = "auto") -> None:
        self.params = StdioServerParameters(
            command=sys.executable, args=serve_args(root, *extra), env=server_env(home)
        )
        self.mode = mode
        self.notifications: list[Any] = []
        self.client: Client | None = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)

    def start(self, timeout: float = 60.0) -> ServerClient:
        """Start the server and complete the protocol handshake."""
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("skilldeck serve did not become ready")
        if self.error is not None:
            raise RuntimeError(f"could not connect: {self.error!r}") from self.error
        return self

    def _main(self) -> None:
        asyncio.run(self._amain())

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.notifications.append(message)

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with Client(
                self.params,
                mode=self.mode,
                message_handler=self._on_message,
                read_timeout_seconds=60,
            ) as client:
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self.error = exc
        finally:
            self._ready.set()

    def run(self, action: Callable[[Client], Awaitable[T]], timeout: float = 60.0) -> T:
        """Run ``action(client)`` on the client's loop and return its result."""
        assert self._loop is not None and self.client is not None
        future = asyncio.run_coroutine_threadsafe(_call(action, self.client), self._loop)
        return future.result(timeout)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        """Call one tool."""
        return self.run(lambda c: c.call_tool(name, arguments or {}))

    def close(self) -> None:
        """Disconnect (closes the server's stdin: it exits on EOF)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


async def _call(action: Callable[[Client], Awaitable[T]], client: Client) -> T:
    return await action(client)


def text_of(result: types.CallToolResult) -> str:
    """The first text block of a tool result."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def error_code(result: types.CallToolResult) -> str:
    """The Skilldeck error code of an ``isError`` result."""
    assert result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    return str(data["error"]["code"])


def telemetry_events(home: Path, event: str) -> list[dict[str, Any]]:
    """Telemetry records of one kind written under ``home``."""
    found: list[dict[str, Any]] = []
    for path in sorted((home / "telemetry").glob("events-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("event") == event:
                found.append(record)
    return found


class RawServer:
    """A ``skilldeck serve`` process spoken to with raw JSON-RPC lines (signal tests)."""

    def __init__(self, root: Path, home: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *serve_args(root, *extra)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(home),
            text=True,
        )

    def request(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and read its response line."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("server closed stdout")
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == ident:
                return reply

    def notify(self, method: str) -> None:
        """Send one notification."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> dict[str, Any]:
        """The handshake-era ``initialize`` exchange."""
        reply = self.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.notify("notifications/initialized")
        return reply
