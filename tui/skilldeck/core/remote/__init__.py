"""Federation: remote skill catalogs (MCP servers with the Skills extension) as sources.

:mod:`.spec` reads the ``remotes`` tables of the config, :mod:`.client` speaks to a remote
(streamable HTTP or stdio, no MCP SDK: the core never imports it), :mod:`.entries` checks
the extension's entries, :mod:`.review` keeps operators' approvals, :mod:`.fetch` gets and
verifies files, :mod:`.federation` lists (cached), names (``label:name``) and loads remote
skills, and :mod:`.search` ranks them with the local ones.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.remote.entries import SCHEME, RemoteEntry
    from skilldeck.core.remote.federation import Federation, Listing, clear_cache
    from skilldeck.core.remote.review import approve, read_approvals, review_of
    from skilldeck.core.remote.search import CombinedSearch
    from skilldeck.core.remote.spec import remote_specs

__all__ = [
    "SCHEME",
    "CombinedSearch",
    "Federation",
    "Listing",
    "RemoteEntry",
    "approve",
    "clear_cache",
    "read_approvals",
    "remote_specs",
    "review_of",
]

_NAMES = {
    "RemoteEntry": "entries",
    "SCHEME": "entries",
    "Federation": "federation",
    "Listing": "federation",
    "clear_cache": "federation",
    "approve": "review",
    "read_approvals": "review",
    "review_of": "review",
    "CombinedSearch": "search",
    "remote_specs": "spec",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
