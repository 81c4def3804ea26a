"""MCP server over the core: ``skilldeck serve``.

* :mod:`skilldeck.mcp.schemas`: the tools' names, descriptions and strict input schemas.
* :mod:`skilldeck.mcp.service`: the tools' behaviour, catalog freshness and client sessions
  (no MCP SDK import; usable and testable on its own).
* :mod:`skilldeck.mcp.server`: the protocol handlers on the SDK's low-level ``Server``.
* :mod:`skilldeck.mcp.client_sessions`: the session store and each client's session.
* :mod:`skilldeck.mcp.prompts`: every model-visible skill as a prompt.
* :mod:`skilldeck.mcp.toolset_mounts`: the toolset tools mounted per client.
* :mod:`skilldeck.mcp.transport`: running it over stdio or streamable HTTP, and ending.

Inside this package ``import mcp`` is the SDK (absolute imports), never this package.
"""
