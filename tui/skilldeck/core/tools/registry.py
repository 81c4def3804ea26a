"""The tool registry: every known tool, gathered from all sources, and a skill's view of it.

Sources, later ones adding to earlier ones:

1. the built-in preset :data:`~skilldeck.core.tools.preset.BUILTIN_TOOLS` (common agent
   tools), unless ``settings.builtin_tools`` is false or the tools file says
   ``builtin = false``;
2. the tools file (``settings.tools_path``, see :mod:`skilldeck.core.tools.preset`);
3. the tools of the stdio MCP servers of a ``.mcp.json`` (``settings.mcp_config``, else
   the nearest one from the working directory up to the project root; see
   :mod:`skilldeck.core.tools.mcp_config`). Servers are only started on demand
   (:meth:`ToolRegistry.refresh_mcp`, or ``load(..., query_missing=True)``; the CLI does
   the latter only for a configured ``mcp_config``, never for a project file, which may
   come from an untrusted checkout); their answers are cached with a timestamp
   (:class:`~skilldeck.core.tools.mcp_servers.McpCache`). A tool ``t`` of server ``s`` is
   known as ``s.t`` and, unless another source has that name, as ``t``.

Diagnostic codes raised here: ST103 server failed to start, ST104 server exited or broke
the protocol, ST105 server timed out, ST106 server not queried yet (plus those of the
tools file and ``.mcp.json`` it read).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.mcp_client import ServerSpec
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.sessions.model import split_tool
from skilldeck.core.tools.mcp_config import find_mcp_config, read_mcp_config
from skilldeck.core.tools.mcp_servers import McpCache, query_server
from skilldeck.core.tools.model import McpServerStatus, ToolAvailability, ToolInfo, ToolStatus
from skilldeck.core.tools.preset import BUILTIN_TOOLS, read_tools_file

_KIND_CODE = {"start": "ST103", "timeout": "ST105"}
"""Diagnostic code by failure kind; any other kind (exited, refused, bad answer) is ST104."""


class ToolRegistry:
    """All known tools and the diagnostics found while gathering them.

    Build with :meth:`load`; ask with :meth:`available`, :meth:`resolve`,
    :meth:`availability`.
    """

    def __init__(self, settings: Settings, mcp_config: Path | None = None) -> None:
        self.settings = settings
        self.mcp_config = mcp_config
        self.servers: list[ServerSpec] = []
        self.mcp_status: dict[str, McpServerStatus] = {}
        self.tools: dict[str, ToolInfo] = {}
        self.diagnostics: list[Diagnostic] = []
        self._base_diagnostics: list[Diagnostic] = []
        self._file_tools: list[ToolInfo] = []
        self._hidden: set[str] = set()
        self._builtin = settings.builtin_tools
        self._cache = McpCache()

    @classmethod
    def load(
        cls,
        settings: Settings | None = None,
        cwd: Path | None = None,
        *,
        query_missing: bool = False,
        timeout: float = 10.0,
    ) -> ToolRegistry:
        """Gather tools from the preset, the tools file and cached MCP answers.

        Args:
            settings: Settings (loaded when omitted).
            cwd: Where to look for ``.mcp.json`` (default: the working directory).
            query_missing: Query MCP servers that have no cached answer yet.
            timeout: Seconds per MCP server query.
        """
        settings = settings or load_settings()
        registry = cls(settings, find_mcp_config(settings, cwd))
        registry._read_tools_file()
        if registry.mcp_config is not None:
            registry.servers, diags = read_mcp_config(registry.mcp_config)
            registry._base_diagnostics.extend(diags)
        registry._load_cache()
        if query_missing:
            missing = [s.name for s in registry.servers if s.name not in registry.mcp_status]
            if missing:
                registry.refresh_mcp(missing, timeout=timeout)
                return registry
        registry._rebuild()
        return registry

    def _read_tools_file(self) -> None:
        found = read_tools_file(self.settings.tools_path)
        if found.builtin_off:
            self._builtin = False
        self._hidden.update(found.hidden)
        self._file_tools.extend(found.tools)
        self._base_diagnostics.extend(found.diagnostics)

    def _load_cache(self) -> None:
        if self.mcp_config is None:
            return
        entries = self._cache.load()
        for spec in self.servers:
            entry = entries.get(McpCache.key(self.mcp_config, spec.name))
            if not isinstance(entry, dict) or entry.get("fingerprint") != spec.fingerprint():
                continue
            tools = entry.get("tools")
            descriptions = entry.get("descriptions")
            self.mcp_status[spec.name] = McpServerStatus(
                name=spec.name,
                queried_at=float(entry.get("queried_at") or 0) or None,
                tools=[str(t) for t in tools] if isinstance(tools, list) else [],
                descriptions=descriptions if isinstance(descriptions, dict) else {},
                error=entry.get("error"),
                kind=entry.get("kind"),
            )

    def refresh_mcp(
        self, servers: list[str] | None = None, timeout: float = 10.0
    ) -> list[McpServerStatus]:
        """Query MCP servers now (all, or the named ones), cache and apply the answers."""
        chosen = [s for s in self.servers if servers is None or s.name in servers]
        if chosen:
            with ThreadPoolExecutor(max_workers=min(4, len(chosen))) as pool:
                results = list(pool.map(lambda s: query_server(s, timeout), chosen))
            for status in results:
                self.mcp_status[status.name] = status
            self._store_cache(chosen)
        self._rebuild()
        return [self.mcp_status[s.name] for s in chosen]

    def _store_cache(self, specs: list[ServerSpec]) -> None:
        if self.mcp_config is None:
            return
        entries = self._cache.load()
        for spec in specs:
            status = self.mcp_status[spec.name]
            entries[McpCache.key(self.mcp_config, spec.name)] = {
                "fingerprint": spec.fingerprint(),
                "queried_at": status.queried_at,
                "tools": status.tools,
                "descriptions": status.descriptions,
                "error": status.error,
                "kind": status.kind,
            }
        self._cache.save(entries)

    def _rebuild(self) -> None:
        tools: dict[str, ToolInfo] = {}

        def add(info: ToolInfo) -> None:
            if info.name not in tools:
                hidden = info.hidden or info.name in self._hidden
                tools[info.name] = ToolInfo(info.name, info.source, hidden, info.description)

        if self._builtin:
            for name in BUILTIN_TOOLS:
                add(ToolInfo(name, "preset"))
        for info in self._file_tools:
            tools.pop(info.name, None)
            add(info)
        diags = list(self._base_diagnostics)
        bare: list[ToolInfo] = []
        for spec in self.servers:
            status = self.mcp_status.get(spec.name)
            where = self.mcp_config
            if status is None:
                diags.append(
                    Diagnostic(
                        "ST106",
                        Severity.INFO,
                        f"MCP server {spec.name!r} not queried yet",
                        path=where,
                    )
                )
                continue
            if status.error:
                diags.append(
                    Diagnostic(
                        _KIND_CODE.get(status.kind or "", "ST104"),
                        Severity.WARNING,
                        f"MCP server {spec.name!r}: {status.error}",
                        path=where,
                    )
                )
            source = f"mcp:{spec.name}"
            for tool in status.tools:
                text = str(status.descriptions.get(tool, ""))
                add(ToolInfo(f"{spec.name}.{tool}", source, description=text))
                bare.append(ToolInfo(tool, source, description=text))
        for info in bare:
            add(info)
        self.tools = tools
        self.diagnostics = diags

    def available(self) -> dict[str, ToolInfo]:
        """Every known tool by name, hidden ones included (flagged ``hidden``)."""
        return dict(self.tools)

    def names(self, include_hidden: bool = False) -> set[str]:
        """Names of usable tools (for ``SearchIndex.search(available_tools=...)``)."""
        return {n for n, t in self.tools.items() if include_hidden or not t.hidden}

    def resolve(self, name: str) -> ToolInfo | None:
        """The tool a skill's reference means (``Bash(git:*)`` -> ``Bash``, ``mcp__s__t``
        -> ``s.t``; case-insensitive fallback), or None."""
        base = split_tool(name)[0]
        found = self.tools.get(base)
        if found is not None:
            return found
        folded = base.casefold()
        for key, info in self.tools.items():
            if key.casefold() == folded:
                return info
        return None

    def availability(self, skill: Skill) -> ToolAvailability:
        """Which of the skill's tools (``tools`` and ``allowed-tools``) can be used."""
        merged: dict[str, tuple[bool, list[str], str]] = {}
        refs = [(r.name, r.required, r.origin, r.purpose) for r in skill.tools]
        if not any(r.origin == "allowed-tools" for r in skill.tools):
            refs += [(t, False, "allowed-tools", "") for t in skill.allowed_tools]
        for raw, required, origin, purpose in refs:
            name = split_tool(raw)[0]
            if not name:
                continue
            old = merged.get(name)
            if old is None:
                merged[name] = (required, [origin], purpose)
            else:
                origins = old[1] if origin in old[1] else [*old[1], origin]
                merged[name] = (old[0] or required, origins, old[2] or purpose)
        result = ToolAvailability()
        for name, (required, origins, purpose) in merged.items():
            info = self.resolve(name)
            if info is None:
                status = "missing"
                result.missing.append(name)
            elif info.hidden:
                status = "hidden"
                result.hidden.append(name)
            else:
                status = "available"
                result.available.append(name)
            if required and status != "available":
                result.complete = False
            result.entries.append(
                ToolStatus(
                    name, required, status, info.source if info else None, tuple(origins), purpose
                )
            )
        return result

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form of everything known."""
        return {
            "tools": [t.to_dict() for t in sorted(self.tools.values(), key=lambda t: t.name)],
            "mcp_config": str(self.mcp_config) if self.mcp_config else None,
            "mcp_servers": [
                self.mcp_status[s.name].to_dict()
                if s.name in self.mcp_status
                else McpServerStatus(s.name).to_dict()
                for s in self.servers
            ],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def refresh_mcp(
    settings: Settings | None = None, cwd: Path | None = None, timeout: float = 10.0
) -> ToolRegistry:
    """Re-query every MCP server of the current ``.mcp.json`` and return the registry."""
    registry = ToolRegistry.load(settings, cwd)
    registry.refresh_mcp(timeout=timeout)
    return registry
