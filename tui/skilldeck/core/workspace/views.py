"""The read side's name order and the rule of which skills count (the TUI's ranked rows
are in :mod:`skilldeck.app.ranked`)."""

from __future__ import annotations

from collections.abc import Iterable

from skilldeck.core.model import Diagnostic, Skill


def sort_key(skill: Skill) -> tuple[str, bool, int, str]:
    """Name order; for equal names the winner first, then by source (highest first)."""
    return (skill.name.lower(), skill.shadowed, -skill.source.rank, str(skill.path))


def unlisted_reason(skill: Skill) -> str:
    """Why ``skill`` does not count as a skill: ``"shadowed"`` (another copy wins its
    name), ``"disabled"`` (registry), ``"invalid"``; ``""`` when it counts. The one rule
    behind ``skilldeck list`` and the TUI's skill count (first reason only)."""
    if skill.shadowed:
        return "shadowed"
    if not skill.enabled:
        return "disabled"
    if not skill.valid:
        return "invalid"
    return ""


def listed(skills: Iterable[Skill]) -> list[Skill]:
    """The skills that count (see :func:`unlisted_reason`), in the order given."""
    return [s for s in skills if not unlisted_reason(s)]


def listed_counts(skills: Iterable[Skill]) -> tuple[int, dict[str, int]]:
    """How many skills count, and how many do not by their first reason
    (``{"shadowed": 1, "invalid": 2}``)."""
    usable = 0
    others: dict[str, int] = {}
    for skill in skills:
        reason = unlisted_reason(skill)
        if reason:
            others[reason] = others.get(reason, 0) + 1
        else:
            usable += 1
    return usable, others


def merged_diagnostics(found: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``found`` without repeats (same code, message and line), by line then severity."""
    seen: set[tuple[str, str, int | None]] = set()
    merged: list[Diagnostic] = []
    for diag in found:
        key = (diag.code, diag.message, diag.line)
        if key not in seen:
            seen.add(key)
            merged.append(diag)
    merged.sort(key=lambda d: (d.line or 0, d.severity.rank, d.code))
    return merged
