"""Asking MCP servers for their tools, and remembering their answers.

:func:`query_server` starts one stdio server and lists its tools; :class:`McpCache` keeps
the answers with a timestamp in ``cache_dir()/mcp-tools.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from skilldeck.core.config import cache_dir
from skilldeck.core.tools.model import McpServerStatus
from skilldeck.core.tools.stdio_client import McpQueryError, ServerSpec, list_tools

CACHE_NAME = "mcp-tools.json"
CACHE_VERSION = 1


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
