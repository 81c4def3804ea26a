"""Tool availability: which tools exist (preset, tools file, MCP servers) and which of a
skill's tools can be used.

* :mod:`.model`: the values (:class:`ToolInfo`, :class:`ToolStatus`,
  :class:`ToolAvailability`, :class:`McpServerStatus`);
* :mod:`.preset`: the built-in preset and the tools file;
* :mod:`.mcp_config`: the stdio servers of a ``.mcp.json``;
* :mod:`.mcp_servers`: listing those servers' tools (with
  :mod:`skilldeck.core.mcp_client`) and caching the answers;
* :mod:`.registry`: :class:`ToolRegistry`, every known tool from all of the above;
* :mod:`.validation`: a skill's validation mode and the findings about its tools.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.mcp_client import McpError, ServerSpec
    from skilldeck.core.tools.mcp_config import find_mcp_config
    from skilldeck.core.tools.mcp_servers import list_tools
    from skilldeck.core.tools.model import ToolAvailability
    from skilldeck.core.tools.preset import BUILTIN_TOOLS
    from skilldeck.core.tools.registry import ToolRegistry
    from skilldeck.core.tools.validation import (
        check_skill_tools,
        gate_strict,
        invalid_problem,
        tool_diagnostics,
        validation_mode,
    )

__all__ = [
    "BUILTIN_TOOLS",
    "McpError",
    "ServerSpec",
    "ToolAvailability",
    "ToolRegistry",
    "check_skill_tools",
    "find_mcp_config",
    "gate_strict",
    "invalid_problem",
    "list_tools",
    "tool_diagnostics",
    "validation_mode",
]

_NAMES = {
    "find_mcp_config": "mcp_config",
    "McpError": "mcp_servers",
    "ServerSpec": "mcp_servers",
    "list_tools": "mcp_servers",
    "ToolAvailability": "model",
    "BUILTIN_TOOLS": "preset",
    "ToolRegistry": "registry",
    "check_skill_tools": "validation",
    "gate_strict": "validation",
    "invalid_problem": "validation",
    "tool_diagnostics": "validation",
    "validation_mode": "validation",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
