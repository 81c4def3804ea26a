"""The storage interface of the session store.

Policy lives in :class:`skilldeck.core.sessions.store.SessionStore`; a backend only keeps
state. Every mutating method is one atomic transaction that also appends its audit row, so
another backend (PostgreSQL for fleets of servers) needs nothing beyond these methods.
Times are Unix seconds (float). Mutations on an unknown session return False / None.
"""

from __future__ import annotations

from typing import Any, Protocol

from skilldeck.core.sessions.chain import AuditVerification
from skilldeck.core.sessions.model import AuditEntry, PruneResult, Session


class SessionBackend(Protocol):
    """What a session store needs from its storage."""

    def create_session(
        self, session_id: str, mode: str, label: str, actor: str, now: float
    ) -> Session:
        """Insert a new session (audit action ``create``)."""
        ...

    def get_session(self, session_id: str) -> Session | None:
        """Snapshot of one session, or None."""
        ...

    def list_sessions(self, include_ended: bool) -> list[Session]:
        """Snapshots, newest first."""
        ...

    def activate_skill(
        self,
        session_id: str,
        name: str,
        allowed_tools: list[str],
        arguments: str,
        actor: str,
        now: float,
    ) -> bool:
        """Add or refresh an active skill (audit ``activate``); pending requests its
        allowed tools cover are resolved."""
        ...

    def set_tool_state(
        self, session_id: str, tool: str, state: str | None, actor: str, now: float
    ) -> bool:
        """Mark ``tool`` approved/denied (None: forget), dropping it from pending."""
        ...

    def set_mode(self, session_id: str, mode: str, actor: str, now: float) -> bool:
        """Change the policy mode (audit ``mode``)."""
        ...

    def add_pending(self, session_id: str, tool: str, actor: str, now: float) -> bool:
        """Queue an approval request; True when it was not already pending."""
        ...

    def end_session(self, session_id: str, actor: str, now: float) -> bool:
        """Mark the session ended (audit ``end``)."""
        ...

    def append_audit(
        self,
        session_id: str | None,
        actor: str,
        action: str,
        subject: str,
        detail: dict[str, Any],
        now: float,
    ) -> int:
        """Append one audit row without another change; return its id."""
        ...

    def prune(
        self, ended_before: float, audit_before: float, actor: str, now: float
    ) -> PruneResult:
        """Delete sessions ended before ``ended_before`` and the oldest audit rows older
        than ``audit_before`` of no open session, keeping the hash chain verifiable; the
        audit of pruned sessions stays until its own retention. Both cutoffs are at least
        a day before ``now``."""
        ...

    def verify_audit(self, anchor: str | None) -> AuditVerification:
        """Check the audit log's hash chain, its head, and that ``anchor`` (a head hash
        recorded earlier) is still in it."""
        ...

    def audit(self, session_id: str | None, since_id: int, limit: int | None) -> list[AuditEntry]:
        """Audit rows with id > ``since_id``, oldest first."""
        ...

    def last_audit_id(self) -> int:
        """Highest audit id (0 when empty): changes whenever anything changes."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...
