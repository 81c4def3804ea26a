"""Which tools exist, and which of a skill's tools are available.

Sources, later ones adding to earlier ones:

1. the built-in preset :data:`BUILTIN_TOOLS` (common agent tools), unless
   ``settings.builtin_tools`` is false or the tools file says ``builtin = false``;
2. the tools file (``settings.tools_path``, TOML), either ``tools = ["A", "B"]`` or
   ``[[tools]]`` tables with ``name``, optional ``hidden`` and ``description``, plus an
   optional ``hidden = ["WebSearch"]`` list that hides any tool by name;
3. the tools of the stdio MCP servers of a ``.mcp.json`` (``settings.mcp_config``, else
   the nearest one from the working directory up to the project root), in Claude Code's
   format ``{"mcpServers": {"name": {"command": ..., "args": [...], "env": {...}}}}``.
   Servers are only started on demand (:meth:`ToolRegistry.refresh_mcp`, or ``load(...,
   query_missing=True)``; the CLI does the latter only for a configured ``mcp_config``,
   never for a project file, which may come from an untrusted checkout); their answers
   are cached with a timestamp in ``cache_dir()/mcp-tools.json``. A tool ``t`` of server
   ``s`` is known as ``s.t`` and, unless another source has that name, as ``t``.

Diagnostic codes: ST001 unreadable tools file, ST002 bad tools-file entry, ST101 unreadable
``.mcp.json``, ST102 server entry that cannot be queried (no command, not stdio), ST103
server failed to start, ST104 server exited or broke the protocol, ST105 server timed out,
ST106 server not queried yet, ST201 missing required tool, ST202 required tool hidden,
ST203 unknown ``tool-validation`` value, ST204 optional tool missing (info).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings, cache_dir, load_settings
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.sessions.model import split_tool
from skilldeck.core.tools.stdio_client import McpQueryError, ServerSpec, list_tools

BUILTIN_TOOLS: tuple[str, ...] = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Grep",
    "Glob",
    "LS",
    "Bash",
    "BashOutput",
    "KillShell",
    "WebFetch",
    "WebSearch",
    "Task",
    "TodoWrite",
    "NotebookEdit",
    "NotebookRead",
    "Skill",
    "SlashCommand",
    "ExitPlanMode",
)
VALIDATION_MODES = ("strict", "warn", "ignore")
MCP_CONFIG_NAME = ".mcp.json"
CACHE_NAME = "mcp-tools.json"
CACHE_VERSION = 1
_KIND_CODE = {"start": "ST103", "exit": "ST104", "protocol": "ST104", "timeout": "ST105"}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A known tool.

    Attributes:
        name: The name an agent calls it by.
        source: ``preset``, ``tools-file`` or ``mcp:<server>``.
        hidden: Known but hidden by the tools file: not available to skills.
        description: One line, when the source gave one.
    """

    name: str
    source: str
    hidden: bool = False
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "source": self.source,
            "hidden": self.hidden,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """One of a skill's tools and whether it can be used.

    Attributes:
        name: Tool name as the skill refers to it (patterns reduced to their tool).
        required: The skill cannot work without it.
        status: ``available``, ``missing`` or ``hidden``.
        source: Where the tool comes from, None when missing.
        origins: ``tools`` and/or ``allowed-tools``.
        purpose: Why the skill needs it.
    """

    name: str
    required: bool
    status: str
    source: str | None
    origins: tuple[str, ...] = ()
    purpose: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "required": self.required,
            "status": self.status,
            "source": self.source,
            "origins": list(self.origins),
            "purpose": self.purpose,
        }


@dataclass(slots=True)
class ToolAvailability:
    """A skill's tools sorted by availability.

    Attributes:
        available: Names of usable tools.
        missing: Names of unknown tools.
        hidden: Names of tools hidden by the tools file.
        complete: Every required tool is available.
        entries: One status per tool, in the skill's order.
    """

    available: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    complete: bool = True
    entries: list[ToolStatus] = field(default_factory=list)

    @property
    def missing_required(self) -> list[str]:
        """Required tools that are missing or hidden."""
        return [e.name for e in self.entries if e.required and e.status != "available"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "available": list(self.available),
            "missing": list(self.missing),
            "hidden": list(self.hidden),
            "complete": self.complete,
            "entries": [e.to_dict() for e in self.entries],
        }


@dataclass(slots=True)
class McpServerStatus:
    """What is known about one MCP server's tools.

    Attributes:
        name: Server name in ``.mcp.json``.
        queried_at: Unix time of the last query, None if never queried.
        tools: Tool names it listed.
        error: Why the last query failed, if it did.
        kind: Failure kind (``start``, ``exit``, ``timeout``, ``protocol``, ``config``).
    """

    name: str
    queried_at: float | None = None
    tools: list[str] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    kind: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "queried_at": (
                datetime.fromtimestamp(self.queried_at, UTC).isoformat(timespec="seconds")
                if self.queried_at
                else None
            ),
            "tools": list(self.tools),
            "error": self.error,
            "kind": self.kind,
        }


def find_mcp_config(settings: Settings, cwd: Path | None = None) -> Path | None:
    """``settings.mcp_config``, else the nearest ``.mcp.json`` up to the project root."""
    if settings.mcp_config is not None:
        return settings.mcp_config
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        candidate = folder / MCP_CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            break
    return None


def _expand(text: str) -> str:
    return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), text)


def read_mcp_config(path: Path) -> tuple[list[ServerSpec], list[Diagnostic]]:
    """Stdio servers of a ``.mcp.json`` (``${VAR}`` and ``${VAR:-default}`` expanded)."""
    diags: list[Diagnostic] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], [Diagnostic("ST101", Severity.WARNING, f"{path} does not exist", path=path)]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [], [
            Diagnostic("ST101", Severity.WARNING, f"cannot read MCP config: {exc}", path=path)
        ]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return [], [
            Diagnostic(
                "ST101", Severity.WARNING, "MCP config has no 'mcpServers' object", path=path
            )
        ]
    specs: list[ServerSpec] = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            diags.append(
                Diagnostic(
                    "ST102",
                    Severity.WARNING,
                    f"MCP server {name!r}: entry is not an object",
                    path=path,
                )
            )
            continue
        kind = entry.get("type", "stdio")
        command = entry.get("command")
        if kind != "stdio" or not isinstance(command, str) or not command.strip():
            why = f"type {kind!r} is not stdio" if kind != "stdio" else "no 'command'"
            diags.append(
                Diagnostic(
                    "ST102", Severity.INFO, f"MCP server {name!r} not queried: {why}", path=path
                )
            )
            continue
        args = entry.get("args", [])
        env = entry.get("env", {})
        if not isinstance(args, list) or not isinstance(env, dict):
            diags.append(
                Diagnostic(
                    "ST102",
                    Severity.WARNING,
                    f"MCP server {name!r}: 'args' must be a list and 'env' an object",
                    path=path,
                )
            )
            continue
        specs.append(
            ServerSpec(
                name=str(name),
                command=_expand(command),
                args=[_expand(str(a)) for a in args],
                env={str(k): _expand(str(v)) for k, v in env.items()},
                cwd=path.parent,
            )
        )
    return specs, diags


class McpCache:
    """Cached ``tools/list`` answers keyed by config file and server, with timestamps."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_dir() / CACHE_NAME

    def load(self) -> dict[str, Any]:
        """Cache entries (an unreadable or foreign cache is treated as empty)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        servers = data.get("servers")
        return servers if isinstance(servers, dict) else {}

    def save(self, entries: dict[str, Any]) -> None:
        """Write atomically; failures are ignored (the cache is only a cache)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-tools-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": CACHE_VERSION, "servers": entries}, handle)
            os.replace(tmp, self.path)
        except OSError:
            return

    @staticmethod
    def key(config: Path, server: str) -> str:
        """Cache key of one server of one config file."""
        return f"{config.resolve()}::{server}"


def query_server(spec: ServerSpec, timeout: float = 10.0) -> McpServerStatus:
    """List one server's tools now; a failure is recorded on the status, never raised."""
    status = McpServerStatus(name=spec.name, queried_at=time.time())
    try:
        for tool in list_tools(spec, timeout=timeout):
            status.tools.append(tool["name"])
            description = tool.get("description")
            if isinstance(description, str):
                status.descriptions[tool["name"]] = " ".join(description.split())[:200]
    except McpQueryError as exc:
        status.error = exc.message + (
            f" (stderr: {exc.stderr.splitlines()[-1]})" if exc.stderr.strip() else ""
        )
        status.kind = exc.kind
    return status


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
        path = self.settings.tools_path
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            self._base_diagnostics.append(
                Diagnostic("ST001", Severity.WARNING, f"tools file ignored: {exc}", path=path)
            )
            return
        if data.get("builtin") is False:
            self._builtin = False
        hidden = data.get("hidden", [])
        if isinstance(hidden, list):
            self._hidden.update(str(h) for h in hidden)
        else:
            self._bad_entry(path, "'hidden' must be a list of tool names")
        entries = data.get("tools", [])
        if not isinstance(entries, list):
            self._bad_entry(path, "'tools' must be a list")
            return
        for entry in entries:
            if isinstance(entry, str) and entry.strip():
                self._file_tools.append(ToolInfo(entry.strip(), "tools-file"))
            elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
                self._file_tools.append(
                    ToolInfo(
                        entry["name"].strip(),
                        "tools-file",
                        hidden=entry.get("hidden") is True,
                        description=str(entry.get("description", "")),
                    )
                )
            else:
                self._bad_entry(path, f"tools entry {entry!r} has no name")

    def _bad_entry(self, path: Path, message: str) -> None:
        self._base_diagnostics.append(Diagnostic("ST002", Severity.WARNING, message, path=path))

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
                        f"MCP server {spec.name!r} not queried yet "
                        "(run 'skilldeck tools --refresh')",
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


def validation_mode(skill: Skill, settings: Settings | None = None) -> tuple[str, list[Diagnostic]]:
    """The validation mode for a skill's tools, first found of: a governance-registry
    override (a ``tool_validation`` attribute on the skill, when the registry sets one), the
    frontmatter ``tool-validation`` (or under ``metadata``), ``settings.tool_validation``.
    An unknown value is reported (ST203) and ignored."""
    default = (settings or load_settings()).tool_validation
    if default not in VALIDATION_MODES:
        default = "warn"
    fm = skill.frontmatter
    meta = fm.get("metadata")
    value: Any = getattr(skill, "tool_validation", None)
    if value is None:
        value = fm.get("tool-validation", fm.get("tool_validation"))
    if value is None and isinstance(meta, dict):
        value = meta.get("tool-validation", meta.get("tool_validation"))
    if value is None:
        return default, []
    if isinstance(value, str) and value.strip().lower() in VALIDATION_MODES:
        return value.strip().lower(), []
    line = skill.field_lines.get("tool-validation") or skill.field_lines.get("tool_validation")
    return default, [
        Diagnostic(
            "ST203",
            Severity.WARNING,
            f"tool-validation {value!r} is not one of {', '.join(VALIDATION_MODES)}; "
            f"using {default!r}",
            path=skill.path,
            line=line,
        )
    ]


def tool_diagnostics(
    skill: Skill, availability: ToolAvailability, mode: str = "warn"
) -> list[Diagnostic]:
    """Findings about a skill's tools: in ``strict`` mode a missing or hidden required tool
    is an error (the skill is invalid), in ``warn`` a warning, in ``ignore`` nothing."""
    if mode == "ignore":
        return []
    severity = Severity.ERROR if mode == "strict" else Severity.WARNING
    diags: list[Diagnostic] = []
    for entry in availability.entries:
        field_name = "tools" if "tools" in entry.origins else "allowed-tools"
        line = skill.field_lines.get(field_name)
        if entry.status == "available":
            continue
        if not entry.required:
            diags.append(
                Diagnostic(
                    "ST204",
                    Severity.INFO,
                    f"optional tool {entry.name!r} is {entry.status}",
                    path=skill.path,
                    line=line,
                )
            )
        elif entry.status == "hidden":
            diags.append(
                Diagnostic(
                    "ST202",
                    severity,
                    f"required tool {entry.name!r} is hidden by the tools file",
                    path=skill.path,
                    line=line,
                )
            )
        else:
            diags.append(
                Diagnostic(
                    "ST201",
                    severity,
                    f"required tool {entry.name!r} is not available",
                    path=skill.path,
                    line=line,
                )
            )
    return diags


def check_skill_tools(
    skill: Skill, registry: ToolRegistry
) -> tuple[ToolAvailability, list[Diagnostic]]:
    """Availability plus diagnostics under the skill's validation mode."""
    availability = registry.availability(skill)
    mode, diags = validation_mode(skill, registry.settings)
    return availability, diags + tool_diagnostics(skill, availability, mode)
