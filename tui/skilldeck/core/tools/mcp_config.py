"""Reading a ``.mcp.json``: which stdio MCP servers a project or the settings configure.

The format is Claude Code's, ``{"mcpServers": {"name": {"command": ..., "args": [...],
"env": {...}}}}``, with ``${VAR}`` and ``${VAR:-default}`` expanded from the environment.
Diagnostic codes: ST101 unreadable ``.mcp.json``, ST102 server entry that cannot be queried
(no command, not stdio).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.mcp_client import ServerSpec
from skilldeck.core.model import Diagnostic, Severity

MCP_CONFIG_NAME = ".mcp.json"
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


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
    diags: list[Diagnostic] = []
    for name, entry in servers.items():
        spec = _server_spec(name, entry, path)
        if isinstance(spec, Diagnostic):
            diags.append(spec)
        else:
            specs.append(spec)
    return specs, diags


def _server_spec(name: Any, entry: Any, path: Path) -> ServerSpec | Diagnostic:
    """One ``mcpServers`` entry as a stdio server, or why it cannot be queried (ST102)."""
    if not isinstance(entry, dict):
        return Diagnostic(
            "ST102", Severity.WARNING, f"MCP server {name!r}: entry is not an object", path=path
        )
    kind = entry.get("type", "stdio")
    command = entry.get("command")
    if kind != "stdio" or not isinstance(command, str) or not command.strip():
        why = f"type {kind!r} is not stdio" if kind != "stdio" else "no 'command'"
        return Diagnostic(
            "ST102", Severity.INFO, f"MCP server {name!r} not queried: {why}", path=path
        )
    args = entry.get("args", [])
    env = entry.get("env", {})
    if not isinstance(args, list) or not isinstance(env, dict):
        return Diagnostic(
            "ST102",
            Severity.WARNING,
            f"MCP server {name!r}: 'args' must be a list and 'env' an object",
            path=path,
        )
    return ServerSpec(
        name=str(name),
        command=_expand(command),
        args=[_expand(str(a)) for a in args],
        env={str(k): _expand(str(v)) for k, v in env.items()},
        cwd=path.parent,
    )
