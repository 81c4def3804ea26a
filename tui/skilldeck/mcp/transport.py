"""How the MCP server is run: stdio (one client per process) and streamable HTTP on a
loopback address (several clients, each its own session), and how it ends.

Ending: EOF, SIGTERM/SIGINT, or a client that closes its pipes (even mid-call) all end the
process with status 0 and no traceback; a call still blocked after a short grace is left
behind (:func:`exit_if_stuck`). Over stdio, lines are bounded and a line that is not a
valid JSON-RPC message gets an error response (see :func:`rejection`). The protocol
handlers are in :mod:`skilldeck.mcp.server`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.mcp.http_guard import HttpGuard, load_token, token_path
from skilldeck.mcp.log import log
from skilldeck.mcp.server import SkilldeckMCP
from skilldeck.mcp.service import SkillService

MAX_LINE_CHARS = 16 * 1024 * 1024
"""Longest JSON-RPC line read from stdin; a longer one is discarded (never held in memory
whole) and answered with an Invalid Request error."""
_OVERSIZED = object()


@dataclass(frozen=True)
class HttpLimits:
    """How many connection sessions the HTTP server keeps open, for how long idle, and how
    long a request may take to send its body.

    A handshake-era client holds a connection session (``Mcp-Session-Id``); one that sends
    nothing for ``idle_seconds`` is closed and its store session ended. While
    ``max_sessions`` are open a new one is refused with 503 (``Too many open sessions``)
    until one ends or idles out. 2026-era clients hold no connection: they share one
    session per bearer token. A request body not complete ``body_seconds`` after its head
    is answered 408 and its connection closed
    (:mod:`skilldeck.mcp.request_deadlines`).
    """

    max_sessions: int = 256
    idle_seconds: float = 900.0
    body_seconds: float = 30.0


class _StdinLines:
    """Async line iterator over stdin, fed by one daemon thread.

    The SDK's default reader blocks a worker thread that cancellation cannot interrupt and
    that interpreter shutdown waits for, so a signal would leave the process hanging until
    the client's next line. A daemon reader thread is simply left behind at exit.

    Lines are bounded (:data:`MAX_LINE_CHARS`), and a line that is not a JSON-RPC message
    the SDK accepts is answered here with a JSON-RPC error (the SDK drops such lines
    silently): Parse error for non-JSON, Invalid Request (``id`` null when the id itself
    is unusable) for the rest. Malformed notifications and responses get no answer, as
    JSON-RPC requires; they reach the SDK, which logs and drops them.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[str | object] | None = None
        self._reply: Any = None
        self._ready = asyncio.Event()

    def __aiter__(self) -> _StdinLines:
        return self

    def answer_with(self, write_stream: Any) -> None:
        """Send error responses for rejected lines on ``write_stream`` (the SDK's)."""
        self._reply = write_stream
        self._ready.set()

    def _read_line(self) -> str | object:
        try:
            line = self._stream.readline(MAX_LINE_CHARS)
            if len(line) < MAX_LINE_CHARS or line.endswith("\n"):
                return line
            while line and not line.endswith("\n"):
                line = self._stream.readline(MAX_LINE_CHARS)
            return _OVERSIZED
        except (OSError, ValueError):
            return ""

    def _start(self) -> asyncio.Queue[str | object]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | object] = asyncio.Queue(maxsize=64)

        def pump() -> None:
            while True:
                line = self._read_line()
                try:
                    asyncio.run_coroutine_threadsafe(queue.put(line), loop).result()
                except (RuntimeError, concurrent.futures.CancelledError):
                    return
                if line == "":
                    return

        threading.Thread(target=pump, name="skilldeck-stdin", daemon=True).start()
        return queue

    async def __anext__(self) -> str:
        if self._queue is None:
            self._queue = self._start()
        while True:
            item = await self._queue.get()
            if item == "":
                raise StopAsyncIteration
            line = item if isinstance(item, str) else ""
            if isinstance(item, str) and not item.strip():
                continue
            answer = rejection(line) if item is not _OVERSIZED else _too_long()
            if answer is None:
                return line
            await self._answer(answer)

    async def _answer(self, error: types.JSONRPCError) -> None:
        await self._ready.wait()
        log(f"rejected a message: {error.error.message}")
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._reply.send(SessionMessage(error))


def _too_long() -> types.JSONRPCError:
    return _jsonrpc_error(
        None,
        types.INVALID_REQUEST,
        f"Invalid Request: message longer than {MAX_LINE_CHARS} characters",
    )


def _jsonrpc_error(ident: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


def rejection(line: str) -> types.JSONRPCError | None:
    """The error response owed for one stdin line, or None when the line goes to the SDK
    (a valid message, or a malformed notification or response, which gets no answer).

    A line the SDK's own parser cannot read (not JSON, an escape naming an unpaired
    surrogate, nested deeper than its limit) gets a Parse error: the SDK would drop it
    unanswered. The id is checked before the SDK sees the line: the SDK reads a request
    whose id is not a string or an integer (null, 1.5, true, an object) as a notification
    and drops it.
    """
    try:
        valid = _sdk_reads(line)
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _SdkParseError) else "the line is not JSON"
        return _jsonrpc_error(None, types.PARSE_ERROR, f"Parse error: {reason}")
    if not isinstance(message, dict):
        return _jsonrpc_error(
            None, types.INVALID_REQUEST, "Invalid Request: expected one JSON object (no batches)"
        )
    if "id" not in message or ("method" not in message and message.keys() & {"result", "error"}):
        return None
    ident = message["id"]
    if isinstance(ident, bool) or not isinstance(ident, str | int):
        return _jsonrpc_error(
            None, types.INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
        )
    if valid:
        return None
    if message.get("jsonrpc") != "2.0":
        reason = 'jsonrpc must be "2.0"'
    elif not isinstance(message.get("method"), str):
        reason = "method must be a string"
    elif "params" in message and not isinstance(message["params"], dict):
        reason = "params must be an object"
    else:
        reason = "not a valid JSON-RPC request"
    return _jsonrpc_error(ident, types.INVALID_REQUEST, f"Invalid Request: {reason}")


class _SdkParseError(ValueError):
    """The SDK's parser cannot read a line as JSON (the message says why)."""


def _sdk_reads(line: str) -> bool:
    """Whether the SDK accepts ``line`` as a JSON-RPC message, read by its own parser.

    Raises:
        _SdkParseError: The parser cannot read the line as JSON at all.
    """
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        errors_of = getattr(exc, "errors", None)  # a pydantic ValidationError
        errors = errors_of() if callable(errors_of) else []
        unreadable = [e.get("msg", "") for e in errors if e.get("type") == "json_invalid"]
        if unreadable:
            raise _SdkParseError(unreadable[0]) from None
        return False
    return True


async def _watch_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _signum in signals:
            scope.cancel()
            return


async def serve_stdio(app: SkilldeckMCP) -> int:
    """Serve one client over stdin/stdout until EOF or SIGTERM/SIGINT."""
    from mcp.server.stdio import stdio_server

    # A private descriptor: interpreter shutdown flushes sys.stdin and would wait for the
    # lock the reader thread holds while blocked in readline().
    stdin = open(  # noqa: SIM115
        os.dup(sys.stdin.fileno()), encoding="utf-8", errors="replace", closefd=True
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch_signals, tg.cancel_scope)
        tg.start_soon(app.poll_changes)
        _warm_index(app.service)
        try:
            lines = _StdinLines(stdin)
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.answer_with(write_stream)
                await app.server.run(read_stream, write_stream, app.initialization_options())
        except (BaseExceptionGroup, OSError, anyio.BrokenResourceError) as exc:
            if not peer_gone(exc):
                raise
            _drop_stdout()
        tg.cancel_scope.cancel()
    return 0


_PEER_GONE = (
    BrokenPipeError,
    ConnectionResetError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


def peer_gone(exc: BaseException) -> bool:
    """True when ``exc`` (or every exception inside a group) only says the client went
    away: a closed pipe is the end of the conversation, not an error."""
    if isinstance(exc, BaseExceptionGroup):
        return all(peer_gone(inner) for inner in exc.exceptions)
    return isinstance(exc, _PEER_GONE)


def _drop_stdout() -> None:
    """Point stdout at /dev/null: the client closed it, and the interpreter's final flush
    must not print a BrokenPipeError on the way out."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _warm_index(service: SkillService) -> None:
    """Load (or build) the search index now, so the first search after ``initialize`` is
    answered at once; add the embedding signal (when configured) in a daemon thread.

    A daemon thread (not an anyio worker) so a signal during a long embedding run does
    not hold up the exit.
    """
    try:
        service.workspace.index("visible")
    except Exception as exc:
        log(f"search index build failed: {type(exc).__name__}: {exc}")
        return

    def upgrade() -> None:
        try:
            service.upgrade_index()
        except Exception as exc:
            log(f"semantic index failed: {type(exc).__name__}: {exc}")

    if service.settings.semantic:
        threading.Thread(target=upgrade, name="skilldeck-index", daemon=True).start()


async def serve_http(
    app: SkilldeckMCP,
    host: str,
    port: int,
    ready: Callable[[str], None] | None = None,
    token: str | None = None,
    limits: HttpLimits | None = None,
) -> int:
    """Serve streamable HTTP at ``http://host:port/mcp`` until SIGTERM/SIGINT, behind
    :class:`~skilldeck.mcp.http_guard.HttpGuard` (``token`` None: no bearer token)."""
    import uvicorn

    from skilldeck.mcp.request_deadlines import deadline_protocol

    limits = limits or HttpLimits()
    mcp_app = app.server.streamable_http_app(
        host=host,
        max_sessions=limits.max_sessions,
        session_idle_timeout=limits.idle_seconds,
    )
    guarded = HttpGuard(mcp_app, host, token)
    config = uvicorn.Config(
        guarded,
        host=host,
        port=port,
        http=deadline_protocol(limits.body_seconds),
        log_level="warning",
        lifespan="on",
        access_log=False,
    )

    class _Server(uvicorn.Server):
        """Leaves SIGTERM/SIGINT to the anyio receiver below: one shutdown path."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    server = _Server(config)

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _signum in signals:
                server.should_exit = True
                return

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.02)
        url = f"http://{_url_host(host)}:{_bound_port(server, port)}/mcp"
        if ready is not None:
            ready(url)

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_on_signal)
        tg.start_soon(app.poll_changes)
        _warm_index(app.service)
        tg.start_soon(announce)
        try:
            await server.serve()
        except SystemExit as exc:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR, f"cannot serve on {host}:{port} (see the message above)"
            ) from exc
        finally:
            tg.cancel_scope.cancel()
    return 0


def _announce_token() -> str:
    """The bearer token; shown on stderr only when it was just made."""
    token, created = load_token()
    if created:
        log(f"bearer token (shown once; kept in {token_path()}, mode 0600): {token}")
    else:
        log(f"clients send 'Authorization: Bearer <token>'; the token is in {token_path()}")
    return token


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _bound_port(server: Any, default: int) -> int:
    for listener in getattr(server, "servers", []) or []:
        for sock in getattr(listener, "sockets", []) or []:
            try:
                return int(sock.getsockname()[1])
            except (OSError, IndexError, TypeError, ValueError):
                continue
    return default


def run(
    service: SkillService,
    http: tuple[str, int] | None = None,
    *,
    auth: bool = True,
    limits: HttpLimits | None = None,
) -> int:
    """Run the server on stdio, or on streamable HTTP when ``http`` is given (with a
    bearer token unless ``auth`` is False, and ``limits`` on its sessions)."""
    app = SkilldeckMCP(service, transport="http" if http else "stdio")
    try:
        if http is None:
            if sys.stdin.isatty():
                log(
                    "waiting for an MCP client on stdin (this is a server for agents to start; "
                    "Ctrl+C stops it)"
                )
            with contextlib.suppress(SkilldeckError):  # logged; session calls retry later
                service.session_for("stdio", label=f"mcp stdio client (pid {os.getpid()})")
            code = anyio.run(serve_stdio, app)
        else:
            host, port = http
            token = _announce_token() if auth else None
            if not auth:
                log("WARNING: --no-auth: any local user or page that reaches the port can call it")

            def ready(url: str) -> None:
                log(f"listening on {url}")

            code = anyio.run(serve_http, app, host, port, ready, token, limits)
    except BaseExceptionGroup as group:
        inner = _single(group)
        if isinstance(inner, SkilldeckError | KeyboardInterrupt):
            raise inner from None
        raise
    finally:
        service.close()
    exit_if_stuck(code)
    return code


STUCK_GRACE_SECONDS = 3.0
"""How long a call still running after the client left may take before the process ends
without it."""


def exit_if_stuck(code: int, grace: float = STUCK_GRACE_SECONDS) -> None:
    """End the process now when a tool call is still blocked in a worker thread.

    A call that never returns (a read that blocks forever) would keep the interpreter
    waiting for its thread at exit, so the server would never stop. After ``grace``
    seconds it is left behind: the process exits with ``code`` (sessions are already
    ended and the store closed). Returns at once in the usual case.
    """
    deadline = time.monotonic() + grace
    while True:
        stuck = [
            thread
            for thread in threading.enumerate()
            if thread is not threading.main_thread() and not thread.daemon and thread.is_alive()
        ]
        if not stuck or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if not stuck:
        return
    log(f"{len(stuck)} call(s) still running at exit; stopping without them")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _single(group: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups."""
    while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
        group = group.exceptions[0]
    return group
