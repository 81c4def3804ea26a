"""The session half of the write door: create, end, decide, change the mode, check, prune.

:class:`SessionActions` is the base of :class:`~.actions.Actions` (``Workspace.actions``),
so every face starts, ends and governs a session through the same calls, and the same
rules hold whoever acts:

- an agent creates sessions, ends the ones an agent created and asks for checks; deciding
  (approve, deny, revoke), changing the mode, force-loading and pruning are an operator's
  (PERMISSION_DENIED, reason ``operator_only``; ``operator_session`` for an agent ending an
  operator's session);
- an unknown session is NOT_FOUND; a decision or a mode change in an ended session is
  INVALID_PARAM (reason ``session_ended``), and nothing is written;
- each change is one audit row written by the store (``create``, ``approve``, ``deny``,
  ``revoke``, ``mode``, ``end``, ``request``, a prune ``checkpoint``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.sessions import PruneResult, Session, SessionStore
    from skilldeck.core.sessions.model import Decision
    from skilldeck.core.workspace.actions import SessionRef

__all__ = ["SessionActions"]

_AGENT = "agent"
"""The actor name of a model acting through the MCP server: the one actor the door limits."""


class SessionActions:
    """What starts, ends and governs a session, for every face (see the module docstring)."""

    @staticmethod
    def _require_operator(actor: str, what: str) -> None:
        """PERMISSION_DENIED ``operator_only`` when an agent asks for an operator's change."""
        if actor == _AGENT:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"an agent cannot {what}: that is an operator's decision",
                reason="operator_only",
            )

    def create(
        self,
        store: SessionStore,
        *,
        actor: str,
        mode: str | None = None,
        label: str = "",
        guard: Callable[[Callable[[], Any]], Any] | None = None,
    ) -> Session:
        """Start a session (``mode`` defaults to the ``session_mode`` setting).

        Args:
            store: Where the session is kept.
            actor: Who starts it (an agent's sessions are the ones an agent may end).
            mode: Policy mode; INVALID_PARAM for an unknown one.
            label: Free text shown with the session.
            guard: As :attr:`SessionRef.guard`.
        """
        created: Session = (guard or _plain)(
            lambda: store.create(mode=mode, actor=actor, label=label)
        )
        return created

    def end(self, *, actor: str, session: SessionRef) -> Session:
        """End the session: checks answer ``no_session`` from now on. Ending an ended
        session changes nothing. An agent ends only a session an agent created."""
        now = self._current(session, must_be_open=False)
        if actor == _AGENT and now.created_by != _AGENT:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"an agent cannot end session {now.id}: an operator started it",
                reason="operator_session",
                session=now.id,
            )
        if not now.is_open:
            return now
        store, session_id = session.store, session.id
        ended: Session = session.call(lambda: store.end(session_id, actor=actor))
        return ended

    def approve(self, entry: str, *, actor: str, session: SessionRef) -> Session:
        """Approve a tool (or a bound file entry) for the session."""
        return self._operator_change(
            actor, "approve a tool", session, lambda st, sid: st.approve(sid, entry, actor=actor)
        )

    def deny(self, entry: str, *, actor: str, session: SessionRef) -> Session:
        """Deny a tool (or a bound file entry) for the session."""
        return self._operator_change(
            actor, "deny a tool", session, lambda st, sid: st.deny(sid, entry, actor=actor)
        )

    def revoke(self, entry: str, *, actor: str, session: SessionRef) -> Session:
        """Forget an approval or denial of a tool (or a bound file entry)."""
        return self._operator_change(
            actor, "revoke a decision", session, lambda st, sid: st.revoke(sid, entry, actor=actor)
        )

    def set_mode(self, mode: str, *, actor: str, session: SessionRef) -> Session:
        """Change the session's policy mode (INVALID_PARAM for an unknown mode)."""
        return self._operator_change(
            actor,
            "change a session's mode",
            session,
            lambda st, sid: st.set_mode(sid, mode, actor=actor),
        )

    def _operator_change(
        self,
        actor: str,
        what: str,
        session: SessionRef,
        change: Callable[[SessionStore, str], Session],
    ) -> Session:
        """``change(store, session_id)``, for an operator only and in an open session."""
        self._require_operator(actor, what)
        self._current(session)
        store, session_id = session.store, session.id
        changed: Session = session.call(lambda: change(store, session_id))
        return changed

    def check(self, tool: str, *, actor: str, session: SessionRef) -> Decision:
        """May the session use ``tool`` now? Queues an approval request where the mode
        asks for one (audit ``request``); an unknown or ended session answers
        ``no_session``."""
        store, session_id = session.store, session.id
        decision: Decision = session.call(lambda: store.check(session_id, tool, actor=actor))
        return decision

    def prune(
        self,
        store: SessionStore,
        older_than_days: float,
        *,
        actor: str,
        guard: Callable[[Callable[[], Any]], Any] | None = None,
    ) -> PruneResult:
        """Delete sessions ended more than ``older_than_days`` ago and the audit rows past
        retention (:meth:`SessionStore.prune`; INVALID_PARAM SS008 under a day)."""
        self._require_operator(actor, "prune sessions")
        pruned: PruneResult = (guard or _plain)(lambda: store.prune(older_than_days, actor=actor))
        return pruned

    @staticmethod
    def _current(session: SessionRef, *, must_be_open: bool = True) -> Session:
        """The session as it is now; when ``must_be_open``, one that has not ended.

        Raises:
            SkilldeckError: NOT_FOUND for an unknown session; INVALID_PARAM
                ``session_ended``.
        """
        store, session_id = session.store, session.id
        now: Session = session.call(lambda: store.get(session_id))
        if must_be_open and not now.is_open:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"session {now.id} has ended: nothing changes in it",
                reason="session_ended",
                session=now.id,
            )
        return now


def _plain(action: Callable[[], Any]) -> Any:
    return action()
