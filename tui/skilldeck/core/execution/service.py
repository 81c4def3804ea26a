"""One script run (or toolset mount or call) end to end: resolve, authorize, run, and
record it (telemetry ``skill_exec_attempt`` / ``skill_exec_result`` and an audit row for
every attempt: actions ``script_run`` / ``script_refused``, ``toolset_mount`` /
``toolset_call`` / ``toolset_refused``). The ``script_run`` row is written before the run;
when it ends, a ``script_exit`` row (detail: ``run``, the id of that row, ``exit_code``,
``timed_out``, ``truncated``, ``duration_ms``, ``sandbox``) records how, since the log is
append-only."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution.policy import AllowedBy, authorize, check_runnable, resolve_script
from skilldeck.core.execution.runner import RunResult, check_args, check_paths, run_skill_file
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


@dataclass(slots=True)
class ScriptRun:
    """A script run that was allowed: what ran, what permitted it, what it produced.

    Attributes:
        skill: The skill's name.
        script: The script's path inside the skill.
        sha256: Hex SHA-256 of the script file.
        skill_digest: The digest of every file of the skill (what the permission pinned).
        allowed_by: :data:`AllowedBy`.
        run: The run itself (exit code, output, sandbox level, ...).
        session: The session it ran for, when a face says so.
    """

    skill: str
    script: str
    sha256: str
    skill_digest: str
    allowed_by: AllowedBy
    run: RunResult
    session: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the run's fields beside what ran and why."""
        head = {
            "skill": self.skill,
            "script": self.script,
            "sha256": self.sha256,
            "skill_digest": self.skill_digest,
            "allowed_by": self.allowed_by,
        }
        tail = {"session": self.session} if self.session is not None else {}
        return {**head, **self.run.to_dict(), **tail}


@dataclass(slots=True)
class ToolsetCall:
    """A toolset tool's answer, with what ran and what permitted it.

    Attributes:
        skill, toolset, tool: Which tool of which module of which skill.
        sha256: Hex SHA-256 of the module file.
        skill_digest: The digest of every file of the skill.
        allowed_by: :data:`AllowedBy`.
        result: The tool's JSON value.
        stderr: What the module wrote to stderr.
        duration_ms: Wall-clock time of the call.
        network_isolated: True when the call had no network.
        sandbox: The sandbox level it ran at.
        warnings: What the sandbox level did not stop here.
    """

    skill: str
    toolset: str
    tool: str
    sha256: str
    skill_digest: str
    allowed_by: AllowedBy
    result: Any
    stderr: str
    duration_ms: int
    network_isolated: bool
    sandbox: str
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


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
) -> ScriptRun:
    """Run ``script`` of ``skill`` if allowed; what ran, why, and the run (its sandbox
    level among its fields).

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
        check_paths(args, request.snapshot.folder)
    except SkilldeckError as exc:
        reason = str(exc.details.get("reason", exc.code.value))
        _record(writer, store, session_id, actor, "script_refused", ref, digest, reason)
        raise
    row = _record(writer, store, session_id, actor, "script_run", ref, digest, allowed_by)
    timeout = exec_timeout(settings)
    try:
        result = run_skill_file(request.snapshot, request.script, args, timeout)
    except SkilldeckError as exc:
        reason = str(exc.details.get("reason", exc.code.value))
        failed = {"run": row, "exit_code": None, "error": reason}
        _record_exit(store, session_id, actor, ref, failed)
        raise
    ended = {"run": row, "exit_code": result.exit_code, "timed_out": result.timed_out}
    ended |= {"truncated": result.truncated, "duration_ms": result.duration_ms}
    _record_exit(store, session_id, actor, ref, {**ended, "sandbox": result.sandbox})
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
    return ScriptRun(skill.name, request.script, request.sha256, digest, allowed_by, result)


def _record(
    writer: Telemetry,
    store: SessionStore | None,
    session_id: str | None,
    actor: str,
    action: str,
    ref: str,
    digest: str | None,
    reason: str,
) -> int | None:
    """Telemetry ``skill_exec_attempt`` and one audit row for an attempt; the row's id."""
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
        return None
    detail = {"skill_digest": digest, "allowed": allowed, "reason": reason}
    try:
        session = session_id if session_id and store.find(session_id) else None
        return store.record(session, action, ref, detail, actor=actor)
    except SkilldeckError:
        if allowed:
            raise
        return None


def _record_exit(
    store: SessionStore | None,
    session_id: str | None,
    actor: str,
    ref: str,
    detail: dict[str, Any],
) -> None:
    """The ``script_exit`` audit row of a run that was allowed (how it ended)."""
    if store is not None:
        session = session_id if session_id and store.find(session_id) else None
        store.record(session, "script_exit", ref, detail, actor=actor)


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
) -> ToolsetCall:
    """Call ``tool`` of toolset ``spec`` with JSON ``arguments`` in a child process, if
    the module as it is now is allowed (an edited module needs a new approval).

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
    return ToolsetCall(
        skill.name,
        spec,
        tool,
        request.script.sha256,
        request.script.digest,
        allowed_by,
        answer.get("result"),
        run.stderr,
        run.duration_ms,
        run.network_isolated,
        run.sandbox,
        run.warnings,
    )


def _admit(
    settings: Settings,
    writer: Telemetry,
    skill: Skill,
    spec: str,
    suffix: str,
    action: str,
    who: tuple[SessionStore | None, str | None, str],
) -> tuple[ToolsetRequest, AllowedBy]:
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
