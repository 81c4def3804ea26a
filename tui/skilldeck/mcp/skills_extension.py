"""The MCP Skills extension (``io.modelcontextprotocol/skills``, SEP-2640) on the server.

Declared in the server capabilities as ``extensions: {"io.modelcontextprotocol/skills":
{"directoryRead": true}}`` (next to ``resources``) in both protocol eras: the answer to
``server/discover``, and the handshake-era ``initialize`` result too, where the SDK's
2025-11-25 result model has no ``extensions`` and drops it (clients such as the MCP
Inspector initialize with 2025-11-25 and call the extension's methods only when they see
it). It adds three request methods to the SDK's low-level server
(:meth:`~mcp.server.Server.add_request_handler`):

* ``skills/list`` (paginated with ``cursor``/``nextCursor``): the entry of every skill
  served, each a complete manifest (``uri``, verbatim ``frontmatter``, ``resources`` with
  the ``sha256:`` digest and size of every file);
* ``skills/get`` (``uri`` of a SKILL.md): one entry; ``-32602`` when no skill is served at
  that URI;
* ``resources/directory/read`` (``uri`` of a directory, paginated): the direct children of a
  skill root, of one of its folders, or of an organizational prefix; ``-32602`` for a URI
  that is no such directory.

``resources/read`` of a ``skill://`` URI listed in an entry returns the exact bytes its
digest covers (:meth:`SkillsExtension.read`, which the server's ``resources/read`` handler
calls first); other ``skill://`` URIs keep the older reading of
:meth:`~skilldeck.mcp.service.SkillService.read_uri`.

What is served is what a model may load (enabled, valid, not hidden; nothing with
``skills_v1`` off); a skill shadowed by a same-named one of another root is served too, at
its own prefixed path (:mod:`skilldeck.core.loader.manifest` says how paths are made).
Results carry ``resultType: "complete"`` and the ``ttlMs``/``cacheScope`` hints the spec
requires.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from skilldeck.core.discovery import SKILL_FILE
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import (
    Child,
    SkillEntry,
    build_entry,
    children,
    exact_text,
    mime_of,
    prefix_children,
    skill_paths,
    split_uri,
)
from skilldeck.core.model import Skill
from skilldeck.core.remote import EXTENSION_ID, SCHEME
from skilldeck.core.safe_text import for_terminal
from skilldeck.mcp.log import log
from skilldeck.mcp.resources import ResourceContent, page_start
from skilldeck.mcp.service import SkillService

SETTINGS: dict[str, Any] = {"directoryRead": True}
PAGE_SIZE = 100
"""Entries per ``skills/list`` page and children per directory page."""
PAGE_SIZE_ENV = "SKILLDECK_SKILLS_PAGE_SIZE"
"""Environment variable overriding :data:`PAGE_SIZE` (a positive integer; tests use it)."""
TTL_MS = 60_000
"""Freshness hint of a listing or an entry (digests, not this, guard the content)."""
CACHE_SCOPE = "private"

Ctx = ServerRequestContext[Any, Any]


class GetSkillParams(types.RequestParams):
    """Params of ``skills/get``: ``uri``; ``name``, a usual mistake, is read only to say
    which parameter is expected (:func:`_wanted_uri`)."""

    uri: str | None = None
    name: str | None = None


class DirectoryReadParams(types.PaginatedRequestParams):
    """Params of ``resources/directory/read``."""

    uri: str


def page_size() -> int:
    """:data:`PAGE_SIZE`, or the positive integer in :data:`PAGE_SIZE_ENV`."""
    raw = os.environ.get(PAGE_SIZE_ENV, "").strip()
    if raw.isdigit() and 0 < int(raw) <= 10_000:
        return int(raw)
    return PAGE_SIZE


class SkillsExtension:
    """The extension's methods over one :class:`SkillService`.

    Args:
        service: Where the skills come from.
        refresh: Awaited before each request (picks up skills changed on disk).
        size: Entries per page (default: :func:`page_size`).
    """

    def __init__(
        self,
        service: SkillService,
        refresh: Callable[[], Awaitable[None]] | None = None,
        size: int | None = None,
    ) -> None:
        self.service = service
        self.refresh = refresh
        self.size = size or page_size()

    def register(self, server: Server[Any]) -> None:
        """Declare the extension on ``server`` and add its three methods."""
        server.extensions[EXTENSION_ID] = dict(SETTINGS)
        server.middleware.append(_declare_in_handshake)
        server.add_request_handler("skills/list", types.PaginatedRequestParams, self._list)
        server.add_request_handler("skills/get", GetSkillParams, self._get)
        server.add_request_handler("resources/directory/read", DirectoryReadParams, self._directory)

    # ------------------------------------------------------------------ the catalog side

    def paths(self) -> dict[str, Skill]:
        """Every served skill by its ``<skill-path>``, sorted (none with ``skills_v1`` off)."""
        if not self.service.settings.skills_v1:
            return {}
        return skill_paths(self.service.workspace.all_sorted())

    def list_page(self, cursor: str | None) -> dict[str, Any]:
        """One ``skills/list`` result. A skill whose folder cannot be served whole
        (confinement, limits) is left out and logged."""
        start = page_start(cursor)
        paths = list(self.paths().items())
        skills: list[dict[str, Any]] = []
        for skill_path, skill in paths[start : start + self.size]:
            try:
                skills.append(_build(skill_path, skill).to_dict())
            except SkilldeckError as exc:
                log(f"skills/list: {for_terminal(skill_path)} not served: {exc.message}")
        result: dict[str, Any] = {"resultType": "complete", "skills": skills}
        following = start + self.size
        if following < len(paths):
            result["nextCursor"] = str(following)
        return _cacheable(result)

    def entry(self, uri: str) -> SkillEntry:
        """The entry of the skill whose SKILL.md is at ``uri``.

        Raises:
            MCPError: INVALID_PARAMS when no skill is served there.
        """
        paths = self.paths()
        found = split_uri(uri, paths)
        if found is None or found[1] != SKILL_FILE:
            raise MCPError(types.INVALID_PARAMS, f"No skill is served at {_shown(uri)}")
        try:
            return _build(found[0], paths[found[0]])
        except SkilldeckError as exc:
            raise MCPError(
                types.INVALID_PARAMS, f"No skill is served at {_shown(uri)}: {exc.message}"
            ) from exc

    def get(self, uri: str) -> dict[str, Any]:
        """One ``skills/get`` result."""
        return _cacheable({"resultType": "complete", "skill": self.entry(uri).to_dict()})

    def directory(self, uri: str, cursor: str | None) -> dict[str, Any]:
        """One ``resources/directory/read`` result.

        Raises:
            MCPError: INVALID_PARAMS when ``uri`` is no directory of the skill namespace.
        """
        start = page_start(cursor)
        found = self._children(uri.rstrip("/"))
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"{_shown(uri)} is not a directory resource")
        page = found[start : start + self.size]
        result: dict[str, Any] = {
            "resultType": "complete",
            "resources": [_resource(child) for child in page],
        }
        if start + self.size < len(found):
            result["nextCursor"] = str(start + self.size)
        return result

    def _children(self, uri: str) -> list[Child] | None:
        paths = self.paths()
        found = split_uri(uri, paths)
        if found is not None:
            try:
                entry = _build(found[0], paths[found[0]])
            except SkilldeckError:
                return None
            return children(entry, found[1])
        if uri.startswith(SCHEME) and "/" not in uri[len(SCHEME) :]:
            return prefix_children(paths, uri[len(SCHEME) :])
        return None

    def read(self, uri: str) -> ResourceContent:
        """``resources/read`` of a ``skill://`` URI: a file listed in an entry is returned
        with the very bytes its digest covers (text when it is UTF-8, else a blob); any
        other URI is read the older way (:meth:`SkillService.read_uri`, which raises for
        what is not served)."""
        paths = self.paths()
        found = split_uri(uri, paths)
        if found is None or not found[1]:
            return self.service.read_uri(uri)
        skill_path, rel = found
        try:
            entry = _build(skill_path, paths[skill_path])
        except SkilldeckError:
            return self.service.read_uri(uri)
        data = entry.data(rel)
        if data is None:
            return self.service.read_uri(uri)
        text = exact_text(data)
        if rel != SKILL_FILE:
            self.service.workspace.telemetry.emit(
                "skill_resource_requested",
                name=entry.skill.name,
                resource=rel,
                size=len(data),
                binary=text is None,
                ok=True,
                actor="agent",
                source="mcp-resource",
            )
        mime = mime_of(rel)
        if text is None:
            return ResourceContent(uri, mime, data=data)
        return ResourceContent(uri, mime, text=text)

    # ------------------------------------------------------------------ the wire side

    async def _list(self, ctx: Ctx, params: types.PaginatedRequestParams) -> dict[str, Any]:
        await self._refresh()
        return await self._run("skills/list", lambda: self.list_page(params.cursor))

    async def _get(self, ctx: Ctx, params: GetSkillParams) -> dict[str, Any]:
        await self._refresh()
        uri = _wanted_uri(params)
        return await self._run("skills/get", lambda: self.get(uri))

    async def _directory(self, ctx: Ctx, params: DirectoryReadParams) -> dict[str, Any]:
        await self._refresh()
        return await self._run(
            "resources/directory/read", lambda: self.directory(params.uri, params.cursor)
        )

    async def _refresh(self) -> None:
        if self.refresh is not None:
            await self.refresh()

    @staticmethod
    async def _run(method: str, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``call`` in a worker thread; a bad cursor is INVALID_PARAMS, anything unexpected
        INTERNAL_ERROR (logged with its traceback)."""
        try:
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except MCPError:
            raise
        except SkilldeckError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message) from exc
        except Exception as exc:
            log(f"{method} failed:\n{traceback.format_exc()}")
            raise MCPError(types.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}") from exc


async def _declare_in_handshake(ctx: Ctx, call_next: CallNext) -> HandlerResult:
    """Put the extension back into a handshake-era ``initialize`` result's capabilities
    (the SDK's 2025-11-25 model drops ``extensions``, which that revision did not name)."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict):
            declared = capabilities.setdefault("extensions", {})
            if isinstance(declared, dict):
                declared[EXTENSION_ID] = dict(SETTINGS)
    return result


def _wanted_uri(params: GetSkillParams) -> str:
    """The ``uri`` of a ``skills/get`` request, or INVALID_PARAMS naming the parameter
    expected (a client that sent ``name`` learns what to send instead)."""
    if params.uri:
        return params.uri
    example = f"skill://{params.name}/SKILL.md" if params.name else "skill://pdf-forms/SKILL.md"
    got = f"; got 'name' ({_shown(params.name)})" if params.name else ""
    raise MCPError(
        types.INVALID_PARAMS,
        "skills/get expects the parameter 'uri': the skill's SKILL.md URI as skills/list "
        f"gives it (e.g. {_shown(example)}){got}",
    )


def _build(skill_path: str, skill: Skill) -> SkillEntry:
    """:func:`build_entry`, a file vanishing mid-read reported like the other refusals."""
    try:
        return build_entry(skill_path, skill)
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"cannot read the folder of {skill.name!r}: {exc}"
        ) from exc


def _cacheable(result: dict[str, Any]) -> dict[str, Any]:
    result["ttlMs"] = TTL_MS
    result["cacheScope"] = CACHE_SCOPE
    return result


def _resource(child: Child) -> dict[str, Any]:
    """A ``Resource`` object (wire form) of a directory child."""
    resource = types.Resource(uri=child.uri, name=child.name, mime_type=child.mime, size=child.size)
    return resource.model_dump(by_alias=True, mode="json", exclude_none=True)


def _shown(uri: str) -> str:
    """An untrusted URI for an error message: control characters escaped, cut short."""
    shown = for_terminal(uri[:300])
    return shown + ("…" if len(uri) > 300 else "")
