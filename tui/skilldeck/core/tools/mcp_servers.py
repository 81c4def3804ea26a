"""Asking MCP servers for their tools, and remembering their answers.

:func:`list_tools` asks one stdio server for ``tools/list`` through
:mod:`skilldeck.core.mcp_client`; :func:`query_server` turns that into a status;
:class:`McpCache` keeps the answers with a timestamp in ``cache_dir()/mcp-tools.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from skilldeck.core.config import cache_dir
from skilldeck.core.mcp_client import McpError, ServerSpec, connect
from skilldeck.core.safe_text import is_safe_name
from skilldeck.core.tools.model import McpServerStatus

CACHE_NAME = "mcp-tools.json"
CACHE_VERSION = 1
MAX_TOOLS = 10_000
TOOL_NAME_MAX = 200
"""Longest tool name accepted from a server; longer ones, and names with control or
bidirectional characters, are left out."""


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


def list_tools(spec: ServerSpec, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Start the server, read ``tools/list`` to the last page, stop it.

    Args:
        spec: How to start the server.
        timeout: Seconds for the whole exchange, start to stop.

    Returns:
        The tool objects (``name``, ``description``, ``inputSchema`` …) whose names are fit
        to show and match (see :data:`TOOL_NAME_MAX`).

    Raises:
        McpError: The server did not start, exited, timed out or broke the protocol.
    """
    with connect(spec, timeout) as client:
        tools = client.pages("tools/list", "tools", MAX_TOOLS)
    return [t for t in tools if _usable(t)]


def _usable(tool: object) -> bool:
    if not isinstance(tool, dict):
        return False
    name = tool.get("name")
    return isinstance(name, str) and is_safe_name(name, TOOL_NAME_MAX) and " " not in name


def query_server(spec: ServerSpec, timeout: float = 10.0) -> McpServerStatus:
    """List one server's tools now; a failure is recorded on the status, never raised."""
    status = McpServerStatus(name=spec.name, queried_at=time.time())
    try:
        for tool in list_tools(spec, timeout=timeout):
            status.tools.append(tool["name"])
            description = tool.get("description")
            if isinstance(description, str):
                status.descriptions[tool["name"]] = " ".join(description.split())[:200]
    except McpError as exc:
        status.error = exc.message + (
            f" (stderr: {exc.stderr.splitlines()[-1]})" if exc.stderr.strip() else ""
        )
        status.kind = exc.kind
    return status
