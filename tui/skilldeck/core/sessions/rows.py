"""Database rows to session-store models and back, for every SQL backend.

The backends store the same tables (SQLite as JSON text, PostgreSQL as JSONB); what they
read is turned into :class:`~skilldeck.core.sessions.model.Session` and
:class:`~skilldeck.core.sessions.model.AuditEntry` here, in one place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from skilldeck.core.sessions.model import ActiveSkill, AuditEntry, Session

SESSION_COLUMNS = "id, created, mode, label, created_by, ended"
"""The session columns :func:`build_session` reads, in order."""
AUDIT_COLUMNS = "id, time, session_id, actor, action, subject, detail"
"""The audit columns :func:`audit_entry` reads, in order."""


def encode_detail(detail: dict[str, Any]) -> str:
    """The JSON text stored as an audit row's detail (sorted keys, anything as text)."""
    return json.dumps(detail, ensure_ascii=False, sort_keys=True, default=str)


def build_session(
    head: Sequence[Any],
    skills: Iterable[Sequence[Any]],
    tools: Iterable[Sequence[Any]],
    pending: Iterable[Any],
) -> Session:
    """A :class:`Session` from its row and those of its skills, tools and pending queue.

    Args:
        head: The session row (:data:`SESSION_COLUMNS`).
        skills: ``(name, allowed_tools, arguments, actor, activated)`` rows in order, with
            ``allowed_tools`` already decoded (anything but a list grants nothing).
        tools: ``(tool, state)`` rows in order.
        pending: Pending tool names, oldest first.
    """
    session = Session(
        id=head[0], created=head[1], mode=head[2], label=head[3], created_by=head[4], ended=head[5]
    )
    for name, allowed, arguments, actor, activated in skills:
        granted = tuple(str(t) for t in allowed) if isinstance(allowed, list) else ()
        session.skills.append(ActiveSkill(name, granted, arguments, actor, float(activated)))
    for tool, state in tools:
        (session.approved if state == "approved" else session.denied).append(tool)
    session.pending = [str(t) for t in pending]
    return session


def audit_entry(row: Sequence[Any], detail: object) -> AuditEntry:
    """An :class:`AuditEntry` from an audit row (:data:`AUDIT_COLUMNS`) and its decoded
    detail (anything but a dict becomes ``{}``)."""
    return AuditEntry(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        detail if isinstance(detail, dict) else {},
    )
