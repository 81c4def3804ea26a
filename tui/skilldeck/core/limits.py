"""How many results a search gives by default: defined once, here, for every face.

A module of its own (no numpy, no search package) so that a command-line parser can show
the defaults without importing the search index.
"""

HUMAN_LIMIT = 20
"""Results a person gets (``skilldeck search``, :meth:`SearchIndex.search`)."""
AGENT_LIMIT = 3
"""Results an agent gets (``skilldeck search --agent``, the MCP ``search_skills`` tool)."""
