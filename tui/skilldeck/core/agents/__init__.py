"""What each coding agent sees: its documented skill folders (:mod:`.table`) and, for this
machine's catalog, which skills it reads, from which folder, which it does not, and which
its listing budget would truncate or cut (:mod:`.visibility`)."""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.agents.table import AGENTS, AgentSpec
    from skilldeck.core.agents.visibility import (
        ENTRY_OVERHEAD,
        AgentSkill,
        AgentView,
        agent_folders,
        agent_view,
        agent_views,
        project_chain,
        seen_paths,
    )

__all__ = [
    "AGENTS",
    "ENTRY_OVERHEAD",
    "AgentSkill",
    "AgentSpec",
    "AgentView",
    "agent_folders",
    "agent_view",
    "agent_views",
    "project_chain",
    "seen_paths",
]

_NAMES = {
    "AGENTS": "table",
    "AgentSpec": "table",
    "ENTRY_OVERHEAD": "visibility",
    "AgentSkill": "visibility",
    "AgentView": "visibility",
    "agent_folders": "visibility",
    "agent_view": "visibility",
    "agent_views": "visibility",
    "project_chain": "visibility",
    "seen_paths": "visibility",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
