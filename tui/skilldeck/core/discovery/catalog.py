"""Precedence and shadowing: which skill wins a name, and why the others lose.

Precedence, lowest first: ``bundled`` < ``user`` < ``project`` < ``explicit``. Among roots
of one source a later root wins (default project roots come farthest folder first, so
nearer folders win; explicit roots win in the order given, later wins). Within one root the
first skill in path order wins. Losers stay in the catalog with ``shadowed_by`` and
``shadow_reason`` set. A SKILL.md reached twice (same real path) is kept once, at the
highest precedence; a bundled skill identical to its winner (Skilldeck run from its own
repository) is listed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from skilldeck.core.model import Skill, Source

Level = tuple[int, int]
"""``(source rank, root index)``: a higher level wins."""


@dataclass(slots=True)
class RootSkills:
    """The skills one root gave, in path order, with the real path of each SKILL.md."""

    level: Level
    reals: list[str]
    skills: list[Skill]


def rank(groups: list[RootSkills]) -> list[Skill]:
    """Every skill in ascending precedence, each real SKILL.md once, shadows marked."""
    ordered = sorted(groups, key=lambda group: group.level[0])  # stable: roots keep order
    best: dict[str, Level] = {}
    for group in ordered:
        for real in group.reals:
            if best.get(real, (-1, -1)) < group.level:
                best[real] = group.level
    kept: list[tuple[tuple[int, int, int], Skill]] = []
    for group in ordered:
        position = 0
        for real, skill in zip(group.reals, group.skills, strict=True):
            if best.get(real) == group.level:
                del best[real]  # later copies in the same root lose
                kept.append(((group.level[0], group.level[1], -position), skill))
                position += 1
    copies = _mark_shadows(kept)
    return [skill for _key, skill in kept if id(skill) not in copies]


def _mark_shadows(kept: list[tuple[tuple[int, int, int], Skill]]) -> set[int]:
    """Set ``shadowed_by``/``shadow_reason`` on every loser; the ids of bundled copies."""
    winners: dict[str, tuple[tuple[int, int, int], Skill]] = {}
    for key, skill in kept:
        best = winners.get(skill.name)
        if best is None or key > best[0]:
            winners[skill.name] = (key, skill)
    copies: set[int] = set()
    if len(winners) == len(kept):
        return copies  # every name is unique: nothing is shadowed
    for key, skill in kept:
        win_key, winner = winners[skill.name]
        if winner is skill:
            continue
        if skill.source is Source.BUNDLED and _same_copy(skill, winner):
            copies.add(id(skill))
            continue
        skill.shadowed_by = winner.path
        skill.shadow_reason = f"shadowed by {winner.path} ({_why(skill, winner, key, win_key)})"
    return copies


def _why(
    skill: Skill, winner: Skill, key: tuple[int, int, int], win_key: tuple[int, int, int]
) -> str:
    if win_key[0] != key[0]:
        return f"{winner.source.value} overrides {skill.source.value}"
    if win_key[1] != key[1]:
        if skill.source is Source.PROJECT:
            return "a nearer project folder overrides a farther one"
        return f"a later {skill.source.value} root overrides an earlier one"
    return "same root: the first in path order wins"


def _same_copy(a: Skill, b: Skill) -> bool:
    """True when two skill folders hold the same SKILL.md bytes and resource names."""
    if (a.size, a.content_hash, a.resources) != (b.size, b.content_hash, b.resources):
        return False
    try:
        with open(a.path, "rb") as fa, open(b.path, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False
