"""Tool availability: which tools exist (preset, tools file, MCP servers) and which of a
skill's tools can be used. See :mod:`skilldeck.core.tools.registry`."""

from skilldeck.core.tools.registry import (
    BUILTIN_TOOLS,
    VALIDATION_MODES,
    McpCache,
    McpServerStatus,
    ToolAvailability,
    ToolInfo,
    ToolRegistry,
    ToolStatus,
    check_skill_tools,
    find_mcp_config,
    query_server,
    read_mcp_config,
    refresh_mcp,
    tool_diagnostics,
    validation_mode,
)
from skilldeck.core.tools.stdio_client import McpQueryError, ServerSpec, list_tools

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
    "list_tools",
    "query_server",
    "read_mcp_config",
    "refresh_mcp",
    "tool_diagnostics",
    "validation_mode",
]
