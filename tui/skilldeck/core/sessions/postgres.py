"""PostgreSQL backend of the session store (for fleets of MCP servers on several hosts).

Selected with ``SKILLDECK_SESSIONS_URL=postgresql://…`` (or ``sessions_url`` in the config
file); needs the optional ``psycopg`` 3 driver (``pip install '.[postgres]'`` from the
Skilldeck repository). Semantics are those of
:class:`~skilldeck.core.sessions.sqlite.SqliteBackend` (which pending requests a decision
settles is shared in :mod:`skilldeck.core.sessions.sql_backend`).

**No policy change without its audit row.** Every change is one ``SECURITY DEFINER``
function owned by the schema owner (``skilldeck_create_session``, ``_activate_skill``,
``_set_tool_state``, ``_set_mode``, ``_add_pending``, ``_end_session``, ``_append_audit``,
``_prune``) that writes the policy rows and their audit row in one transaction; the
function, not the client, links the row to the chain (``skilldeck_append_row``: the head
under an advisory lock, the id, ``skilldeck_row_hash``, the hash of
:func:`~skilldeck.core.sessions.chain.row_hash` computed in SQL) and moves the head. Other
roles get no INSERT, UPDATE, DELETE or TRUNCATE on any table (schema 4 takes back those the
README granted before) and no EXECUTE on any function until granted:

* **the operator's role** is the tables' owner, or a role that is a member of it
  (``pg_has_role(session_user, owner, 'USAGE')``, checked inside the functions): it alone
  may approve, deny, revoke, change a mode and prune, and write rows as any actor;
* **the servers' role** (any other role, granted SELECT and EXECUTE on the agent's
  functions, docs/sessions.md) may create and end sessions, activate skills, queue requests and
  append audit rows, each audited, and only as actor ``agent``: it cannot approve a tool,
  forge an ``operator`` row, or write an audit row whose hash it chose.

What the servers' role can still do is what a server does: activating a skill grants its
``allowed-tools`` (audited as the agent's ``activate``, with the tools), and which pending
requests that activation settles is computed by the client.

* every change is one transaction, and a method returns only after ``COMMIT`` succeeded;
  changes to one session are serialised by ``SELECT … FOR UPDATE`` on its row;
* audit ids are handed out under a transaction-level advisory lock taken just before the
  audit row is inserted, so ids become visible in commit order and a reader polling
  ``id > last seen`` never skips a row committed late;
* ``skilldeck_audit`` is append-only and hash-chained (:mod:`skilldeck.core.sessions.chain`;
  the head lives in the one-row ``skilldeck_audit_head``). A trigger refuses UPDATE,
  TRUNCATE and DELETE; the one way rows leave is ``skilldeck_prune``, which deletes only
  the oldest rows past a retention of at least a day (by the server's clock) and none of an
  open session. The trigger lets a DELETE through only when it runs as the table's owner
  with a transaction-local flag set, so a role that does not own the tables cannot delete,
  whatever it sets with ``set_config``;
* another trigger announces every audit row with ``NOTIFY skilldeck_sessions`` (payload
  ``"<id> <action> <session>"``), delivered on commit to every listening host;
* a lost connection (server down or restarted) is retried with exponential backoff for
  ``retry_seconds``, then reported as :class:`~skilldeck.core.errors.SkilldeckError`
  (diagnostic SS006). Every change writes its operation id into its audit row; when the
  connection drops after ``COMMIT`` was sent but before it was acknowledged, the retry
  looks that id up and runs the change again only when it did not land: an acknowledged
  decision is never lost and none is applied twice;
* the schema is versioned in ``skilldeck_meta`` and migrated in place under an advisory
  lock (the statements are in :mod:`.pg_schema`); a database of a newer version is refused
  (SS003) and left unchanged. A role the functions refuse gets SS002 (permission denied)
  with the reason.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions.chain import GENESIS, ChainRow
from skilldeck.core.sessions.model import PruneResult, Session
from skilldeck.core.sessions.pg_schema import CHANNEL, MIGRATE_LOCK
from skilldeck.core.sessions.pg_schema import MIGRATIONS as MIGRATIONS
from skilldeck.core.sessions.pg_schema import SCHEMA_VERSION as SCHEMA_VERSION
from skilldeck.core.sessions.rows import AUDIT_COLUMNS, build_session, encode_detail
from skilldeck.core.sessions.sql_backend import (
    Reads,
    SqlReader,
    check_cutoffs,
    covered_by,
    settled_by,
)

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

DEFAULT_RETRY_SECONDS = 30.0
CONNECT_TIMEOUT = 5

T = TypeVar("T")
Cursor = Any  # psycopg.Cursor[tuple[Any, ...]]; kept loose so psycopg stays optional

_CHAIN_COLUMNS = "id, time, session_id, actor, action, subject, detail::text, prev_hash, hash"
_SESSION_SQL = """
SELECT s.id, s.created, s.mode, s.label, s.created_by, s.ended,
    (SELECT COALESCE(json_agg(json_build_array(k.name, k.allowed_tools, k.arguments, k.actor,
        k.activated) ORDER BY k.activated, k.name), '[]')
     FROM skilldeck_session_skills k WHERE k.session_id = s.id),
    (SELECT COALESCE(json_agg(json_build_array(t.tool, t.state) ORDER BY t.time, t.tool), '[]')
     FROM skilldeck_session_tools t WHERE t.session_id = s.id),
    (SELECT COALESCE(json_agg(p.tool ORDER BY p.requested, p.tool), '[]')
     FROM skilldeck_pending p WHERE p.session_id = s.id)
FROM skilldeck_sessions s
"""

_SQL = Reads(
    param="%s",
    select_session=_SESSION_SQL + " WHERE s.id = %s",
    all_sessions=_SESSION_SQL + " ORDER BY s.created DESC, s.id",
    open_sessions=_SESSION_SQL + " WHERE s.ended IS NULL ORDER BY s.created DESC, s.id",
    chain_rows=f"SELECT {_CHAIN_COLUMNS} FROM skilldeck_audit ORDER BY id",
    audit_since=f"SELECT {AUDIT_COLUMNS} FROM skilldeck_audit WHERE id > %s",
    max_audit_id="SELECT COALESCE(MAX(id), 0) FROM skilldeck_audit",
)


def _driver() -> Any:
    """The ``psycopg`` module, or a clear error when the optional driver is missing."""
    try:
        import psycopg
    except ImportError as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            "a PostgreSQL sessions URL is configured but the psycopg driver is not "
            "installed: pip install '.[postgres]' from the Skilldeck repository",
            diagnostic="SS007",
        ) from exc
    return psycopg


def redact(url: str) -> str:
    """``url`` without its password (for messages and ``doctor``)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(url)
    except Exception:  # an unparsable URL is shown as a placeholder
        return "postgresql://(unparsable URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def _lost_connection(exc: BaseException) -> bool:
    """True for errors that a new connection may cure (server down, restarted, shut down)."""
    psycopg = _driver()
    if isinstance(exc, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None) or ""
    return not state or state.startswith(("08", "57P"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PostgresBackend(SqlReader):
    """:class:`~skilldeck.core.sessions.backend.SessionBackend` on a PostgreSQL server.

    Args:
        url: libpq URL or conninfo string (``postgresql://user@host:5432/db``).
        retry_seconds: How long an operation keeps reconnecting (with backoff) before
            it reports the database unreachable.

    Raises:
        SkilldeckError: EXECUTION_ERROR when the server cannot be reached (SS006), the
            schema is newer than this skilldeck (SS003) or the driver is missing (SS007).
    """

    sql = _SQL

    def __init__(self, url: str, *, retry_seconds: float = DEFAULT_RETRY_SECONDS) -> None:
        self.url = url
        self.location = redact(url)
        self.retry_seconds = retry_seconds
        self._psycopg = _driver()
        self._lock = threading.RLock()
        self._listen_lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._listener: psycopg.Connection[Any] | None = None
        self._op: str | None = None
        try:
            self._conn = self._connect()
        except self._psycopg.Error as exc:
            raise self._unreachable(exc) from exc
        try:
            self._run(self._migrate)
        except BaseException:
            self.close()
            raise

    # --- connections, transactions, errors -----------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] = self._psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            application_name="skilldeck",
        )
        return conn

    def _unreachable(self, exc: BaseException, retried: bool = False) -> SkilldeckError:
        tail = (
            f"; skilldeck retried for {self.retry_seconds:g}s and will reconnect on the next call"
            if retried
            else "; is the server running and the URL right?"
        )
        return SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"sessions database {self.location} is unreachable ({_first_line(exc)}){tail}",
            path=self.location,
            diagnostic="SS006",
        )

    def _failed(self, exc: BaseException) -> SkilldeckError:
        state = getattr(exc, "sqlstate", None) or ""
        first = _first_line(exc)
        if state == "42501":
            return SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"sessions database {self.location}: permission denied ({first})",
                path=self.location,
                diagnostic="SS002",
            )
        return SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"sessions database {self.location} refused the change ({first})",
            path=self.location,
            diagnostic="SS001",
        )

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except self._psycopg.Error:
                log.debug("closing a broken connection failed", exc_info=True)

    def _run(self, action: Callable[[Cursor], T], *, transaction: bool = True) -> T:
        """Run ``action`` in one transaction, reconnecting with backoff on a lost server.

        Returns only after the commit was acknowledged, or after a retry found the
        operation's audit row (the ``COMMIT`` landed though its answer was lost).
        """
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.05
        in_doubt: list[T] = []  # the result of an attempt whose COMMIT went unanswered
        with self._lock:
            self._op = secrets.token_hex(12) if transaction else None
            try:
                while True:
                    try:
                        if in_doubt and self._landed():
                            return in_doubt[0]
                        return self._attempt(action, transaction, in_doubt)
                    except self._psycopg.Error as exc:
                        if not _lost_connection(exc):
                            raise self._failed(exc) from exc
                        if isinstance(exc, self._psycopg.OperationalError):
                            self._drop()
                        if time.monotonic() + delay > deadline:
                            raise self._unreachable(exc, retried=True) from exc
                        log.warning(
                            "sessions database %s: %s; retrying in %.2gs",
                            self.location,
                            _first_line(exc),
                            delay,
                        )
                        time.sleep(delay)
                        delay = min(delay * 2, 2.0)
            finally:
                self._op = None

    def _read(self, action: Callable[[Cursor], T]) -> T:
        """One statement needs no transaction: its snapshot is consistent."""
        return self._run(action, transaction=False)

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = self._connect()
        return self._conn

    def _attempt(self, action: Callable[[Cursor], T], transaction: bool, in_doubt: list[T]) -> T:
        conn = self._connection()
        in_doubt.clear()
        if not transaction:
            with conn.cursor() as cur:
                return action(cur)
        with conn.transaction():
            with conn.cursor() as cur:
                result = action(cur)
            in_doubt.append(result)  # leaving the block sends COMMIT
        return result

    def _landed(self) -> bool:
        """Whether the current operation's audit row exists (its COMMIT landed)."""
        with self._connection().cursor() as cur:
            cur.execute("SELECT 1 FROM skilldeck_audit WHERE op = %s", (self._op,))
            return cur.fetchone() is not None

    def _migrate(self, cur: Cursor) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        version = self._schema_version(cur)
        if version > SCHEMA_VERSION:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"sessions database {self.location} has schema {version}, newer than this "
                f"skilldeck understands ({SCHEMA_VERSION}); it was left unchanged",
                path=self.location,
                diagnostic="SS003",
            )
        if version == SCHEMA_VERSION:
            return
        cur.execute(
            "CREATE TABLE IF NOT EXISTS skilldeck_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        cur.execute("SELECT quote_ident(current_schema())")
        schema = str(cur.fetchone()[0])
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target]:
                cur.execute(statement.replace("{schema}", schema))
            if target == 3:
                self._chain_existing(cur)
            log.info("sessions database %s migrated to schema %d", self.location, target)
        cur.execute(
            "INSERT INTO skilldeck_meta (key, value) VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )

    @staticmethod
    def _chain_existing(cur: Cursor) -> None:
        """Chain the rows written before version 3, in id order, and record the head."""
        cur.execute("ALTER TABLE skilldeck_audit DISABLE TRIGGER skilldeck_audit_append_only")
        cur.execute(f"SELECT {_CHAIN_COLUMNS} FROM skilldeck_audit ORDER BY id")
        head = (0, GENESIS)
        for values in cur.fetchall():
            row = ChainRow(*values)
            digest = row.computed(prev_hash=head[1])
            cur.execute(
                "UPDATE skilldeck_audit SET prev_hash = %s, hash = %s WHERE id = %s",
                (head[1], digest, row.id),
            )
            head = (row.id, digest)
        cur.execute("ALTER TABLE skilldeck_audit ENABLE TRIGGER skilldeck_audit_append_only")
        cur.execute(
            "INSERT INTO skilldeck_audit_head (one, last_id, last_hash) VALUES (true, %s, %s)",
            head,
        )

    @staticmethod
    def _schema_version(cur: Cursor) -> int:
        cur.execute("SELECT to_regclass('skilldeck_meta') IS NOT NULL")
        if not cur.fetchone()[0]:
            return 0
        cur.execute("SELECT value FROM skilldeck_meta WHERE key = 'schema_version'")
        row = cur.fetchone()
        return int(row[0]) if row else 0

    def _head(self, cur: Cursor) -> tuple[int, str] | None:
        cur.execute("SELECT last_id, last_hash FROM skilldeck_audit_head")
        found = cur.fetchone()
        return (int(found[0]), str(found[1])) if found else None

    def _snapshot(self, action: Callable[[Cursor], T]) -> T:
        """One REPEATABLE READ transaction: the head and the rows of one moment."""

        def run(cur: Cursor) -> T:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return action(cur)

        return self._run(run)

    # --- SqlBackend hooks -----------------------------------------------------------------

    def _load(self, cur: Cursor, row: tuple[Any, ...]) -> Session:
        """The session of a ``_SESSION_SQL`` row: one statement, one consistent snapshot
        (skills, tools and pending queue come as JSON aggregates)."""
        return build_session(row, row[6], row[7], row[8])

    # --- changes: one SECURITY DEFINER function each ---------------------------------------

    def _call(self, function: str, *params: object) -> Any:
        """Run one change function (the operation id last) in a transaction; its result."""
        marks = ", ".join(["%s"] * (len(params) + 1))

        def action(cur: Cursor) -> Any:
            cur.execute(f"SELECT {function}({marks})", (*params, self._op))
            return cur.fetchone()[0]

        return self._run(action)

    @staticmethod
    def _waiting(cur: Cursor, session_id: str) -> list[str]:
        cur.execute("SELECT tool FROM skilldeck_pending WHERE session_id = %s", (session_id,))
        return [str(r[0]) for r in cur.fetchall()]

    def create_session(
        self, session_id: str, mode: str, label: str, actor: str, now: float
    ) -> Session:
        """Insert a new session (audit action ``create``)."""
        self._call("skilldeck_create_session", session_id, mode, label, actor, now)
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
            covered = covered_by(self._waiting(cur, session_id), allowed_tools)
            cur.execute(
                "SELECT skilldeck_activate_skill(%s, %s, %s::jsonb, %s, %s::text[], %s, %s, %s)",
                (
                    session_id,
                    name,
                    json.dumps(allowed_tools),
                    arguments,
                    covered,
                    actor,
                    now,
                    self._op,
                ),
            )
            return bool(cur.fetchone()[0])

        return self._run(action)

    def set_tool_state(
        self, session_id: str, tool: str, state: str | None, actor: str, now: float
    ) -> bool:
        """Mark ``tool`` approved/denied (None: forget), dropping it from pending (audit
        ``approve``/``deny``/``revoke`` with ``was_pending``, ``resolved``, ``previous``,
        ``previous_actor``). Only the operator's role may."""

        def action(cur: Cursor) -> bool:
            settled = settled_by(self._waiting(cur, session_id), tool, state)
            cur.execute(
                "SELECT skilldeck_set_tool_state(%s, %s, %s, %s::text[], %s, %s, %s)",
                (session_id, tool, state, settled, actor, now, self._op),
            )
            return bool(cur.fetchone()[0])

        return self._run(action)

    def set_mode(self, session_id: str, mode: str, actor: str, now: float) -> bool:
        """Change the policy mode (audit ``mode``). Only the operator's role may."""
        return bool(self._call("skilldeck_set_mode", session_id, mode, actor, now))

    def add_pending(self, session_id: str, tool: str, actor: str, now: float) -> bool:
        """Queue an approval request; True when it was not already pending."""
        return bool(self._call("skilldeck_add_pending", session_id, tool, actor, now))

    def end_session(self, session_id: str, actor: str, now: float) -> bool:
        """Mark the session ended (audit ``end``); ending twice keeps the first time."""
        return bool(self._call("skilldeck_end_session", session_id, actor, now))

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

        def append(cur: Cursor) -> int:
            cur.execute(
                "SELECT skilldeck_append_audit(%s, %s, %s, %s, %s::jsonb, %s, %s)",
                (session_id, actor, action, subject, encode_detail(detail), now, self._op),
            )
            return int(cur.fetchone()[0])

        return self._run(append)

    def prune(
        self, ended_before: float, audit_before: float, actor: str, now: float
    ) -> PruneResult:
        """Delete ended sessions and the oldest audit rows past retention (by the server's
        clock), then a checkpoint row; only the operator's role may.

        Raises:
            SkilldeckError: INVALID_PARAM (SS008) when a cutoff is less than a day old.
        """
        check_cutoffs(ended_before, audit_before, now)

        def action(cur: Cursor) -> PruneResult:
            cur.execute(
                "SELECT pruned_sessions, pruned_audit FROM skilldeck_prune(%s, %s, %s, %s, %s)",
                (ended_before, audit_before, actor, now, self._op),
            )
            sessions, audit = cur.fetchone()
            return PruneResult(sessions=int(sessions), audit=int(audit))

        return self._run(action)

    # --- live changes ---------------------------------------------------------------------

    def wait_for_change(self, since_id: int, timeout: float) -> int:
        """Block until an audit row newer than ``since_id`` exists (announced by NOTIFY) or
        ``timeout`` seconds pass; return the highest audit id.

        Listens on a connection of its own, so waiting never holds up other calls. A lost
        listening connection is reopened on the next call.
        """
        deadline = time.monotonic() + timeout
        with self._listen_lock:
            while True:
                try:
                    return self._wait(since_id, deadline)
                except self._psycopg.Error as exc:
                    self._close_listener()
                    log.warning(
                        "sessions database %s: listening failed: %s; reconnecting",
                        self.location,
                        _first_line(exc),
                    )
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return since_id
                    time.sleep(min(remaining, 0.2))

    def _wait(self, since_id: int, deadline: float) -> int:
        if self._listener is None or self._listener.closed:
            self._listener = self._connect()
            self._listener.execute(f"LISTEN {CHANNEL}")
        while True:  # a stale announcement (of an id already seen) waits on
            current = self.last_audit_id()
            remaining = deadline - time.monotonic()
            if current > since_id or remaining <= 0:
                return current
            for _ in self._listener.notifies(timeout=remaining, stop_after=1):
                break

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.close()
            except self._psycopg.Error:
                log.debug("closing the listening connection failed", exc_info=True)

    def describe(self) -> dict[str, Any]:
        """Backend, location, reachability and schema version (for ``skilldeck doctor``)."""
        info: dict[str, Any] = {"backend": "postgresql", "location": self.location}

        def probe(cur: Cursor) -> tuple[str, int]:
            cur.execute("SHOW server_version")
            return str(cur.fetchone()[0]), self._schema_version(cur)

        info["server_version"], info["schema_version"] = self._run(probe, transaction=False)
        info["reachable"] = True
        return info

    def close(self) -> None:
        """Close both connections."""
        with self._lock:
            self._drop()
        self._close_listener()
