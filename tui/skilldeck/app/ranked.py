"""What the terminal UI's result list shows: the workspace's search shaped into rows.

Only the TUI needs this shaping, so it lives here, over the one
:meth:`~skilldeck.core.workspace.Workspace.search`: an empty query lists every skill by
name, a plain filter stands in before the index is ready, and shadowed copies always come
after every winner.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.search import SearchResponse
    from skilldeck.core.workspace import Workspace

RESULT_LIMIT = 200
"""Most rows the result list (and the explanation) holds."""


@dataclass(slots=True)
class Hit:
    """One ranked row: the skill and its score (None for the unranked listing)."""

    skill: Skill
    score: float | None = None


@dataclass(slots=True)
class Ranked:
    """A ranked answer for one query.

    Attributes:
        query: The query it answers.
        hits: Shown rows, best first (capped).
        total: How many skills matched in all.
        elapsed_ms: Search time.
        ranked: False when the index was not ready and a plain filter was used.
        semantic: The embedding signal took part.
    """

    query: str
    hits: list[Hit]
    total: int
    elapsed_ms: float
    ranked: bool = True
    semantic: bool = False


def winners_first(hits: list[Hit]) -> list[Hit]:
    """``hits`` in the same order, but shadowed copies after every winner: a copy that is
    never used should not sit between the skills that are."""
    if not any(h.skill.shadowed for h in hits):
        return hits
    return [h for h in hits if not h.skill.shadowed] + [h for h in hits if h.skill.shadowed]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def rank(
    workspace: Workspace, query: str, limit: int = RESULT_LIMIT, semantic: bool = False
) -> Ranked:
    """Answer one query over every skill: ranked, or name-sorted for an empty query;
    shadowed copies always come after every winner (:func:`winners_first`).

    Before the index is ready a plain case-insensitive filter on name and description
    stands in (``ranked`` is then False). The embedding signal is used only when
    ``semantic`` and the index has it.
    """
    started = time.perf_counter()
    text = query.strip()
    if not text:
        listing = winners_first([Hit(s) for s in workspace.all_sorted()])
        return Ranked(query, listing[:limit], len(listing), _ms(started))
    if not workspace.has_index("all"):
        needle = text.lower()
        found = [
            s
            for s in workspace.all_sorted()
            if needle in s.name.lower() or needle in s.description.lower()
        ]
        hits = winners_first([Hit(s) for s in found])[:limit]
        return Ranked(query, hits, len(found), _ms(started), ranked=False)
    use_semantic = semantic and workspace.semantic("all")
    response = workspace.search(text, scope="all", limit=limit, semantic=use_semantic)
    hits = [Hit(workspace.skill_at(r.skill.path) or r.skill, r.score) for r in response.results]
    hits = winners_first(hits)
    total = max(response.total, len(hits))
    return Ranked(query, hits, total, _ms(started), semantic=use_semantic)


def explain(workspace: Workspace, query: str, limit: int = RESULT_LIMIT) -> SearchResponse | None:
    """The search explanation for ``query`` (None before the index is ready)."""
    if not workspace.has_index("all") or not query.strip():
        return None
    return workspace.search(query.strip(), scope="all", limit=limit, explain=True)
