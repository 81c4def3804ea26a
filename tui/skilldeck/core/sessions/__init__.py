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

from skilldeck.core.sessions.backend import SessionBackend
from skilldeck.core.sessions.chain import (
    CHECKPOINT,
    GENESIS,
    AuditProblem,
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
    Decision,
    PruneResult,
    Session,
    base_tool_name,
    split_tool,
    tool_matches,
)
from skilldeck.core.sessions.sqlite import SqliteBackend
from skilldeck.core.sessions.store import (
    SKILL_NAME_MAX,
    TOOL_NAME_MAX,
    SessionStore,
    check_mode,
    check_name,
    check_retention,
    describe_backend,
    open_backend,
)

__all__ = [
    "CHECKPOINT",
    "GENESIS",
    "MODES",
    "REASONS",
    "SKILL_NAME_MAX",
    "TOOL_NAME_MAX",
    "ActiveSkill",
    "AuditEntry",
    "AuditProblem",
    "AuditVerification",
    "ChainRow",
    "Decision",
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
    "open_backend",
    "row_hash",
    "split_tool",
    "tool_matches",
    "verify_chain",
]
