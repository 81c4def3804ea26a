"""MCP server over the core: ``skilldeck serve``.

* :mod:`skilldeck.mcp.schemas`: the tools' names, descriptions and strict input schemas.
* :mod:`skilldeck.mcp.service`: the tools' behaviour, catalog freshness and client sessions
  (no MCP SDK import; usable and testable on its own).
* :mod:`skilldeck.mcp.server`: the SDK's low-level ``Server``, stdio and streamable HTTP.

Inside this package ``import mcp`` is the SDK (absolute imports), never this package.
"""
