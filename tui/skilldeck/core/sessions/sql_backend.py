"""The bookkeeping the SQL backends of the session store share.

:class:`SqlReader` reads sessions and the audit log and checks its chain, for every SQL
backend. :class:`SqlBackend` adds the changes, written by the client (SQLite): which rows a
change touches, which pending requests a decision resolves, and what
its audit row says. A backend supplies its dialect as :class:`Statements` and a few hooks:
how a transaction runs (:meth:`SqlBackend._write`, :meth:`SqlBackend._read`), how the
next audit row is linked to the chain and written with its head, how the oldest audit rows
are pruned, how a session row is loaded with its skills, tools and pending queue, and how
pending rows are deleted. Every mutation runs inside one ``_write`` transaction that also
appends its audit row; the session row is read first. PostgreSQL writes through
``SECURITY DEFINER`` functions instead (:mod:`skilldeck.core.sessions.postgres`). The hash
chain itself is :mod:`skilldeck.core.sessions.chain`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions.chain import (
    CHECKPOINT,
    MIN_RETENTION,
    AuditVerification,
    ChainRow,
    row_hash,
    verify_chain,
)
from skilldeck.core.sessions.model import AuditEntry, PruneResult, Session, tool_matches
from skilldeck.core.sessions.rows import audit_entry, encode_detail

T = TypeVar("T")

VERBS: dict[str | None, str] = {"approved": "approve", "denied": "deny", None: "revoke"}
"""Audit action of :meth:`SqlBackend.set_tool_state` by new state."""


def covered_by(waiting: list[str], allowed_tools: list[str]) -> list[str]:
    """The pending requests a skill activated with ``allowed_tools`` resolves."""
    return [t for t in waiting if any(tool_matches(a, t) for a in allowed_tools)]


def settled_by(waiting: list[str], tool: str, state: str | None) -> list[str]:
    """The pending requests a decision on ``tool`` resolves: those it covers (a
    revocation, ``None``: only ``tool`` itself)."""
    if state is None:
        return [t for t in waiting if t == tool]
    return [t for t in waiting if t == tool or tool_matches(tool, t)]


def check_cutoffs(ended_before: float, audit_before: float, now: float) -> None:
    """Refuse pruning cutoffs less than a day before ``now``.

    Raises:
        SkilldeckError: INVALID_PARAM (SS008).
    """
    shortest = MIN_RETENTION - 0.001  # float rounding of ``now - days * DAY``
    if not (now - ended_before >= shortest and now - audit_before >= shortest):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            "pruning keeps at least a day of sessions and audit log",
            diagnostic="SS008",
        )


class Cursor(Protocol):
    """The DB-API cursor calls the shared bookkeeping makes (sqlite3 and psycopg)."""

    @property
    def rowcount(self) -> int:
        """Rows the last statement changed."""
        ...

    def execute(self, sql: str, params: Any = ..., /) -> Any:
        """Run one statement."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None."""
        ...

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        ...


@dataclass(frozen=True, slots=True)
class Reads:
    """One dialect's SQL for :class:`SqlReader` (parameters in the order noted).

    Attributes:
        param: The parameter placeholder (``?`` or ``%s``).
        select_session: The row :meth:`SqlReader._load` reads, of session (id).
        all_sessions: Those rows of every session, newest first.
        open_sessions: Those rows of the sessions not ended, newest first.
        chain_rows: () -> every audit row as :class:`ChainRow` fields (detail as text),
            oldest first.
        audit_since: (since_id) -> audit rows; ``AND``/``ORDER BY``/``LIMIT`` are appended.
        max_audit_id: () -> (highest id or NULL).
    """

    param: str
    select_session: str
    all_sessions: str
    open_sessions: str
    chain_rows: str
    audit_since: str
    max_audit_id: str


@dataclass(frozen=True, slots=True)
class Statements(Reads):
    """:class:`Reads` and the SQL of the changes :class:`SqlBackend` writes.

    Attributes:
        insert_session: (id, created, mode, label, created_by).
        lock_session: (id) -> (mode, ended), locking the row where the dialect can.
        upsert_skill: (session, name, allowed_tools JSON, arguments, actor, activated).
        pending_tools: (session) -> (tool) rows.
        tool_state: (session, tool) -> (state, actor).
        put_tool_state: (session, tool, state, actor, time), insert or replace.
        forget_tool_state: (session, tool).
        set_mode: (mode, id).
        insert_pending: (session, tool, actor, requested); changes no row when pending.
        end_session: (ended, id).
        clear_pending: (session).
        delete_ended: (ended_before) -> rowcount.
    """

    insert_session: str
    lock_session: str
    upsert_skill: str
    pending_tools: str
    tool_state: str
    put_tool_state: str
    forget_tool_state: str
    set_mode: str
    insert_pending: str
    end_session: str
    clear_pending: str
    delete_ended: str


class SqlReader(ABC):
    """The reads of :class:`~skilldeck.core.sessions.backend.SessionBackend` over a SQL
    database; a subclass sets :attr:`sql` and implements the hooks."""

    sql: Reads
    """The subclass's dialect."""

    @abstractmethod
    def _read(self, action: Callable[[Any], T]) -> T:
        """Run ``action`` on a consistent snapshot."""

    @abstractmethod
    def _head(self, cur: Any) -> tuple[int, str] | None:
        """The ``(id, hash)`` head kept outside the audit rows, or None when missing."""

    @abstractmethod
    def _load(self, cur: Any, row: Any) -> Session:
        """The session of a :attr:`Reads.select_session` row."""

    @staticmethod
    def _decode_detail(value: Any) -> object:
        """An audit detail as the driver returns it, decoded."""
        return value

    def _snapshot(self, action: Callable[[Any], T]) -> T:
        """Run ``action`` (several statements) on one consistent snapshot."""
        return self._read(action)

    def get_session(self, session_id: str) -> Session | None:
        """Snapshot of one session, or None."""

        def action(cur: Cursor) -> Session | None:
            cur.execute(self.sql.select_session, (session_id,))
            row = cur.fetchone()
            return self._load(cur, row) if row else None

        return self._read(action)

    def list_sessions(self, include_ended: bool) -> list[Session]:
        """Snapshots, newest first."""
        sql = self.sql.all_sessions if include_ended else self.sql.open_sessions

        def action(cur: Cursor) -> list[Session]:
            cur.execute(sql)
            return [self._load(cur, row) for row in cur.fetchall()]

        return self._read(action)

    def verify_audit(self, anchor: str | None = None) -> AuditVerification:
        """Check the audit log's hash chain and head (see
        :func:`~skilldeck.core.sessions.chain.verify_chain`)."""

        def action(cur: Cursor) -> AuditVerification:
            head = self._head(cur)
            cur.execute(self.sql.chain_rows)
            rows = (ChainRow(*row) for row in iter(cur.fetchone, None))
            return verify_chain(rows, head, anchor)

        return self._snapshot(action)

    def audit(self, session_id: str | None, since_id: int, limit: int | None) -> list[AuditEntry]:
        """Audit rows with id > ``since_id``, oldest first."""
        mark = self.sql.param
        sql = self.sql.audit_since
        params: list[Any] = [since_id]
        if session_id is not None:
            sql += f" AND session_id = {mark}"
            params.append(session_id)
        sql += " ORDER BY id"
        if limit is not None:
            sql += f" LIMIT {mark}"
            params.append(limit)
        decode = self._decode_detail

        def action(cur: Cursor) -> list[AuditEntry]:
            cur.execute(sql, params)
            return [audit_entry(row, decode(row[6])) for row in cur.fetchall()]

        return self._read(action)

    def last_audit_id(self) -> int:
        """Highest audit id (0 when empty): changes whenever anything changes."""

        def action(cur: Cursor) -> int:
            cur.execute(self.sql.max_audit_id)
            return int(cur.fetchone()[0] or 0)

        return self._read(action)


class SqlBackend(SqlReader):
    """:class:`~skilldeck.core.sessions.backend.SessionBackend` over a SQL database whose
    client writes the changes and their audit rows; a subclass sets :attr:`sql` and
    implements the hooks."""

    sql: Statements
    """The subclass's dialect."""

    # --- hooks ----------------------------------------------------------------------------

    @abstractmethod
    def _write(self, action: Callable[[Any], T]) -> T:
        """Run ``action`` in one writing transaction; return once it is committed."""

    @abstractmethod
    def _next_link(self, cur: Any, detail: str) -> tuple[int, str, str]:
        """Inside the write transaction, serialised with every other append: the next
        audit id, the hash it chains to (the head's) and ``detail`` as the database will
        return it as text."""

    @abstractmethod
    def _append_row(self, cur: Any, row: ChainRow) -> None:
        """Insert the chained audit row and move the head to it."""

    @abstractmethod
    def _prune_audit(
        self, cur: Any, audit_before: float, now: float
    ) -> tuple[int, int | None, str | None]:
        """Delete the longest run of oldest audit rows that are all older than
        ``audit_before`` and of no open session; return (count, last id, last hash)."""

    @abstractmethod
    def _drop_pending(self, cur: Any, session_id: str, tools: list[str]) -> None:
        """Delete these pending requests of the session."""

    # --- shared helpers -------------------------------------------------------------------

    def _audit(
        self,
        cur: Cursor,
        session_id: str | None,
        actor: str,
        action: str,
        subject: str,
        detail: dict[str, Any],
        now: float,
    ) -> int:
        """Append one audit row, chained to the head, inside the current transaction."""
        row_id, prev_hash, text = self._next_link(cur, encode_detail(detail))
        digest = row_hash(prev_hash, row_id, now, session_id, actor, action, subject, text)
        row = ChainRow(row_id, now, session_id, actor, action, subject, text, prev_hash, digest)
        self._append_row(cur, row)
        return row_id

    def _lock_session(self, cur: Cursor, session_id: str) -> Any:
        """The session's (mode, ended), or None when it does not exist."""
        cur.execute(self.sql.lock_session, (session_id,))
        return cur.fetchone()

    def _pending(self, cur: Cursor, session_id: str) -> list[str]:
        cur.execute(self.sql.pending_tools, (session_id,))
        return [r[0] for r in cur.fetchall()]

    # --- SessionBackend -------------------------------------------------------------------

    def create_session(
        self, session_id: str, mode: str, label: str, actor: str, now: float
    ) -> Session:
        """Insert a new session (audit action ``create``)."""

        def action(cur: Cursor) -> None:
            cur.execute(self.sql.insert_session, (session_id, now, mode, label, actor))
            detail = {"mode": mode, "label": label}
            self._audit(cur, session_id, actor, "create", session_id, detail, now)

        self._write(action)
        return Session(id=session_id, created=now, mode=mode, label=label, created_by=actor)

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

        def action(cur: Cursor) -> bool:
            if self._lock_session(cur, session_id) is None:
                return False
            cur.execute(
                self.sql.upsert_skill,
                (session_id, name, json.dumps(allowed_tools), arguments, actor, now),
            )
            covered = covered_by(self._pending(cur, session_id), allowed_tools)
            if covered:
                self._drop_pending(cur, session_id, covered)
            detail = {"allowed_tools": allowed_tools, "arguments": arguments, "resolved": covered}
            self._audit(cur, session_id, actor, "activate", name, detail, now)
            return True

        return self._write(action)

    def set_tool_state(
        self, session_id: str, tool: str, state: str | None, actor: str, now: float
    ) -> bool:
        """Mark ``tool`` approved/denied (None: forget), dropping it from pending.

        The audit detail says whether this decision resolved a pending request
        (``was_pending``) and which decision it replaced (``previous``, ``previous_actor``):
        of two operators deciding one request at once, the entry with ``was_pending`` won.
        """

        def action(cur: Cursor) -> bool:
            if self._lock_session(cur, session_id) is None:
                return False
            cur.execute(self.sql.tool_state, (session_id, tool))
            before = cur.fetchone()
            if state is None:
                cur.execute(self.sql.forget_tool_state, (session_id, tool))
            else:
                cur.execute(self.sql.put_tool_state, (session_id, tool, state, actor, now))
            targets = settled_by(self._pending(cur, session_id), tool, state)
            if targets:
                self._drop_pending(cur, session_id, targets)
            detail = {
                "was_pending": bool(targets),
                "resolved": len(targets),
                "previous": before[0] if before else None,
                "previous_actor": before[1] if before else None,
            }
            self._audit(cur, session_id, actor, VERBS[state], tool, detail, now)
            return True

        return self._write(action)

    def set_mode(self, session_id: str, mode: str, actor: str, now: float) -> bool:
        """Change the policy mode (audit ``mode``)."""

        def action(cur: Cursor) -> bool:
            row = self._lock_session(cur, session_id)
            if row is None:
                return False
            cur.execute(self.sql.set_mode, (mode, session_id))
            self._audit(cur, session_id, actor, "mode", mode, {"previous": row[0]}, now)
            return True

        return self._write(action)

    def add_pending(self, session_id: str, tool: str, actor: str, now: float) -> bool:
        """Queue an approval request; True when it was not already pending."""

        def action(cur: Cursor) -> bool:
            if self._lock_session(cur, session_id) is None:
                return False
            cur.execute(self.sql.insert_pending, (session_id, tool, actor, now))
            added = cur.rowcount > 0
            if added:
                self._audit(cur, session_id, actor, "request", tool, {}, now)
            return added

        return self._write(action)

    def end_session(self, session_id: str, actor: str, now: float) -> bool:
        """Mark the session ended (audit ``end``); ending twice keeps the first time."""

        def action(cur: Cursor) -> bool:
            row = self._lock_session(cur, session_id)
            if row is None:
                return False
            if row[1] is None:
                cur.execute(self.sql.end_session, (now, session_id))
                cur.execute(self.sql.clear_pending, (session_id,))
                self._audit(cur, session_id, actor, "end", session_id, {}, now)
            return True

        return self._write(action)

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
        return self._write(
            lambda cur: self._audit(cur, session_id, actor, action, subject, detail, now)
        )

    def prune(
        self, ended_before: float, audit_before: float, actor: str, now: float
    ) -> PruneResult:
        """Delete sessions ended before ``ended_before`` and the oldest audit rows older
        than ``audit_before`` that belong to no open session (only a prefix of the chain,
        then a :data:`~skilldeck.core.sessions.chain.CHECKPOINT` row); the audit of pruned
        sessions stays until its own retention.

        Raises:
            SkilldeckError: INVALID_PARAM (SS008) when a cutoff is less than a day old.
        """
        check_cutoffs(ended_before, audit_before, now)

        def action(cur: Cursor) -> PruneResult:
            cur.execute(self.sql.delete_ended, (ended_before,))
            sessions = cur.rowcount
            count, last_id, last_hash = self._prune_audit(cur, audit_before, now)
            if count:
                checkpoint = {
                    "count": count,
                    "last_id": last_id,
                    "last_hash": last_hash,
                    "audit_before": audit_before,
                }
                self._audit(cur, None, actor, CHECKPOINT, "", checkpoint, now)
            result = PruneResult(sessions=sessions, audit=count)
            detail = {
                **result.to_dict(),
                "ended_before": ended_before,
                "audit_before": audit_before,
            }
            self._audit(cur, None, actor, "prune", "", detail, now)
            return result

        return self._write(action)
