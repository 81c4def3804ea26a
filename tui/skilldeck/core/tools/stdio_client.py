"""A minimal MCP client for one job: list a stdio server's tools.

The core may not import the ``mcp`` SDK, and all it needs is ``tools/list``, so this speaks
the protocol directly: newline-delimited JSON-RPC 2.0 over the child's stdin/stdout,
``initialize`` (protocol version, empty capabilities, client info), the
``notifications/initialized`` notification, then ``tools/list`` following ``nextCursor``
until the last page. Every read has a deadline; the child (and its process group) is always
stopped afterwards. Failures raise :class:`McpQueryError` with a ``kind`` of ``start``,
``exit``, ``timeout`` or ``protocol``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.safe_text import for_terminal, is_safe_name

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "skilldeck", "version": "0.1.0"}
MAX_PAGES = 100
MAX_TOOLS = 10_000
MAX_LINE = 16 * 1024 * 1024
MAX_QUEUED = 64
"""Lines read ahead of the exchange (each at most :data:`MAX_LINE` bytes)."""
MAX_ERR_LINE = 2000
"""Characters kept of one stderr line of a server (its last 20 lines are kept)."""
TOOL_NAME_MAX = 200
"""Longest tool name accepted from a server; longer ones, and names with control or
bidirectional characters, are left out."""


class McpQueryError(Exception):
    """Listing a server's tools failed.

    Attributes:
        kind: ``start`` (could not run), ``exit`` (stopped early), ``timeout``, ``protocol``.
        stderr: The last lines the server wrote to stderr.
    """

    def __init__(self, kind: str, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.stderr = stderr


@dataclass(slots=True)
class ServerSpec:
    """How to start one stdio MCP server (an ``mcpServers`` entry of ``.mcp.json``)."""

    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def fingerprint(self) -> str:
        """Identity of the launch recipe (a changed recipe invalidates cached tools)."""
        return json.dumps([self.command, self.args, sorted(self.env.items())])


_EOF = object()


class _Channel:
    """Line reader with deadlines over a child's stdout (a thread feeds a queue)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        # Bounded: a server flooding stdout waits for the reader instead of filling memory.
        self.lines: queue.Queue[object] = queue.Queue(maxsize=MAX_QUEUED)
        self.stderr: deque[str] = deque(maxlen=20)
        self.closed = threading.Event()
        threading.Thread(target=self._pump_out, daemon=True).start()
        self._err_pump = threading.Thread(target=self._pump_err, daemon=True)
        self._err_pump.start()
        self.next_id = 0

    def _put(self, item: object) -> bool:
        """Queue ``item``, waiting while the queue is full; False once the channel closed."""
        while not self.closed.is_set():
            try:
                self.lines.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        try:
            for raw in iter(lambda: self.proc.stdout.readline(MAX_LINE), b""):  # type: ignore[union-attr]
                if not self._put(raw):
                    return
        except (OSError, ValueError):
            pass
        self._put(_EOF)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        try:
            for raw in iter(lambda: self.proc.stderr.readline(MAX_ERR_LINE), b""):  # type: ignore[union-attr]
                text = raw.decode("utf-8", "replace").rstrip()
                self.stderr.append(for_terminal(text[:MAX_ERR_LINE]))
        except (OSError, ValueError):
            pass

    def tail(self) -> str:
        return "\n".join(self.stderr)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            self._last_words()
            raise McpQueryError("exit", f"server closed its input ({exc})", self.tail()) from exc

    def _last_words(self) -> None:
        """Let a server that is exiting finish writing stderr, for the error message."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=0.5)
        self._err_pump.join(timeout=0.5)

    def request(self, method: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        self.next_id += 1
        request_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise McpQueryError("timeout", f"no answer to {method}", self.tail())
            try:
                item = self.lines.get(timeout=remaining)
            except queue.Empty as exc:
                raise McpQueryError("timeout", f"no answer to {method}", self.tail()) from exc
            if item is _EOF:
                self._last_words()
                code = self.proc.poll()
                raise McpQueryError(
                    "exit", f"server exited (code {code}) before answering {method}", self.tail()
                )
            assert isinstance(item, bytes)
            message = self._decode(item)
            if message is None:
                continue
            if "method" in message and "id" in message:
                self._answer_server_request(message)
                continue
            if message.get("id") != request_id:
                continue
            if "error" in message:
                error = message["error"]
                text = error.get("message") if isinstance(error, dict) else error
                raise McpQueryError("protocol", f"{method} failed: {text}", self.tail())
            result = message.get("result")
            if not isinstance(result, dict):
                raise McpQueryError("protocol", f"{method}: result is not an object")
            return result

    @staticmethod
    def _decode(raw: bytes) -> dict[str, Any] | None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            message = json.loads(text)
        except ValueError:
            return None  # stray log output on stdout: not ours to judge
        return message if isinstance(message, dict) else None

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        if message.get("method") == "ping":
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        else:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": "method not supported"},
                }
            )


def _start(spec: ServerSpec) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(spec.env)
    kwargs: dict[str, Any] = {}
    if sys.platform != "win32":
        kwargs["start_new_session"] = True
    try:
        return subprocess.Popen(
            [spec.command, *spec.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(spec.cwd) if spec.cwd else None,
            **kwargs,
        )
    except (OSError, ValueError) as exc:
        raise McpQueryError("start", f"cannot start {spec.command!r}: {exc}") from exc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close stdin, then terminate, then kill the server's process group."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin:
            proc.stdin.close()
    try:
        proc.wait(timeout=0.3)
    except subprocess.TimeoutExpired:
        posix = sys.platform != "win32"
        for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            with contextlib.suppress(OSError):
                if posix:
                    os.killpg(proc.pid, sig)
                else:
                    proc.kill()
            try:
                proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                continue
    for stream in (proc.stdout, proc.stderr):
        with contextlib.suppress(OSError, ValueError):
            if stream:
                stream.close()


def list_tools(spec: ServerSpec, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Start the server, run ``tools/list`` to the last page, stop it.

    Args:
        spec: How to start the server.
        timeout: Seconds for the whole exchange.

    Returns:
        The tool objects (``name``, ``description``, ``inputSchema`` …) as sent.

    Raises:
        McpQueryError: The server did not start, exited, timed out or broke the protocol.
    """
    deadline = time.monotonic() + timeout
    proc = _start(spec)
    channel: _Channel | None = None
    try:
        channel = _Channel(proc)
        channel.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
            deadline,
        )
        channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor else {}
            result = channel.request("tools/list", params, deadline)
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpQueryError("protocol", "tools/list: 'tools' is not a list")
            tools.extend(t for t in page if _usable(t))
            next_cursor = result.get("nextCursor")
            if not next_cursor or len(tools) >= MAX_TOOLS:
                break
            cursor = str(next_cursor)
        return tools[:MAX_TOOLS]
    finally:
        if channel is not None:
            channel.closed.set()
        _stop(proc)


def _usable(tool: object) -> bool:
    """A tool object with a name fit to show and match (see :data:`TOOL_NAME_MAX`)."""
    if not isinstance(tool, dict):
        return False
    name = tool.get("name")
    return isinstance(name, str) and is_safe_name(name, TOOL_NAME_MAX) and " " not in name
