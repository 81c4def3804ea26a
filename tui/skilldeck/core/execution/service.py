"""One script run end to end: resolve, authorize, run, and record it (telemetry
``skill_exec_attempt`` / ``skill_exec_result`` and an audit row for every attempt)."""

from __future__ import annotations

from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution.policy import authorize, resolve_script
from skilldeck.core.execution.runner import check_args, run_script
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore
from skilldeck.core.telemetry import Telemetry

DEFAULT_TIMEOUT = 60.0
"""Seconds a run may take when ``exec_timeout_s`` is not a positive number."""


def execute(
    settings: Settings,
    skill: Skill,
    script: str,
    args: list[str],
    *,
    store: SessionStore | None = None,
    session_id: str | None = None,
    actor: str = "agent",
    telemetry: Telemetry | None = None,
) -> dict[str, Any]:
    """Run ``script`` of ``skill`` if allowed and return the result as a dictionary
    (``skill``, ``script``, ``sha256``, ``allowed_by`` and the fields of
    :class:`~skilldeck.core.execution.runner.RunResult`).

    Raises:
        SkilldeckError: the refusal (with ``reason``) or the failure to start.
    """
    writer = telemetry or Telemetry.from_settings(settings)
    ref, digest = f"{skill.name}/{script}", None
    try:
        request = resolve_script(skill, script)
        ref, digest = request.ref, request.sha256
        check_args(args)
        allowed_by = authorize(settings, request, store, session_id, actor)
    except SkilldeckError as exc:
        reason = str(exc.details.get("reason", exc.code.value))
        _record(writer, store, session_id, actor, "script_refused", ref, digest, reason)
        raise
    _record(writer, store, session_id, actor, "script_run", ref, digest, allowed_by)
    timeout = settings.exec_timeout_s if settings.exec_timeout_s > 0 else DEFAULT_TIMEOUT
    result = run_script(request.path, skill.base_dir, args, timeout, request.data or None)
    writer.emit(
        "skill_exec_result",
        name=skill.name,
        script=ref,
        sha256=digest,
        exit_code=result.exit_code,
        latency_ms=result.duration_ms,
        truncated=result.truncated,
        timed_out=result.timed_out,
        session=session_id,
    )
    return {
        "skill": skill.name,
        "script": request.script,
        "sha256": digest,
        "allowed_by": allowed_by,
        **result.to_dict(),
    }


def _record(
    writer: Telemetry,
    store: SessionStore | None,
    session_id: str | None,
    actor: str,
    action: str,
    ref: str,
    digest: str | None,
    reason: str,
) -> None:
    """Telemetry ``skill_exec_attempt`` and one audit row for an attempt."""
    allowed = action == "script_run"
    writer.emit(
        "skill_exec_attempt",
        name=ref.split("/", 1)[0],
        script=ref,
        sha256=digest,
        allowed=allowed,
        reason=reason,
        session=session_id,
        actor=actor,
    )
    if store is None:
        return
    detail = {"sha256": digest, "allowed": allowed, "reason": reason}
    try:
        session = session_id if session_id and store.find(session_id) else None
        store.record(session, action, ref, detail, actor=actor)
    except SkilldeckError:
        if allowed:
            raise
