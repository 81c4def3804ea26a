"""Sessions and their tool policy: the state the TUI edits and the MCP server enforces.

Policy of :meth:`SessionStore.check` (first rule that applies wins):

1. unknown or ended session -> not allowed, reason ``no_session``;
2. a matching denial -> not allowed, ``denied`` (deny wins over everything);
3. a matching approval -> allowed, ``approved``;
4. a matching entry of an active skill's ``allowed-tools`` -> allowed, ``skill_allowlist``;
5. otherwise by mode: ``permissive`` -> allowed, ``permissive`` (a warning is logged and
   audited); ``strict`` -> not allowed, ``not_in_allowlist``; ``approval`` -> not allowed,
   ``requires_approval`` true, ``not_in_allowlist``, and the tool joins the pending queue.

Matching is described in :mod:`skilldeck.core.sessions.model`.
"""

from __future__ import annotations

import builtins
import logging
import math
import re
import secrets
import time
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.safe_text import for_terminal, is_safe_name
from skilldeck.core.sessions.backend import SessionBackend
from skilldeck.core.sessions.chain import CHECKPOINT, MIN_RETENTION, AuditVerification
from skilldeck.core.sessions.model import (
    MODES,
    AuditEntry,
    Decision,
    PruneResult,
    Session,
    first_match,
)
from skilldeck.core.sessions.sqlite import SqliteBackend
from skilldeck.core.telemetry import Telemetry

log = logging.getLogger(__name__)
DAY = 86_400.0
_HASH = re.compile(r"[0-9a-f]{64}")


TOOL_NAME_MAX = 500
"""Longest tool name (with its specifier, e.g. ``Bash(git log:*)``) the store accepts."""
SKILL_NAME_MAX = 200
"""Longest skill name the store accepts."""


def _shown(text: str, limit: int = 60) -> str:
    """A short, terminal-safe rendering of untrusted text for an error message."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return for_terminal(repr(cut))


def check_name(value: object, kind: str = "tool", max_length: int = TOOL_NAME_MAX) -> str:
    """``value`` trimmed, when it is a usable tool (or skill) name.

    Inner runs of spaces are collapsed (``Bash( git  log )`` and ``Bash( git log )`` are
    one tool). A name that is empty, longer than ``max_length`` or holds a control or
    bidirectional character (escape sequences, newlines, NUL, U+202E) is refused: it would
    forge audit lines and terminal output.

    Raises:
        SkilldeckError: INVALID_PARAM with the reason.
    """
    if not isinstance(value, str):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{kind} name must be a string")
    name = value.strip(" ")
    if not name:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{kind} name is empty")
    if len(name) > max_length:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{kind} name is longer than {max_length} characters: {_shown(name)}",
        )
    if not is_safe_name(name, max_length):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{kind} name holds control or bidirectional characters: {_shown(name)}",
        )
    return " ".join(name.split())


def _clean_tool(tool: str) -> str:
    return check_name(tool, "tool", TOOL_NAME_MAX)


def check_mode(mode: str) -> str:
    """``mode`` if it is a policy mode, else SkilldeckError INVALID_PARAM."""
    if mode not in MODES:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown session mode {mode!r} (choose from {', '.join(MODES)})",
        )
    return mode


def check_retention(days: object, name: str = "audit_retention_days") -> float:
    """``days`` as a float, when it keeps at least a day: nothing younger is ever pruned.

    Raises:
        SkilldeckError: INVALID_PARAM (diagnostic SS008) for less than a day, NaN or a
            value that is not a number.
    """
    value = days if isinstance(days, int | float) and not isinstance(days, bool) else math.nan
    if not float(value) * DAY >= MIN_RETENTION:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{name} must be at least 1 (day), got {days!r}: nothing younger than a day is "
            "pruned, and the audit of open sessions never is",
            diagnostic="SS008",
        )
    return float(value)


def open_backend(settings: Settings, path: Path | None = None) -> SessionBackend:
    """The storage ``settings`` select: PostgreSQL when ``settings.sessions_url`` is set
    (and no other SQLite ``path`` than the default was asked for), else SQLite.

    Raises:
        SkilldeckError: INVALID_PARAM for a URL that is not ``postgresql://``;
            EXECUTION_ERROR when the database cannot be used.
    """
    url = settings.sessions_url.strip()
    if url and (path is None or path == settings.sessions_db):
        if not url.startswith(("postgresql://", "postgres://")):
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                "sessions_url must be a postgresql:// URL (unset it for the embedded SQLite)",
            )
        from skilldeck.core.sessions.postgres import PostgresBackend

        return PostgresBackend(url)
    return SqliteBackend(path or settings.sessions_db)


def describe_backend(settings: Settings, *, retry_seconds: float = 2.0) -> dict[str, Any]:
    """Which sessions backend ``settings`` select and whether it answers, without raising
    (``skilldeck doctor``): keys ``backend``, ``location``, ``reachable``, and
    ``schema_version``/``server_version`` and ``audit`` (the audit chain's
    :meth:`~skilldeck.core.sessions.chain.AuditVerification.to_dict`), or ``error``."""
    url = settings.sessions_url.strip()
    if not url:
        info: dict[str, Any] = {"backend": "sqlite", "location": str(settings.sessions_db)}
        if not settings.sessions_db.exists():
            return {**info, "reachable": True, "schema_version": None, "note": "not created yet"}
    else:
        from skilldeck.core.sessions.postgres import redact

        info = {"backend": "postgresql", "location": redact(url)}
    backend: Any = None
    try:
        if url:
            if not url.startswith(("postgresql://", "postgres://")):
                raise SkilldeckError(
                    ErrorCode.INVALID_PARAM, "sessions_url must be a postgresql:// URL"
                )
            from skilldeck.core.sessions.postgres import PostgresBackend

            backend = PostgresBackend(url, retry_seconds=retry_seconds)
        else:
            backend = SqliteBackend(settings.sessions_db)
        return {**info, **backend.describe(), "audit": backend.verify_audit(None).to_dict()}
    except SkilldeckError as exc:
        return {**info, "reachable": False, "error": exc.message}
    finally:
        if backend is not None:
            backend.close()


class SessionStore:
    """Sessions, approvals and the audit log, shared by every process.

    Args:
        path: SQLite file; default ``settings.sessions_db`` (``SKILLDECK_HOME/sessions.db``).
        settings: Settings (default mode, retention, telemetry, ``sessions_url``); loaded
            when omitted. A ``sessions_url`` selects PostgreSQL (see :func:`open_backend`).
        backend: Another storage; overrides ``path`` and ``sessions_url``.
        telemetry: Telemetry writer; default from ``settings``.

    Raises:
        SkilldeckError: EXECUTION_ERROR when the database is damaged (diagnostic SS001).
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        settings: Settings | None = None,
        backend: SessionBackend | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.path = path or self.settings.sessions_db
        self.backend: SessionBackend = backend or open_backend(self.settings, path)
        self._own_telemetry = telemetry is None
        self.telemetry = telemetry or Telemetry.from_settings(self.settings)

    def close(self) -> None:
        """Release the database connection (and the telemetry file it opened)."""
        self.backend.close()
        if self._own_telemetry:
            self.telemetry.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self, mode: str | None = None, actor: str = "operator", label: str = "") -> Session:
        """Start a session (mode defaults to ``settings.session_mode``)."""
        chosen = check_mode(mode or self.settings.session_mode)
        return self.backend.create_session(secrets.token_hex(6), chosen, label, actor, time.time())

    def find(self, session_id: str) -> Session | None:
        """The session, or None."""
        return self.backend.get_session(session_id)

    def get(self, session_id: str) -> Session:
        """The session; SkilldeckError NOT_FOUND when unknown."""
        session = self.backend.get_session(session_id)
        if session is None:
            raise self._unknown(session_id)
        return session

    @staticmethod
    def _unknown(session_id: str) -> SkilldeckError:
        return SkilldeckError(
            ErrorCode.NOT_FOUND, f"no session with id {_shown(session_id)}", session=session_id
        )

    def list(self, include_ended: bool = False) -> builtins.list[Session]:
        """Sessions, newest first."""
        return self.backend.list_sessions(include_ended)

    def _require(self, ok: bool, session_id: str) -> None:
        if not ok:
            raise self._unknown(session_id)

    def activate_skill(
        self,
        session_id: str,
        name: str,
        allowed_tools: builtins.list[str] | tuple[str, ...] = (),
        actor: str = "agent",
        arguments: str = "",
    ) -> Session:
        """Mark a skill active; its ``allowed-tools`` join the session's allowlist.

        An ``allowed-tools`` entry that is not a usable tool name (control characters, too
        long) is left out with a warning: it grants nothing, which is the safe reading.

        Raises:
            SkilldeckError: INVALID_PARAM for a bad skill name; NOT_FOUND for an unknown
                session.
        """
        skill = check_name(name, "skill", SKILL_NAME_MAX)
        tools: builtins.list[str] = []
        for entry in allowed_tools:
            if not str(entry).strip():
                continue
            try:
                tools.append(_clean_tool(entry))
            except SkilldeckError as exc:
                log.warning("skill %s: allowed-tools entry ignored: %s", skill, exc.message)
        self._require(
            self.backend.activate_skill(session_id, skill, tools, arguments, actor, time.time()),
            session_id,
        )
        return self.get(session_id)

    def approve(self, session_id: str, tool: str, actor: str = "operator") -> Session:
        """Approve a tool for the session (replaces a denial, clears it from pending)."""
        self._require(
            self.backend.set_tool_state(
                session_id, _clean_tool(tool), "approved", actor, time.time()
            ),
            session_id,
        )
        return self.get(session_id)

    def deny(self, session_id: str, tool: str, actor: str = "operator") -> Session:
        """Deny a tool for the session; a denial wins over approvals and allowlists."""
        self._require(
            self.backend.set_tool_state(
                session_id, _clean_tool(tool), "denied", actor, time.time()
            ),
            session_id,
        )
        return self.get(session_id)

    def revoke(self, session_id: str, tool: str, actor: str = "operator") -> Session:
        """Forget an approval or denial of ``tool``."""
        self._require(
            self.backend.set_tool_state(session_id, _clean_tool(tool), None, actor, time.time()),
            session_id,
        )
        return self.get(session_id)

    def set_mode(self, session_id: str, mode: str, actor: str = "operator") -> Session:
        """Change the session's policy mode."""
        self._require(
            self.backend.set_mode(session_id, check_mode(mode), actor, time.time()), session_id
        )
        return self.get(session_id)

    def request_approval(self, session_id: str, tool: str, actor: str = "agent") -> None:
        """Put ``tool`` on the session's pending queue (once) for an operator to decide."""
        name = _clean_tool(tool)
        session = self.get(session_id)
        if name not in session.pending:
            self.backend.add_pending(session_id, name, actor, time.time())

    def record(
        self,
        session_id: str | None,
        action: str,
        subject: str,
        detail: dict[str, Any] | None = None,
        actor: str = "agent",
    ) -> int:
        """Append one audit row (e.g. a script run, allowed or not); return its id.

        Raises:
            SkilldeckError: INVALID_PARAM for the action only pruning writes.
        """
        if action == CHECKPOINT:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"audit action {CHECKPOINT!r} is written by pruning only"
            )
        return self.backend.append_audit(
            session_id, actor, action, subject, dict(detail or {}), time.time()
        )

    def pending(self, session_id: str) -> builtins.list[str]:
        """Tools waiting for an operator's decision, oldest first."""
        return self.get(session_id).pending

    def end(self, session_id: str, actor: str = "operator") -> Session:
        """End the session: checks answer ``no_session`` from now on."""
        self._require(self.backend.end_session(session_id, actor, time.time()), session_id)
        return self.get(session_id)

    def decide(self, session: Session | None, tool: str) -> Decision:
        """The policy decision for ``tool`` in a snapshot, without side effects."""
        if session is None or not session.is_open:
            return Decision(False, False, "no_session")
        denied = first_match(session.denied, tool)
        if denied is not None:
            return Decision(False, False, "denied", denied)
        approved = first_match(session.approved, tool)
        if approved is not None:
            return Decision(True, False, "approved", approved)
        allowed = first_match(session.allowed_tools, tool)
        if allowed is not None:
            return Decision(True, False, "skill_allowlist", allowed)
        if session.mode == "permissive":
            return Decision(True, False, "permissive")
        if session.mode == "approval":
            return Decision(False, True, "not_in_allowlist")
        return Decision(False, False, "not_in_allowlist")

    def check(self, session_id: str, tool: str, actor: str = "agent") -> Decision:
        """May the session use ``tool`` now? Queues an approval request when needed.

        Emits the ``tool_authorization`` telemetry event. Never raises for an unknown
        session: the answer is ``no_session``.

        Raises:
            SkilldeckError: INVALID_PARAM for a name :func:`check_name` refuses;
                EXECUTION_ERROR when the database cannot be used (full disk: SS005).
        """
        name = _clean_tool(tool)
        session = self.backend.get_session(session_id)
        decision = self.decide(session, name)
        if decision.requires_approval and session is not None and name not in session.pending:
            self.backend.add_pending(session_id, name, actor, time.time())
        elif decision.reason == "permissive":
            log.warning(
                "session %s: %s allowed only because the mode is permissive", session_id, name
            )
            self.backend.append_audit(session_id, actor, "permissive_allow", name, {}, time.time())
        self.telemetry.emit(
            "tool_authorization",
            session=session_id,
            tool=name,
            decision=decision.decision,
            reason=decision.reason,
            actor=actor,
        )
        return decision

    def prune(
        self,
        older_than_days: float = 30.0,
        *,
        audit_retention_days: float | None = None,
        actor: str = "operator",
    ) -> PruneResult:
        """Delete sessions ended more than ``older_than_days`` ago.

        Their audit rows stay; audit rows older than ``audit_retention_days`` (default
        ``settings.audit_retention_days``) are deleted whatever their session, except
        those of sessions still open, and only from the oldest end of the log: a row that
        must stay keeps every newer one. A checkpoint row then records the hash of the
        last row deleted, so :meth:`verify_audit` still holds.

        Raises:
            SkilldeckError: INVALID_PARAM (SS008) when either is less than a day.
        """
        ended_days = check_retention(older_than_days, "older_than_days")
        retention = check_retention(
            self.settings.audit_retention_days
            if audit_retention_days is None
            else audit_retention_days
        )
        now = time.time()
        return self.backend.prune(now - ended_days * DAY, now - retention * DAY, actor, now)

    def verify_audit(self, head: str | None = None) -> AuditVerification:
        """Check the audit log's hash chain: a deleted, edited or reordered row, or a head
        kept outside the rows that no longer names the newest one, is a problem.

        Args:
            head: A head hash recorded earlier (from a previous verification): it must
                still be in the chain, which catches even a rewrite of the whole log.

        Raises:
            SkilldeckError: INVALID_PARAM when ``head`` is not a SHA-256 in hex.
        """
        anchor = None if head is None else head.strip().lower()
        if anchor is not None and not _HASH.fullmatch(anchor):
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"head must be 64 hex digits (SHA-256), got {_shown(head or '')}",
            )
        return self.backend.verify_audit(anchor)

    def audit(
        self, session_id: str | None = None, since_id: int = 0, limit: int | None = None
    ) -> builtins.list[AuditEntry]:
        """Audit rows (one session's, or all) with id > ``since_id``, oldest first."""
        return self.backend.audit(session_id, since_id, limit)

    def last_audit_id(self) -> int:
        """Cheap change counter for polling: grows with every change in any process."""
        return self.backend.last_audit_id()

    @property
    def live(self) -> bool:
        """True when the backend announces changes (PostgreSQL LISTEN/NOTIFY)."""
        return callable(getattr(self.backend, "wait_for_change", None))

    def wait_for_change(self, since_id: int, timeout: float = 1.0) -> int:
        """Block until the audit log grows past ``since_id`` or ``timeout`` passes; return
        the highest audit id. Announced changes (PostgreSQL) wake it at once; otherwise
        the cheap :meth:`last_audit_id` is polled every 0.2 s.

        Raises:
            SkilldeckError: EXECUTION_ERROR when the database stays unreachable.
        """
        waiter = getattr(self.backend, "wait_for_change", None)
        if callable(waiter):
            return int(waiter(since_id, timeout))
        deadline = time.monotonic() + timeout
        while True:
            current = self.backend.last_audit_id()
            remaining = deadline - time.monotonic()
            if current > since_id or remaining <= 0:
                return current
            time.sleep(min(0.2, remaining))

    def describe(self) -> dict[str, Any]:
        """Which backend is in use, where, and whether it answers (``skilldeck doctor``)."""
        describe = getattr(self.backend, "describe", None)
        if callable(describe):
            return dict(describe())
        return {"backend": type(self.backend).__name__, "reachable": True}

    def data_version(self) -> int:
        """Alias of :meth:`last_audit_id`."""
        return self.last_audit_id()

    def changes_since(self, audit_id: int) -> builtins.list[AuditEntry]:
        """Audit rows appended after ``audit_id`` (what changed since the last poll)."""
        return self.backend.audit(None, audit_id, None)

    def show(self, session_id: str) -> dict[str, Any]:
        """The session's JSON record with its audit entries (``session show``)."""
        data = self.get(session_id).to_dict()
        data["audit"] = [e.to_dict() for e in self.audit(session_id)]
        return data
