"""Federation: remote skill catalogs (MCP servers with the Skills extension) as sources.

:mod:`.spec` reads the ``remotes`` tables of the config, :mod:`skilldeck.core.mcp_client`
speaks to a remote (streamable HTTP or stdio, no MCP SDK), :mod:`.entries` checks
the extension's entries, :mod:`.review` keeps operators' approvals, :mod:`.fetch` gets and
verifies files, :mod:`.federation` lists (cached), names (``label:name``) and loads remote
skills, and :mod:`.search` ranks them with the local ones.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.remote.entries import EXTENSION_ID, SCHEME, RemoteEntry
    from skilldeck.core.remote.federation import Federation, Listing, clear_cache
    from skilldeck.core.remote.review import (
        approve,
        last_shown,
        read_approvals,
        record_shown,
        review_of,
    )
    from skilldeck.core.remote.search import CombinedSearch
    from skilldeck.core.remote.spec import remote_specs

__all__ = [
    "EXTENSION_ID",
    "SCHEME",
    "CombinedSearch",
    "Federation",
    "Listing",
    "RemoteEntry",
    "approve",
    "clear_cache",
    "last_shown",
    "read_approvals",
    "record_shown",
    "remote_specs",
    "review_of",
]

_NAMES = {
    "EXTENSION_ID": "entries",
    "RemoteEntry": "entries",
    "SCHEME": "entries",
    "Federation": "federation",
    "Listing": "federation",
    "clear_cache": "federation",
    "approve": "review",
    "last_shown": "review",
    "read_approvals": "review",
    "record_shown": "review",
    "review_of": "review",
    "CombinedSearch": "search",
    "remote_specs": "spec",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
