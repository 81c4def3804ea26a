"""The name order of the workspace's read side (the TUI's ranked rows are in
:mod:`skilldeck.app.ranked`)."""

from __future__ import annotations

from skilldeck.core.model import Skill


def sort_key(skill: Skill) -> tuple[str, bool, int, str]:
    """Name order; for equal names the winner first, then by source (highest first)."""
    return (skill.name.lower(), skill.shadowed, -skill.source.rank, str(skill.path))
