"""What the workspace's read side answers with: ranked rows and the name order."""

from __future__ import annotations

from dataclasses import dataclass

from skilldeck.core.model import Skill


def sort_key(skill: Skill) -> tuple[str, bool, int, str]:
    """Name order; for equal names the winner first, then by source (highest first)."""
    return (skill.name.lower(), skill.shadowed, -skill.source.rank, str(skill.path))


def winners_first(hits: list[Hit]) -> list[Hit]:
    """``hits`` in the same order, but shadowed copies after every winner: a copy that is
    never used should not sit between the skills that are."""
    if not any(h.skill.shadowed for h in hits):
        return hits
    return [h for h in hits if not h.skill.shadowed] + [h for h in hits if h.skill.shadowed]


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
