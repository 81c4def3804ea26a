"""The storage interface is narrow and complete: the policy runs on a second backend.

``MemoryBackend`` is a minimal in-process implementation of ``SessionBackend``; the same
policy scenarios run on it, on SQLite and on a real PostgreSQL server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skilldeck.core.config import Settings
from skilldeck.core.sessions import (
    GENESIS,
    ActiveSkill,
    AuditEntry,
    AuditVerification,
    ChainRow,
    PruneResult,
    Session,
    SessionBackend,
    SessionStore,
    row_hash,
    tool_matches,
    verify_chain,
)
from skilldeck.core.sessions.rows import encode_detail


class MemoryBackend:
    """Everything in dictionaries, one lock as the transaction."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.rows: list[AuditEntry] = []
        self.chain: list[ChainRow] = []
        self.lock = threading.Lock()

    def _log(
        self,
        session_id: str | None,
        actor: str,
        action: str,
        subject: str,
        detail: dict[str, Any],
        now: float,
    ) -> int:
        entry = AuditEntry(
            len(self.rows) + 1 if not self.rows else self.rows[-1].id + 1,
            now,
            session_id,
            actor,
            action,
            subject,
            detail,
        )
        self.rows.append(entry)
        text = encode_detail(detail)
        prev = self.chain[-1].hash or GENESIS if self.chain else GENESIS
        digest = row_hash(prev, entry.id, now, session_id, actor, action, subject, text)
        self.chain.append(
            ChainRow(entry.id, now, session_id, actor, action, subject, text, prev, digest)
        )
        return entry.id

    def _copy(self, s: Session) -> Session:
        return Session(
            s.id,
            s.created,
            s.mode,
            s.label,
            s.created_by,
            list(s.skills),
            list(s.approved),
            list(s.denied),
            list(s.pending),
            s.ended,
        )

    def create_session(
        self, session_id: str, mode: str, label: str, actor: str, now: float
    ) -> Session:
        with self.lock:
            self.sessions[session_id] = Session(session_id, now, mode, label, actor)
            self._log(session_id, actor, "create", session_id, {"mode": mode}, now)
            return self._copy(self.sessions[session_id])

    def get_session(self, session_id: str) -> Session | None:
        with self.lock:
            found = self.sessions.get(session_id)
            return self._copy(found) if found else None

    def list_sessions(self, include_ended: bool) -> list[Session]:
        with self.lock:
            return [
                self._copy(s)
                for s in sorted(self.sessions.values(), key=lambda s: -s.created)
                if include_ended or s.ended is None
            ]

    def activate_skill(
        self,
        session_id: str,
        name: str,
        allowed_tools: list[str],
        arguments: str,
        actor: str,
        now: float,
    ) -> bool:
        with self.lock:
            s = self.sessions.get(session_id)
            if s is None:
                return False
            s.skills = [k for k in s.skills if k.name != name]
            s.skills.append(ActiveSkill(name, tuple(allowed_tools), arguments, actor, now))
            s.pending = [t for t in s.pending if not any(tool_matches(a, t) for a in allowed_tools)]
            self._log(session_id, actor, "activate", name, {}, now)
            return True

    def set_tool_state(
        self, session_id: str, tool: str, state: str | None, actor: str, now: float
    ) -> bool:
        with self.lock:
            s = self.sessions.get(session_id)
            if s is None:
                return False
            s.approved = [t for t in s.approved if t != tool]
            s.denied = [t for t in s.denied if t != tool]
            if state == "approved":
                s.approved.append(tool)
            elif state == "denied":
                s.denied.append(tool)
            s.pending = [t for t in s.pending if not (t == tool or tool_matches(tool, t))]
            verb = {"approved": "approve", "denied": "deny", None: "revoke"}[state]
            self._log(session_id, actor, verb, tool, {}, now)
            return True

    def set_mode(self, session_id: str, mode: str, actor: str, now: float) -> bool:
        with self.lock:
            s = self.sessions.get(session_id)
            if s is None:
                return False
            previous, s.mode = s.mode, mode
            self._log(session_id, actor, "mode", mode, {"previous": previous}, now)
            return True

    def add_pending(self, session_id: str, tool: str, actor: str, now: float) -> bool:
        with self.lock:
            s = self.sessions.get(session_id)
            if s is None or tool in s.pending:
                return False
            s.pending.append(tool)
            self._log(session_id, actor, "request", tool, {}, now)
            return True

    def end_session(self, session_id: str, actor: str, now: float) -> bool:
        with self.lock:
            s = self.sessions.get(session_id)
            if s is None:
                return False
            if s.ended is None:
                s.ended, s.pending = now, []
                self._log(session_id, actor, "end", session_id, {}, now)
            return True

    def append_audit(
        self,
        session_id: str | None,
        actor: str,
        action: str,
        subject: str,
        detail: dict[str, Any],
        now: float,
    ) -> int:
        with self.lock:
            return self._log(session_id, actor, action, subject, detail, now)

    def prune(
        self, ended_before: float, audit_before: float, actor: str, now: float
    ) -> PruneResult:
        with self.lock:
            gone = [k for k, s in self.sessions.items() if s.ended and s.ended < ended_before]
            for key in gone:
                del self.sessions[key]
            kept = [e for e in self.rows if e.time >= audit_before]
            result = PruneResult(len(gone), len(self.rows) - len(kept))
            self.rows = kept
            self._log(None, actor, "prune", "", result.to_dict(), now)
            return result

    def audit(self, session_id: str | None, since_id: int, limit: int | None) -> list[AuditEntry]:
        with self.lock:
            rows = [
                e
                for e in self.rows
                if e.id > since_id and (session_id is None or e.session_id == session_id)
            ]
            return rows[:limit] if limit is not None else rows

    def last_audit_id(self) -> int:
        with self.lock:
            return self.rows[-1].id if self.rows else 0

    def verify_audit(self, anchor: str | None) -> AuditVerification:
        with self.lock:
            head = (self.chain[-1].id, self.chain[-1].hash or "") if self.chain else (0, GENESIS)
            return verify_chain(list(self.chain), head, anchor)

    def close(self) -> None:
        return None


@pytest.fixture(params=["sqlite", "memory", "postgres"])
def store(request: pytest.FixtureRequest, isolated_home: Path) -> Iterator[SessionStore]:
    backend: SessionBackend | None = MemoryBackend() if request.param == "memory" else None
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    with SessionStore(settings=Settings(telemetry=False, sessions_url=url), backend=backend) as s:
        yield s


def test_policy_is_backend_independent(store: SessionStore) -> None:
    sid = store.create(mode="approval").id
    assert store.check(sid, "Bash").requires_approval
    assert store.pending(sid) == ["Bash"]
    store.activate_skill(sid, "git", ["Bash(git log:*)"], actor="operator")
    assert store.pending(sid) == []
    assert store.check(sid, "Bash(git log -1)").reason == "skill_allowlist"
    store.approve(sid, "Write")
    store.deny(sid, "Bash")
    reasons = [store.check(sid, t).reason for t in ("Bash", "Write", "Grep")]
    assert reasons == ["denied", "approved", "not_in_allowlist"]
    store.set_mode(sid, "permissive")
    assert store.check(sid, "Grep").reason == "permissive"
    mark = store.last_audit_id()
    store.backend.end_session(sid, "operator", time.time() - 2 * 86_400)  # two days ago
    assert [e.action for e in store.changes_since(mark)] == ["end"]
    assert store.check(sid, "Write").reason == "no_session"
    verified = store.verify_audit()
    assert verified.ok and verified.head_id == store.last_audit_id()
    assert store.verify_audit(verified.head_hash).anchor_id == verified.head_id
    assert store.prune(1).sessions == 1
    assert store.find(sid) is None
    actions = [e.action for e in store.audit(sid)]
    assert actions[0] == "create" and actions[-1] == "end"
