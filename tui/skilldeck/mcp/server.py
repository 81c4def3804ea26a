"""The Model Context Protocol face of Skilldeck, on the SDK's low-level ``Server``.

The low-level server is used (not ``MCPServer``) because the tools need hand-written
input schemas with ``additionalProperties: false`` and results carrying both structured
and text content, including ``isError`` results with an error code.

Transports: stdio (one client per process) and streamable HTTP on a loopback address
(several clients; each gets its own session). Both protocol eras the SDK serves work:
handshake-era clients get ``notifications/resources/list_changed`` and
``notifications/prompts/list_changed`` (every skill is also a prompt:
:mod:`skilldeck.mcp.prompts`) on their connection, 2026-era clients get them through
``subscriptions/listen``; both transports advertise ``listChanged: true`` for both.
Loading a skill with an allowed toolset mounts its tools for that client as
``skill-name.tool`` and sends ``notifications/tools/list_changed`` the same two ways
(:mod:`skilldeck.mcp.toolset_mounts`).

Running it (stdio, HTTP, ending cleanly) is :mod:`skilldeck.mcp.transport`.

Sessions are optional: when the session store cannot be used (read-only or missing
``SKILLDECK_HOME``, full disk) skills are still served and session calls answer an error.
"""

from __future__ import annotations

import base64
import contextlib
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skilldeck import __version__
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.safe_text import for_terminal
from skilldeck.mcp.http_guard import CLIENT_SCOPE_KEY
from skilldeck.mcp.log import log
from skilldeck.mcp.prompts import get_prompt, list_prompts
from skilldeck.mcp.schemas import TOOLS, TOOLS_BY_NAME, validate_arguments
from skilldeck.mcp.service import SkillService, ToolOutput, resource_uri
from skilldeck.mcp.skills_extension import SkillsExtension

SERVER_NAME = "skilldeck"
POLL_SECONDS = 1.0
_MAX_TRACKED_CONNECTIONS = 256
TOOL_CATEGORY = "skills"
"""``_meta.category`` of Skilldeck's own tools, so hosts can group them."""
TOOLSET_CATEGORY = "skill-toolset"
"""``_meta.category`` of a skill's mounted toolset tools (``_meta.skill`` names the skill)."""
CALLS_PER_CLIENT = 4
"""Tool calls one HTTP client may have running at once; more wait their turn, so one
client's slow script runs cannot take every worker thread another client's search needs."""

Ctx = ServerRequestContext[Any, Any]


NOTIFICATIONS = NotificationOptions(
    prompts_changed=True, resources_changed=True, tools_changed=True
)
"""What the server announces: resource and prompt (skill) list changes, and tool list
changes (toolset tools mounted for a client)."""


class _Server(Server[Any]):
    """The SDK's low-level server with :data:`NOTIFICATIONS` as the default.

    The streamable HTTP manager builds its own initialization options from the server's
    defaults (which say ``listChanged: false``), so the default itself is changed: both
    transports advertise, and send, the same notifications. The capabilities are the same
    in both eras (the Skills extension's own declaration: :mod:`.skills_extension`).
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

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's capabilities with ``resources.subscribe: false`` in both eras: no
        per-resource update is ever sent (only list changes), though the SDK would say
        true at 2026-07-28 because ``subscriptions/listen`` is served."""
        found = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        if found.resources is not None:
            found.resources.subscribe = False
        return found


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
        self._turns: OrderedDict[str, anyio.CapacityLimiter] = OrderedDict()
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
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_completion=self._complete,
            on_subscriptions_listen=self.listen,
        )
        # The MCP Skills extension: skills/list, skills/get, resources/directory/read.
        self.skills = SkillsExtension(service, lambda: self._guard(self._refresh_inline))
        self.skills.register(self.server)

    def initialization_options(self) -> InitializationOptions:
        """Capabilities: resource, prompt and tool list changes are announced."""
        return self.server.create_initialization_options(NOTIFICATIONS)

    # ------------------------------------------------------------------ clients

    def client_key(self, ctx: Ctx) -> str:
        """Which client a request comes from (one session per client).

        Over stdio the process is the client. Over HTTP, a connection of its own (an
        ``Mcp-Session-Id`` the server issued) is the client, within the token that opened
        it; a 2026-era request, which has no connection, belongs to the authenticated
        client of its bearer token (:mod:`skilldeck.mcp.http_guard`), and with
        ``--no-auth`` all such requests share one anonymous client. The ``clientInfo`` a
        client declares never decides it.
        """
        if self.transport == "stdio":
            return "stdio"
        request = ctx.request
        scope = getattr(request, "scope", None) or {}
        who = str(scope.get(CLIENT_SCOPE_KEY, "anonymous"))
        headers = getattr(request, "headers", None)
        session_header = headers.get("mcp-session-id") if headers is not None else None
        if session_header:
            return f"http-session:{who}:{session_header}"
        return f"http-client:{who}"

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
        self._turns.pop(key, None)
        try:
            self.service.end_client(key)
        except Exception as exc:
            log(f"could not end the session of {key}: {exc}")

    async def announce_change(self) -> None:
        """Tell clients the resource list (the skills) changed."""
        self.server.instructions = self.service.instructions()
        await self.bus.publish(ResourcesListChanged())
        await self.bus.publish(PromptsListChanged())
        for session in list(self._legacy.values()):
            try:
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
            except Exception as exc:
                log(f"could not notify a client: {exc}")

    async def _refresh_inline(self) -> None:
        changed = await anyio.to_thread.run_sync(lambda: self.service.refresh(inline=True))
        if changed:
            await self.announce_change()

    async def poll_changes(self) -> None:
        """Background loop: pick up skills changed on disk and toolsets the operator
        allowed since a client loaded their skill, and announce them."""
        while True:
            await anyio.sleep(max(self.poll_seconds, 20 * self.service.workspace.scan_seconds))
            try:
                changed = await anyio.to_thread.run_sync(self.service.refresh)
            except Exception as exc:
                log(f"rescan failed: {type(exc).__name__}: {exc}")
                continue
            if changed:
                await self.announce_change()
            await self._guard(self._mount_approved)

    async def _mount_approved(self) -> None:
        for key in await anyio.to_thread.run_sync(self.service.mount_approved):
            await self.announce_tools(key)

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
                    destructive_hint=spec.destructive,
                    idempotent_hint=spec.idempotent,
                    open_world_hint=False,
                ),
                _meta={"category": TOOL_CATEGORY},
            )
            for spec in TOOLS
        ]
        tools.extend(self._mounted_tools(self.client_key(ctx)))
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = TOOLS_BY_NAME.get(params.name)
        if spec is None and self.service.mounts.get(self.client_key(ctx), params.name):
            return await self._call_mounted(ctx, params)
        if spec is None:
            return error_result(
                SkilldeckError(
                    ErrorCode.NOT_FOUND,
                    f"Unknown tool: {for_terminal(repr(params.name[:100]))}; "
                    f"the tools are {', '.join(sorted(TOOLS_BY_NAME))}",
                    tools=sorted(TOOLS_BY_NAME),
                )
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
        key = self.client_key(ctx)
        self._remember(ctx, key)
        await self._guard(self._refresh_inline)
        mounted = self.service.mounts.names(key)
        service = self.service
        call = spec.handler
        result = await self._answer(key, spec.name, lambda: call(service, arguments, key))
        if self.service.mounts.names(key) != mounted:
            await self.announce_tools(key)
        return result

    async def _answer(
        self, key: str, name: str, call: Callable[[], ToolOutput]
    ) -> types.CallToolResult:
        """Run ``call`` in a worker thread when the client ``key`` has a turn free; its
        output, or the error as an ``isError`` result (an unexpected exception is logged
        with its traceback)."""
        try:
            async with self._turn(key):
                output = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except SkilldeckError as exc:
            return error_result(exc)
        except Exception as exc:
            log(f"{name} failed:\n{traceback.format_exc()}")
            return error_result(
                SkilldeckError(
                    ErrorCode.INTERNAL_ERROR,
                    f"{name} failed unexpectedly: {type(exc).__name__}: {exc}",
                    tool=name,
                )
            )
        return ok_result(output)

    def _turn(self, key: str) -> contextlib.AbstractAsyncContextManager[Any]:
        """The limiter of :data:`CALLS_PER_CLIENT` calls of one HTTP client (stdio has
        one client, which nothing else competes with: no limit beyond the thread pool)."""
        if self.transport == "stdio":
            return contextlib.nullcontext()
        limiter = self._turns.get(key)
        if limiter is None:
            limiter = self._turns[key] = anyio.CapacityLimiter(CALLS_PER_CLIENT)
        self._turns.move_to_end(key)
        idle = [k for k, v in self._turns.items() if v.borrowed_tokens == 0 and k != key]
        for stale in idle[: max(0, len(self._turns) - _MAX_TRACKED_CONNECTIONS)]:
            del self._turns[stale]
        return limiter

    def _mounted_tools(self, key: str) -> list[types.Tool]:
        """The client's toolset tools (``skill-name.tool``), run out of process."""
        return [
            types.Tool(
                name=mounted.name,
                title=mounted.name,
                description=mounted.tool.description or f"{mounted.name} (skill toolset)",
                input_schema=mounted.tool.input_schema,
                annotations=types.ToolAnnotations(
                    title=mounted.name, destructive_hint=True, open_world_hint=False
                ),
                _meta={"category": TOOLSET_CATEGORY, "skill": mounted.skill},
            )
            for mounted in self.service.mounts.tools(key)
        ]

    async def _call_mounted(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Call a mounted toolset tool in a child process (authorized again each call)."""
        key = self.client_key(ctx)
        self._remember(ctx, key)
        arguments = dict(params.arguments or {})
        return await self._answer(
            key,
            params.name,
            lambda: self.service.call_toolset_tool(params.name, arguments, client_key=key),
        )

    async def announce_tools(self, key: str) -> None:
        """Tell the client ``key`` its tool list changed (toolset tools were mounted)."""
        await self.bus.publish(ToolsListChanged())
        session = self._legacy.get(key)
        if session is not None:
            try:
                await session.send_tool_list_changed()
            except Exception as exc:
                log(f"could not notify a client: {exc}")

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
                lambda: self.skills.read(uri), abandon_on_cancel=True
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

    # ------------------------------------------------------------------ prompts

    async def _list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """Every enabled, model-visible skill as a prompt (none with ``skills_v1`` off)."""
        await self._guard(self._refresh_inline)
        cursor = params.cursor if params is not None else None
        try:
            return list_prompts(self.service, cursor)
        except SkilldeckError as exc:
            raise _protocol_error(exc) from exc

    async def _get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """A skill's instructions with ``$ARGUMENTS`` applied (a load in the session)."""
        await self._guard(self._refresh_inline)
        key = self.client_key(ctx)
        self._remember(ctx, key)
        try:
            return await anyio.to_thread.run_sync(
                lambda: get_prompt(self.service, params.name, params.arguments, key),
                abandon_on_cancel=True,
            )
        except SkilldeckError as exc:
            raise _protocol_error(exc) from exc
        except Exception as exc:
            log(f"prompts/get failed:\n{traceback.format_exc()}")
            raise MCPError(types.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}") from exc

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
