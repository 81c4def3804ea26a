"""Tool availability: which tools exist (preset, tools file, MCP servers) and which of a
skill's tools can be used.

* :mod:`.model`: the values (:class:`ToolInfo`, :class:`ToolStatus`,
  :class:`ToolAvailability`, :class:`McpServerStatus`);
* :mod:`.preset`: the built-in preset and the tools file;
* :mod:`.mcp_config`: the stdio servers of a ``.mcp.json``;
* :mod:`.mcp_servers`: querying those servers and caching their answers;
* :mod:`.stdio_client`: the minimal MCP client that lists a server's tools;
* :mod:`.registry`: :class:`ToolRegistry`, every known tool from all of the above;
* :mod:`.validation`: a skill's validation mode and the findings about its tools.
"""

from skilldeck.core.tools.mcp_config import find_mcp_config, read_mcp_config
from skilldeck.core.tools.mcp_servers import McpCache, query_server
from skilldeck.core.tools.model import McpServerStatus, ToolAvailability, ToolInfo, ToolStatus
from skilldeck.core.tools.preset import BUILTIN_TOOLS
from skilldeck.core.tools.registry import ToolRegistry, refresh_mcp
from skilldeck.core.tools.stdio_client import McpQueryError, ServerSpec, list_tools
from skilldeck.core.tools.validation import (
    VALIDATION_MODES,
    check_skill_tools,
    gate_strict,
    invalid_problem,
    tool_diagnostics,
    unavailable_reason,
    validation_mode,
)

__all__ = [
    "BUILTIN_TOOLS",
    "VALIDATION_MODES",
    "McpCache",
    "McpQueryError",
    "McpServerStatus",
    "ServerSpec",
    "ToolAvailability",
    "ToolInfo",
    "ToolRegistry",
    "ToolStatus",
    "check_skill_tools",
    "find_mcp_config",
    "gate_strict",
    "invalid_problem",
    "list_tools",
    "query_server",
    "read_mcp_config",
    "refresh_mcp",
    "tool_diagnostics",
    "unavailable_reason",
    "validation_mode",
]
