"""What the workspace's read side answers with: ranked rows and the name order."""

from __future__ import annotations

from dataclasses import dataclass

from skilldeck.core.model import Skill


def sort_key(skill: Skill) -> tuple[str, int, str]:
    """Name order; for equal names the winner (highest source) first."""
    return (skill.name.lower(), -skill.source.rank, str(skill.path))


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
