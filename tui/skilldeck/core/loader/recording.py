"""Loads and reads with their telemetry: the ``skill_loaded`` and
``skill_resource_requested`` events around tiers 2 and 3."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.loader.instructions import DEFAULT_TOKEN_CAP, LoadResult, load_skill
from skilldeck.core.loader.resources import DEFAULT_BYTE_CAP, Resource, read_resource
from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.store import LocalStore
    from skilldeck.core.telemetry import Telemetry


def record_load(
    skill: Skill,
    result: LoadResult,
    latency_ms: float,
    *,
    actor: str,
    telemetry: Telemetry,
    **context: Any,
) -> None:
    """Emit the ``skill_loaded`` telemetry event for a finished load (never raises).

    Args:
        skill: The skill that was loaded.
        result: What the load produced.
        latency_ms: How long the load took.
        actor: ``agent``, ``operator`` or ``cli``.
        telemetry: Where the event goes (the workspace's :attr:`~Workspace.telemetry`).
        context: Extra fields (``session``, ``source``).
    """
    telemetry.emit(
        "skill_loaded",
        name=skill.name,
        path=str(skill.path),
        tokens=result.tokens,
        latency_ms=round(latency_ms, 3),
        truncated=result.truncated,
        actor=actor,
        **context,
    )


def load_and_record(
    skill: Skill,
    arguments: str = "",
    token_cap: int = DEFAULT_TOKEN_CAP,
    *,
    actor: str,
    telemetry: Telemetry,
    settings: Settings | None = None,
    store: LocalStore | None = None,
    **context: Any,
) -> LoadResult:
    """:func:`load_skill` (``settings`` and ``store`` passed on), then the ``skill_loaded``
    telemetry event (to ``telemetry``)."""
    started = time.perf_counter()
    result = load_skill(skill, arguments, token_cap, settings=settings, store=store)
    elapsed = (time.perf_counter() - started) * 1000
    record_load(skill, result, elapsed, actor=actor, telemetry=telemetry, **context)
    return result


def read_and_record(
    skill: Skill,
    rel_path: str,
    byte_cap: int = DEFAULT_BYTE_CAP,
    *,
    actor: str,
    telemetry: Telemetry,
    reason: str | None = None,
    **context: Any,
) -> Resource:
    """:func:`read_resource` with a ``skill_resource_requested`` event (to ``telemetry``),
    refused or not. An agent (``actor="agent"``) is served only the files discovery
    listed; ``reason`` (why the agent asked, when it said) goes into the event."""
    if reason:
        context["reason"] = reason
    try:
        resource = read_resource(skill, rel_path, byte_cap, listed_only=actor == "agent")
    except SkilldeckError as exc:
        telemetry.emit(
            "skill_resource_requested",
            name=skill.name,
            resource=rel_path,
            ok=False,
            code=exc.code.value,
            actor=actor,
            **context,
        )
        raise
    telemetry.emit(
        "skill_resource_requested",
        name=skill.name,
        resource=resource.path,
        size=resource.size,
        binary=resource.binary,
        ok=True,
        actor=actor,
        **context,
    )
    return resource
