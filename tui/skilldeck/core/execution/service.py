"""One script run (or toolset mount or call) end to end: resolve, authorize, run, and
record it (telemetry ``skill_exec_attempt`` / ``skill_exec_result`` and an audit row for
every attempt: actions ``script_run`` / ``script_refused``, ``toolset_mount`` /
``toolset_call`` / ``toolset_refused``)."""

from __future__ import annotations

from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution.policy import authorize, check_runnable, resolve_script
from skilldeck.core.execution.runner import check_args, run_skill_file
from skilldeck.core.execution.toolsets import (
    Toolset,
    ToolsetRequest,
    describe_module,
    resolve_toolset,
    run_host,
)
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore
from skilldeck.core.telemetry import Telemetry

DEFAULT_TIMEOUT = 60.0
"""Seconds a run may take when ``exec_timeout_s`` is not a positive number."""


_ALLOWED_ACTIONS = ("script_run", "toolset_mount", "toolset_call")


def exec_timeout(settings: Settings) -> float:
    """Seconds a run may take: ``exec_timeout_s``, or :data:`DEFAULT_TIMEOUT`."""
    return settings.exec_timeout_s if settings.exec_timeout_s > 0 else DEFAULT_TIMEOUT


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
    (``skill``, ``script``, ``sha256`` of the script, ``skill_digest`` (what the permission
    pinned), ``allowed_by`` and the fields of
    :class:`~skilldeck.core.execution.runner.RunResult`, ``sandbox`` among them).

    Raises:
        SkilldeckError: the refusal (with ``reason``) or the failure to start.
    """
    writer = telemetry or Telemetry.from_settings(settings)
    ref, digest = f"{skill.name}/{script}", None
    try:
        check_runnable(settings, skill)
        request = resolve_script(skill, script)
        ref, digest = request.ref, request.digest
        check_args(args)
        allowed_by = authorize(settings, request, store, session_id, actor)
    except SkilldeckError as exc:
        reason = str(exc.details.get("reason", exc.code.value))
        _record(writer, store, session_id, actor, "script_refused", ref, digest, reason)
        raise
    _record(writer, store, session_id, actor, "script_run", ref, digest, allowed_by)
    timeout = exec_timeout(settings)
    result = run_skill_file(request.snapshot, request.script, args, timeout)
    writer.emit(
        "skill_exec_result",
        name=skill.name,
        script=ref,
        skill_digest=digest,
        sandbox=result.sandbox,
        exit_code=result.exit_code,
        latency_ms=result.duration_ms,
        truncated=result.truncated,
        timed_out=result.timed_out,
        session=session_id,
    )
    return {
        "skill": skill.name,
        "script": request.script,
        "sha256": request.sha256,
        "skill_digest": digest,
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
    allowed = action in _ALLOWED_ACTIONS
    writer.emit(
        "skill_exec_attempt",
        name=ref.split("/", 1)[0],
        kind="toolset" if action.startswith("toolset") else "script",
        script=ref,
        skill_digest=digest,
        allowed=allowed,
        reason=reason,
        session=session_id,
        actor=actor,
    )
    if store is None:
        return
    detail = {"skill_digest": digest, "allowed": allowed, "reason": reason}
    try:
        session = session_id if session_id and store.find(session_id) else None
        store.record(session, action, ref, detail, actor=actor)
    except SkilldeckError:
        if allowed:
            raise


def mount_toolset(
    settings: Settings,
    skill: Skill,
    spec: str,
    *,
    store: SessionStore | None = None,
    session_id: str | None = None,
    actor: str = "agent",
    telemetry: Telemetry | None = None,
) -> Toolset:
    """Authorize toolset ``spec`` of ``skill`` and describe it in a child process.

    In ``approval`` mode an unapproved module joins the session's pending queue. Audited
    as ``toolset_mount`` or ``toolset_refused``.

    Raises:
        SkilldeckError: the refusal (with ``reason``) or why the module cannot be described.
    """
    writer = telemetry or Telemetry.from_settings(settings)
    who = (store, session_id, actor)
    request, _ = _admit(settings, writer, skill, spec, "", "toolset_mount", who)
    return describe_module(request, exec_timeout(settings))


def call_toolset(
    settings: Settings,
    skill: Skill,
    spec: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    store: SessionStore | None = None,
    session_id: str | None = None,
    actor: str = "agent",
    telemetry: Telemetry | None = None,
) -> dict[str, Any]:
    """Call ``tool`` of toolset ``spec`` with JSON ``arguments`` in a child process, if
    the module as it is now is allowed (an edited module needs a new approval).

    Returns:
        ``skill``, ``toolset``, ``tool``, ``sha256``, ``allowed_by``, ``result`` (the
        tool's JSON value), ``stderr``, ``duration_ms``, ``network_isolated``,
        ``warnings``.

    Raises:
        SkilldeckError: the refusal, or the failure (``reason`` ``tool_error``,
            ``bad_arguments``, ``timeout``, ``module_error``, ...).
    """
    writer = telemetry or Telemetry.from_settings(settings)
    who = (store, session_id, actor)
    request, allowed_by = _admit(settings, writer, skill, spec, f":{tool}", "toolset_call", who)
    result: dict[str, Any] = {"exit_code": -1, "latency_ms": 0, "timed_out": False}
    try:
        payload = {"tool": tool, "arguments": arguments}
        answer, run = run_host(request, "call", payload, exec_timeout(settings))
        result.update(exit_code=run.exit_code, latency_ms=run.duration_ms)
    except SkilldeckError as exc:
        result.update(error=str(exc.details.get("reason", exc.code.value)))
        result.update(timed_out=result["error"] == "timeout")
        raise
    finally:
        writer.emit(
            "skill_exec_result",
            name=skill.name,
            kind="toolset",
            script=f"{request.ref}:{tool}",
            skill_digest=request.script.digest,
            truncated=False,
            session=session_id,
            **result,
        )
    return {
        "skill": skill.name,
        "toolset": spec,
        "tool": tool,
        "sha256": request.script.sha256,
        "skill_digest": request.script.digest,
        "allowed_by": allowed_by,
        "result": answer.get("result"),
        "stderr": run.stderr,
        "duration_ms": run.duration_ms,
        "network_isolated": run.network_isolated,
        "sandbox": run.sandbox,
        "warnings": run.warnings,
    }


def _admit(
    settings: Settings,
    writer: Telemetry,
    skill: Skill,
    spec: str,
    suffix: str,
    action: str,
    who: tuple[SessionStore | None, str | None, str],
) -> tuple[ToolsetRequest, str]:
    """Resolve and authorize a toolset module, recording the attempt as ``action`` (or
    ``toolset_refused``) on subject ``skill/path.py`` + ``suffix``."""
    store, session_id, actor = who
    ref, digest = f"{skill.name}/{spec}", None
    try:
        check_runnable(settings, skill)
        request = resolve_toolset(skill, spec)
        ref, digest = request.ref, request.script.digest
        allowed_by = authorize(settings, request.script, store, session_id, actor, "toolset")
    except SkilldeckError as exc:
        reason = str(exc.details.get("reason", exc.code.value))
        _record(writer, store, session_id, actor, "toolset_refused", ref + suffix, digest, reason)
        raise
    _record(writer, store, session_id, actor, action, ref + suffix, digest, allowed_by)
    return request, allowed_by
