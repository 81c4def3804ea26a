"""One search over local and remote skills.

Remote skills are ranked in the same index as the local skills a model may see, so a
remote ``team:refunds`` and a local ``refunds`` compete on the same scale (one vocabulary,
one BM25 weighting, one confidence rule). The index is rebuilt only when the workspace
discovered again or a remote's listing changed; remote documents have no body to read
(their frontmatter is what is indexed).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.search import SearchIndex, SearchResponse
    from skilldeck.core.workspace import Scope, Workspace


class CombinedSearch:
    """Searches over a workspace's skills of one scope plus remote documents.

    Args:
        workspace: The local side (discovered).
        scope: Which local skills: what a model may see (agents), or every winner.
    """

    def __init__(self, workspace: Workspace, scope: Scope = "visible") -> None:
        self.workspace = workspace
        self.scope: Scope = scope
        self._held: tuple[tuple[int, tuple[int, ...]], SearchIndex] | None = None
        self._lock = threading.Lock()

    def index(self, documents: Sequence[Skill]) -> SearchIndex:
        """The index over the visible local skills and ``documents`` (kept while neither
        changed)."""
        from skilldeck.core.search import SearchIndex

        workspace = self.workspace
        with workspace.lock:
            local, generation = list(workspace.skills_in(self.scope)), workspace.generation
        key = (generation, tuple(id(d) for d in documents))
        with self._lock:
            if self._held is not None and self._held[0] == key:
                return self._held[1]
            index = SearchIndex.build(
                [*local, *documents], settings=workspace.settings, semantic=False
            )
            index.telemetry = workspace.telemetry
            self._held = (key, index)
            return index

    def search(
        self,
        documents: Sequence[Skill],
        query: str,
        limit: int,
        *,
        tools: set[str] | None = None,
        agent: bool = True,
        explain: bool = False,
        session: str | None = None,
    ) -> SearchResponse:
        """Search local and remote skills: :func:`~skilldeck.core.search.agent_search`
        (``skill_selected`` to the workspace's telemetry) with ``agent``, else a person's
        search; ``session``: the session an agent's request came from (in the event)."""
        from skilldeck.core.search import agent_search

        index = self.index(documents)
        with self.workspace.lock:
            if not agent:
                return index.search(query, limit=limit, explain=explain, available_tools=tools)
            return agent_search(
                index,
                query,
                limit,
                self.workspace.settings,
                available_tools=tools,
                telemetry=self.workspace.telemetry,
                session=session,
            )
