"""The answer to a load, the same on every face: the instructions (tier 2) with the skill's
tool availability, warnings and declared inputs (``skilldeck load --format json`` and MCP
``load_skill`` both shape it here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.loader.instructions import LoadResult
from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolRegistry


def load_answer(
    skill: Skill, result: LoadResult, registry: Callable[[], ToolRegistry]
) -> dict[str, Any]:
    """The JSON answer of a load: :meth:`LoadResult.to_dict` plus ``allowed_tools``,
    ``tools`` (the tool availability, or ``{"error": …}`` when the registry cannot be
    read) and ``resources``.

    Args:
        skill: The skill loaded.
        result: What :func:`~skilldeck.core.loader.load_skill` gave.
        registry: Gives the tool registry (the workspace's).
    """
    data = result.to_dict()
    data["allowed_tools"] = list(skill.allowed_tools)
    data["tools"] = tool_availability(skill, registry)
    data["resources"] = list(skill.resources)
    return data


def tool_availability(skill: Skill, registry: Callable[[], ToolRegistry]) -> dict[str, Any]:
    """Which of ``skill``'s tools are available, JSON-ready; ``{"error": …}`` when the
    tool registry cannot be read."""
    try:
        availability = registry().availability(skill)
    except SkilldeckError as exc:
        return {"error": exc.to_dict()}
    found: dict[str, Any] = availability.to_dict()
    return found


def load_notes(skill: Skill, answer: dict[str, Any]) -> list[str]:
    """What a model (or a person) is told after the instructions of a :func:`load_answer`:
    missing tools, warnings, the declared parameters and examples."""
    notes: list[str] = []
    missing = list(answer["tools"].get("missing") or [])
    if missing:
        notes.append(f"Tools this skill needs that are not available here: {', '.join(missing)}.")
    notes.extend(f"Warning: {w}" for w in answer["warnings"])
    notes.extend(content_notes(skill))
    return notes


def content_notes(skill: Skill) -> list[str]:
    """Lines telling a model the skill's declared parameters and examples."""
    notes = []
    if skill.parameters:
        parts = [
            f"{p.name} ({p.type}{', required' if p.required else ''})"
            + (f": {p.description}" if p.description else "")
            for p in skill.parameters
        ]
        notes.append("Parameters, in order ($0, $1, ...): " + "; ".join(parts) + ".")
    for example in skill.examples[:5]:
        does = f" -> {example.does}" if example.does else ""
        notes.append(f"Example: {example.request!r}{does}")
    return notes
