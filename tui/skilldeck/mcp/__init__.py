"""MCP server over the core."""
