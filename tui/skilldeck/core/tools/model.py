"""The values tool availability is told in: known tools, a skill's tools and their
status, and what is known of one MCP server."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


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
