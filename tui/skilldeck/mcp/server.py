"""The Model Context Protocol face of Skilldeck, on the SDK's low-level ``Server``.

The low-level server is used (not ``MCPServer``) because the tools need hand-written
input schemas with ``additionalProperties: false`` and results carrying both structured
and text content, including ``isError`` results with an error code.

Transports: stdio (one client per process) and streamable HTTP on a loopback address
(several clients; each gets its own session). Both protocol eras the SDK serves work:
handshake-era clients get ``notifications/resources/list_changed`` on their connection,
2026-era clients get it through ``subscriptions/listen``; both transports advertise
``resources.listChanged: true``. The tool set never changes, so
``notifications/tools/list_changed`` is never sent.

Ending: EOF, SIGTERM/SIGINT, or a client that closes its pipes (even mid-call) all end the
process with status 0 and no traceback; a call still blocked after a short grace is left
behind (:func:`exit_if_stuck`). Over stdio, lines are bounded and a line that is not a
valid JSON-RPC message gets an error response (see :func:`rejection`).

Sessions are optional: when the session store cannot be used (read-only or missing
``SKILLDECK_HOME``, full disk) skills are still served and session calls answer an error.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TextIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skilldeck import __version__
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.safe_text import for_terminal
from skilldeck.mcp.schemas import TOOLS, TOOLS_BY_NAME, validate_arguments
from skilldeck.mcp.service import SkillService, ToolOutput, log, resource_uri

SERVER_NAME = "skilldeck"
POLL_SECONDS = 1.0
_MAX_TRACKED_CONNECTIONS = 256

Ctx = ServerRequestContext[Any, Any]


NOTIFICATIONS = NotificationOptions(resources_changed=True, tools_changed=False)
"""What the server announces: resource (skill) list changes; the tool set is fixed."""


class _Server(Server[Any]):
    """The SDK's low-level server with :data:`NOTIFICATIONS` as the default.

    The streamable HTTP manager builds its own initialization options from the server's
    defaults (which say ``listChanged: false``), so the default itself is changed: both
    transports advertise, and send, the same notifications.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Initialization options; notifications default to :data:`NOTIFICATIONS`."""
        return super().create_initialization_options(
            notification_options or NOTIFICATIONS, experimental_capabilities, extensions
        )


class SkilldeckMCP:
    """The MCP server over one :class:`SkillService`.

    Args:
        service: The state and tool logic.
        transport: ``stdio`` or ``http`` (decides how clients map to sessions).
        poll_seconds: Interval of the background check for skills changed on disk.
    """

    def __init__(
        self, service: SkillService, transport: str = "stdio", poll_seconds: float = POLL_SECONDS
    ) -> None:
        self.service = service
        self.transport = transport
        self.poll_seconds = poll_seconds
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._legacy: OrderedDict[str, ServerSession] = OrderedDict()
        self.server: Server[Any] = _Server(
            SERVER_NAME,
            version=__version__,
            title="Skilldeck",
            description="Agent Skills with progressive disclosure, sessions and approvals.",
            instructions=service.instructions(),
            get_tool_input_schema=_tool_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_completion=self._complete,
            on_subscriptions_listen=self.listen,
        )

    def initialization_options(self) -> InitializationOptions:
        """Capabilities: resources list changes are announced; the tool set is fixed."""
        return self.server.create_initialization_options(NOTIFICATIONS)

    # ------------------------------------------------------------------ clients

    def client_key(self, ctx: Ctx) -> str:
        """Which client a request comes from (one session per client)."""
        if self.transport == "stdio":
            return "stdio"
        request = ctx.request
        headers = getattr(request, "headers", None)
        if headers is not None:
            session_header = headers.get("mcp-session-id")
            if session_header:
                return f"http-session:{session_header}"
        params = ctx.session.client_params
        if params is not None:
            info = params.client_info
            return f"http-client:{info.name}/{info.version}"
        return "http-anonymous"

    def _remember(self, ctx: Ctx, key: str) -> None:
        """Keep handshake-era connections to announce list changes on them.

        Such a connection lives as long as the client (a stdio pipe, an HTTP
        ``Mcp-Session-Id``), so its session in the store is ended when it closes. 2026-era
        connections last one request each and are not tracked.
        """
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        if key not in self._legacy and self.transport == "http":
            # The SDK exposes the per-connection cleanup stack only on the Connection,
            # which low-level handlers reach through the session (no public accessor).
            connection = getattr(ctx.session, "_connection", None)
            stack = getattr(connection, "exit_stack", None)
            if stack is not None:
                stack.callback(self._client_gone, key)
        self._legacy[key] = ctx.session
        self._legacy.move_to_end(key)
        while len(self._legacy) > _MAX_TRACKED_CONNECTIONS:
            self._legacy.popitem(last=False)

    def _client_gone(self, key: str) -> None:
        self._legacy.pop(key, None)
        try:
            self.service.end_client(key)
        except Exception as exc:
            log(f"could not end the session of {key}: {exc}")

    async def announce_change(self) -> None:
        """Tell clients the resource list (the skills) changed."""
        self.server.instructions = self.service.instructions()
        await self.bus.publish(ResourcesListChanged())
        for session in list(self._legacy.values()):
            try:
                await session.send_resource_list_changed()
            except Exception as exc:
                log(f"could not notify a client: {exc}")

    async def _refresh_inline(self) -> None:
        changed = await anyio.to_thread.run_sync(lambda: self.service.refresh(inline=True))
        if changed:
            await self.announce_change()

    async def poll_changes(self) -> None:
        """Background loop: pick up skills changed on disk and announce them."""
        while True:
            await anyio.sleep(max(self.poll_seconds, 20 * self.service.scan_seconds))
            try:
                changed = await anyio.to_thread.run_sync(self.service.refresh)
            except Exception as exc:
                log(f"rescan failed: {type(exc).__name__}: {exc}")
                continue
            if changed:
                await self.announce_change()

    # ------------------------------------------------------------------ tools

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=spec.name,
                title=spec.title,
                description=spec.description,
                input_schema=spec.input_schema,
                annotations=types.ToolAnnotations(
                    title=spec.title,
                    read_only_hint=spec.read_only,
                    destructive_hint=spec.name == "run_skill_script",
                    idempotent_hint=spec.name != "run_skill_script",
                    open_world_hint=False,
                ),
            )
            for spec in TOOLS
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = TOOLS_BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {for_terminal(repr(params.name[:100]))}",
                data={"tools": sorted(TOOLS_BY_NAME)},
            )
        arguments = params.arguments if params.arguments is not None else {}
        problems = validate_arguments(spec.input_schema, arguments)
        if problems:
            return error_result(
                SkilldeckError(
                    ErrorCode.INVALID_PARAM,
                    f"{spec.name}: " + "; ".join(problems),
                    tool=spec.name,
                    problems=problems,
                )
            )
        try:
            key = self.client_key(ctx)
            self._remember(ctx, key)
            await self._guard(self._refresh_inline)
            call = self._bind(spec.name, arguments, key)
            output = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except SkilldeckError as exc:
            return error_result(exc)
        except Exception as exc:
            log(f"{spec.name} failed:\n{traceback.format_exc()}")
            return error_result(
                SkilldeckError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{spec.name} failed unexpectedly: {type(exc).__name__}: {exc}",
                    tool=spec.name,
                )
            )
        return ok_result(output)

    def _bind(self, name: str, args: dict[str, Any], key: str) -> Callable[[], ToolOutput]:
        service = self.service
        if name == "search_skills":
            return lambda: service.search_skills(args["query"], int(args.get("limit", 3)))
        if name == "list_skills":
            budget = args.get("budget")
            return lambda: service.list_skills(budget)
        if name == "load_skill":
            return lambda: service.load_skill(
                args["name"], args.get("arguments", ""), client_key=key
            )
        if name == "read_skill_resource":
            return lambda: service.read_skill_resource(args["name"], args["path"], client_key=key)
        if name == "run_skill_script":
            return lambda: service.run_skill_script(
                args["name"], args["script"], list(args.get("args", [])), client_key=key
            )
        return lambda: service.check_tool(args["tool"], client_key=key)

    # ------------------------------------------------------------------ resources

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        await self._guard(self._refresh_inline)
        cursor = params.cursor if params is not None else None
        try:
            skills, following = self.service.resource_page(cursor)
        except SkilldeckError as exc:
            raise _protocol_error(exc) from exc
        resources = [
            types.Resource(
                uri=resource_uri(skill.name, skill.path.name),
                name=skill.name,
                title=skill.name,
                description=skill.brief or skill.description[:200],
                mime_type="text/markdown",
                size=skill.size or None,
            )
            for skill in skills
        ]
        return types.ListResourcesResult(resources=resources, next_cursor=following)

    async def _list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="skill://{name}/SKILL.md",
                    name="skill-file",
                    title="A skill's SKILL.md",
                    description="The whole SKILL.md of the skill named {name}.",
                    mime_type="text/markdown",
                ),
                types.ResourceTemplate(
                    uri_template="skill://{name}/{+path}",
                    name="skill-resource",
                    title="A file inside a skill folder",
                    description="A file at {path}, relative to the folder of the skill {name}.",
                ),
            ]
        )

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        await self._guard(self._refresh_inline)
        uri = str(params.uri)
        try:
            content = await anyio.to_thread.run_sync(
                lambda: self.service.read_uri(uri), abandon_on_cancel=True
            )
        except SkilldeckError as exc:
            raise _protocol_error(exc) from exc
        except Exception as exc:
            log(f"resources/read {uri} failed:\n{traceback.format_exc()}")
            raise MCPError(types.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}") from exc
        item: types.TextResourceContents | types.BlobResourceContents
        if content.data is not None:
            item = types.BlobResourceContents(
                uri=content.uri,
                mime_type=content.mime,
                blob=base64.b64encode(content.data).decode("ascii"),
            )
        else:
            item = types.TextResourceContents(
                uri=content.uri, mime_type=content.mime, text=content.text or ""
            )
        return types.ReadResourceResult(contents=[item])

    async def _complete(
        self, ctx: Ctx, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Complete ``{name}`` (skill names) and ``{path}`` (that skill's files)."""
        values: list[str] = []
        if isinstance(params.ref, types.ResourceTemplateReference):
            given = params.context.arguments if params.context and params.context.arguments else {}
            values = self.service.complete(params.argument.name, params.argument.value, given)
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:100], total=len(values), has_more=len(values) > 100
            )
        )

    @staticmethod
    async def _guard(step: Callable[[], Awaitable[None]]) -> None:
        try:
            await step()
        except Exception as exc:
            log(f"rescan failed: {type(exc).__name__}: {exc}")


def _tool_schema(name: str) -> dict[str, Any] | None:
    spec = TOOLS_BY_NAME.get(name)
    return spec.input_schema if spec else None


def ok_result(output: ToolOutput) -> types.CallToolResult:
    """A successful tool result: text first, then the embedded binary if any."""
    content: list[Any] = [types.TextContent(text=output.text)]
    if output.blob is not None:
        uri, mime, data = output.blob
        content.append(
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii")
                )
            )
        )
    return types.CallToolResult(content=content, structured_content=output.data)


def error_result(exc: SkilldeckError) -> types.CallToolResult:
    """An ``isError`` tool result carrying the error code, message and details."""
    error = exc.to_dict()
    text = f"Error [{exc.code.value}]: {exc.message}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"error": error},
        is_error=True,
    )


def _protocol_error(exc: SkilldeckError) -> MCPError:
    code = types.INTERNAL_ERROR
    if exc.code in (ErrorCode.INVALID_PARAM, ErrorCode.NOT_FOUND, ErrorCode.PERMISSION_DENIED):
        code = types.INVALID_PARAMS
    return MCPError(code, exc.message, data=exc.to_dict())


# ---------------------------------------------------------------------- transports


MAX_LINE_CHARS = 16 * 1024 * 1024
"""Longest JSON-RPC line read from stdin; a longer one is discarded (never held in memory
whole) and answered with an Invalid Request error."""
_OVERSIZED = object()


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

    The id is checked before the SDK sees the line: the SDK reads a request whose id is
    not a string or an integer (null, 1.5, true, an object) as a notification and drops it.
    """
    try:
        message = json.loads(line)
    except ValueError:
        return _jsonrpc_error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
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
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        return None
    except ValueError:
        pass
    if message.get("jsonrpc") != "2.0":
        reason = 'jsonrpc must be "2.0"'
    elif not isinstance(message.get("method"), str):
        reason = "method must be a string"
    elif "params" in message and not isinstance(message["params"], dict):
        reason = "params must be an object"
    else:
        reason = "not a valid JSON-RPC request"
    return _jsonrpc_error(ident, types.INVALID_REQUEST, f"Invalid Request: {reason}")


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
        service.index()
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
    app: SkilldeckMCP, host: str, port: int, ready: Callable[[str], None] | None = None
) -> int:
    """Serve streamable HTTP at ``http://host:port/mcp`` until SIGTERM/SIGINT."""
    import uvicorn

    starlette_app = app.server.streamable_http_app(host=host)
    config = uvicorn.Config(
        starlette_app, host=host, port=port, log_level="warning", lifespan="on", access_log=False
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


def run(service: SkillService, http: tuple[str, int] | None = None) -> int:
    """Run the server on stdio, or on streamable HTTP when ``http`` is given."""
    app = SkilldeckMCP(service, transport="http" if http else "stdio")
    try:
        if http is None:
            with contextlib.suppress(SkilldeckError):  # logged; session calls retry later
                service.session_for("stdio", label=f"mcp stdio client (pid {os.getpid()})")
            code = anyio.run(serve_stdio, app)
        else:
            host, port = http

            def ready(url: str) -> None:
                log(f"listening on {url}")

            code = anyio.run(serve_http, app, host, port, ready)
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
