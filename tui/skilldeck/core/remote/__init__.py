"""Federation: remote skill catalogs (MCP servers with the Skills extension) as sources.

:mod:`.spec` reads the ``remotes`` tables of the config, :mod:`.client` speaks to a remote
(streamable HTTP or stdio, no MCP SDK: the core never imports it), :mod:`.entries` checks
the extension's entries, :mod:`.review` keeps operators' approvals, :mod:`.fetch` gets and
verifies files, :mod:`.federation` lists (cached), names (``label:name``) and loads remote
skills, and :mod:`.search` ranks them with the local ones.
"""

from skilldeck.core.remote.client import RemoteError
from skilldeck.core.remote.entries import RemoteEntry
from skilldeck.core.remote.federation import Federation, Listing, RemoteStatus, clear_cache
from skilldeck.core.remote.fetch import RemoteSkill
from skilldeck.core.remote.review import Review, approve, review_of
from skilldeck.core.remote.spec import RemoteSpec, remote_specs

__all__ = [
    "Federation",
    "Listing",
    "RemoteEntry",
    "RemoteError",
    "RemoteSkill",
    "RemoteSpec",
    "RemoteStatus",
    "Review",
    "approve",
    "clear_cache",
    "remote_specs",
    "review_of",
]
