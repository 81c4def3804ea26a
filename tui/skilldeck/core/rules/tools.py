"""The tools rules (``ST``): the tools file, the MCP servers and a skill's own tools.

``ST0xx`` are about the tools file, ``ST1xx`` about the MCP servers of ``.mcp.json``,
``ST2xx`` about the tools one skill needs. :mod:`skilldeck.core.tools` reports them. The
severity of ST201 and ST202 follows the skill's ``tool-validation`` mode: an error under
``strict``, a warning under ``warn`` (the default), nothing under ``ignore``.
"""

from __future__ import annotations

from skilldeck.core.model import Severity
from skilldeck.core.rules.model import Rule

W, INFO = Severity.WARNING, Severity.INFO

_REFRESH = "Run 'skilldeck tools --refresh' once the server works."

TOOLS_RULES = (
    Rule(
        "ST001",
        "tools-file-unreadable",
        W,
        "The tools file cannot be read or is not valid TOML: it is ignored.",
    ),
    Rule(
        "ST002",
        "tools-file-entry",
        W,
        "An entry of the tools file has the wrong shape: it is ignored.",
    ),
    Rule(
        "ST101",
        "mcp-config-unreadable",
        W,
        "The MCP config (.mcp.json) is missing, unreadable or has no 'mcpServers' object.",
    ),
    Rule(
        "ST102",
        "mcp-server-entry",
        W,
        "An MCP server entry is not an object or has bad 'args'/'env' (a warning), or is "
        "not a stdio server with a command, so it is not queried (info).",
    ),
    Rule(
        "ST103",
        "mcp-server-start",
        W,
        "An MCP server failed to start: its tools are unknown.",
        explanation=_REFRESH,
    ),
    Rule(
        "ST104",
        "mcp-server-broke",
        W,
        "An MCP server exited, refused or broke the protocol: its tools are unknown.",
        explanation=_REFRESH,
    ),
    Rule(
        "ST105",
        "mcp-server-timeout",
        W,
        "An MCP server did not answer in time: its tools are unknown.",
        explanation=_REFRESH,
    ),
    Rule(
        "ST106",
        "mcp-server-not-queried",
        INFO,
        "An MCP server has not been queried yet: its tools are not known.",
        explanation="Run 'skilldeck tools --refresh'.",
    ),
    Rule(
        "ST201",
        "required-tool-missing",
        W,
        "A tool the skill requires is not available. Under 'tool-validation: strict' this is "
        "an error and the skill is not offered to agents; under 'ignore' it is not reported.",
        explanation="Install or configure the tool, or mark it 'required: false'.",
    ),
    Rule(
        "ST202",
        "required-tool-hidden",
        W,
        "A tool the skill requires is hidden by the tools file (an error under "
        "'tool-validation: strict').",
        explanation="Remove it from 'hidden' in the tools file, or use another skill.",
    ),
    Rule(
        "ST203",
        "tool-validation-value",
        W,
        "tool-validation is not one of strict, warn, ignore: the default mode is used.",
    ),
    Rule(
        "ST204",
        "optional-tool-missing",
        INFO,
        "A tool the skill can use but does not require is not available.",
    ),
)
