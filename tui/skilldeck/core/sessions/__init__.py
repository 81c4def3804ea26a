"""Sessions, approvals and the audit log.

A :class:`SessionStore` keeps the sessions an operator governs: policy mode, active skills
and their allowed tools, approvals, denials, the pending-approval queue, and an
append-only audit log, hash-chained so that a deleted, edited or reordered row shows
(:mod:`skilldeck.core.sessions.chain`). By default they live in one SQLite file shared by
every process (:mod:`skilldeck.core.sessions.sqlite`); fleets of servers on several hosts share a
PostgreSQL database named by ``SKILLDECK_SESSIONS_URL``
(:mod:`skilldeck.core.sessions.postgres`); both share what a change does through
:mod:`skilldeck.core.sessions.sql_backend` and :mod:`skilldeck.core.sessions.rows`. See
:mod:`skilldeck.core.sessions.store` for the policy and :mod:`skilldeck.core.sessions.model`
for how tool names match.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.sessions.backend import SessionBackend
    from skilldeck.core.sessions.chain import (
        CHECKPOINT,
        GENESIS,
        AuditVerification,
        ChainRow,
        row_hash,
        verify_chain,
    )
    from skilldeck.core.sessions.model import (
        MODES,
        REASONS,
        ActiveSkill,
        AuditEntry,
        PruneResult,
        Session,
        base_tool_name,
        iso,
        run_outcome,
        split_tool,
        tool_matches,
    )
    from skilldeck.core.sessions.sqlite import SqliteBackend
    from skilldeck.core.sessions.store import (
        TOOL_NAME_MAX,
        SessionStore,
        check_mode,
        check_name,
        check_retention,
        describe_backend,
    )

__all__ = [
    "CHECKPOINT",
    "GENESIS",
    "MODES",
    "REASONS",
    "TOOL_NAME_MAX",
    "ActiveSkill",
    "AuditEntry",
    "AuditVerification",
    "ChainRow",
    "PruneResult",
    "Session",
    "SessionBackend",
    "SessionStore",
    "SqliteBackend",
    "base_tool_name",
    "check_mode",
    "check_name",
    "check_retention",
    "describe_backend",
    "iso",
    "row_hash",
    "run_outcome",
    "split_tool",
    "tool_matches",
    "verify_chain",
]

_NAMES = {
    "SessionBackend": "backend",
    "AuditVerification": "chain",
    "CHECKPOINT": "chain",
    "ChainRow": "chain",
    "GENESIS": "chain",
    "row_hash": "chain",
    "verify_chain": "chain",
    "ActiveSkill": "model",
    "AuditEntry": "model",
    "MODES": "model",
    "PruneResult": "model",
    "REASONS": "model",
    "Session": "model",
    "base_tool_name": "model",
    "iso": "model",
    "run_outcome": "model",
    "split_tool": "model",
    "tool_matches": "model",
    "SqliteBackend": "sqlite",
    "SessionStore": "store",
    "TOOL_NAME_MAX": "store",
    "check_mode": "store",
    "check_name": "store",
    "check_retention": "store",
    "describe_backend": "store",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
