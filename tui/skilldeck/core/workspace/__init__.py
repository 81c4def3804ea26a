"""One workspace: roots -> catalog -> diagnostics -> search index -> tool availability.

:class:`Workspace` (:mod:`.workspace`) is the only pipeline in Skilldeck: the CLI, the
terminal UI and the MCP server each construct one and call its stages; none wires
discovery, lint, the search index or the tool registry itself
(``tests/test_architecture.py`` enforces it). Beside it: :mod:`.resolve` (which skill a
name means), :mod:`.actions` (the write door: load, read, run, toolsets, approvals),
:mod:`.remotes` (remote catalogs as a source), :mod:`.oneshot` (a search that starts and
exits), :mod:`.launch_rows` (the listing's first rows kept for the next launch),
:mod:`.lint_store` (lint findings kept in the local store), :mod:`.watch` (what to
stat to see a change) and :mod:`.views` (the name order of the read side).
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.workspace.actions import Actions, Loaded, Read, SessionRef, Target
    from skilldeck.core.workspace.launch_rows import launch_discovery
    from skilldeck.core.workspace.remotes import Approval, RemoteSource
    from skilldeck.core.workspace.resolve import NAME_MAX, check_lookup
    from skilldeck.core.workspace.workspace import Scope, Workspace

__all__ = [
    "NAME_MAX",
    "Actions",
    "Approval",
    "Loaded",
    "Read",
    "RemoteSource",
    "Scope",
    "SessionRef",
    "Target",
    "Workspace",
    "check_lookup",
    "launch_discovery",
]

_NAMES = {
    "Actions": "actions",
    "Loaded": "actions",
    "Read": "actions",
    "SessionRef": "actions",
    "Target": "actions",
    "launch_discovery": "launch_rows",
    "Approval": "remotes",
    "RemoteSource": "remotes",
    "NAME_MAX": "resolve",
    "check_lookup": "resolve",
    "Scope": "workspace",
    "Workspace": "workspace",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
