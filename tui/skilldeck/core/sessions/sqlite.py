"""SQLite backend of the session store (the embedded default).

One file shared by every process (the TUI, the CLI, MCP servers): WAL journal, a busy
timeout, and ``BEGIN IMMEDIATE`` around every change so writers queue instead of failing.
A file that is not a SQLite database (or is damaged) is reported as a
:class:`~skilldeck.core.errors.SkilldeckError` and never modified, moved or deleted.

Schema (``PRAGMA user_version`` = 2)::

    sessions(id TEXT PK, created REAL, mode TEXT, label TEXT, created_by TEXT, ended REAL)
    session_skills(session_id, name, allowed_tools JSON, arguments, actor, activated;
                   PK(session_id, name))
    session_tools(session_id, tool, state 'approved'|'denied', actor, time; PK(session_id, tool))
    pending(session_id, tool, actor, requested; PK(session_id, tool))
    audit(id INTEGER PK AUTOINCREMENT, time REAL, session_id, actor, action, subject,
          detail JSON, prev_hash TEXT, hash TEXT)
    meta(key TEXT PK, value TEXT)   -- audit_head_id, audit_head_hash: the chain's head

``audit`` is append-only and hash-chained (:mod:`skilldeck.core.sessions.chain`): triggers
abort every UPDATE and DELETE; retention pruning drops the DELETE trigger, deletes the
oldest rows and creates the trigger again, all inside its own transaction, so no row of
data (such as the ``audit_prune_before`` that version 1 read from ``meta``) opens the log.
Anyone who can write the file can still do the same; the chain makes it visible
(``skilldeck session verify``). Version 1 files are upgraded in place: their rows are
chained in id order. Deleting a session cascades to its skills, tools and pending rows,
not audit.

What a change does is shared with PostgreSQL in
:class:`~skilldeck.core.sessions.sql_backend.SqlBackend`; this module holds the file, the
connection, locking and retries, the schema and the SQLite dialect.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions.chain import GENESIS, ChainRow
from skilldeck.core.sessions.model import Session
from skilldeck.core.sessions.rows import AUDIT_COLUMNS, SESSION_COLUMNS, build_session
from skilldeck.core.sessions.sql_backend import SqlBackend, Statements
from skilldeck.core.store import is_disk_full

SCHEMA_VERSION = 2
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 15_000
_RETRIES = 8

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    mode TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_by TEXT NOT NULL DEFAULT '',
    ended REAL
);
CREATE TABLE IF NOT EXISTS session_skills (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    allowed_tools TEXT NOT NULL DEFAULT '[]',
    arguments TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL DEFAULT '',
    activated REAL NOT NULL,
    PRIMARY KEY (session_id, name)
);
CREATE TABLE IF NOT EXISTS session_tools (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    tool TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('approved', 'denied')),
    actor TEXT NOT NULL DEFAULT '',
    time REAL NOT NULL,
    PRIMARY KEY (session_id, tool)
);
CREATE TABLE IF NOT EXISTS pending (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    tool TEXT NOT NULL,
    actor TEXT NOT NULL DEFAULT '',
    requested REAL NOT NULL,
    PRIMARY KEY (session_id, tool)
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    session_id TEXT,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}',
    prev_hash TEXT,
    hash TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_session ON audit (session_id, id);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (time);
"""

_NO_UPDATE = """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only');
END"""
_NO_DELETE = """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'audit log is append-only (only retention pruning deletes)');
END"""

_NEXT_LINK = f"""
SELECT
    COALESCE(
        (SELECT value FROM meta WHERE key = 'audit_head_hash'),
        (SELECT hash FROM audit ORDER BY id DESC LIMIT 1),
        '{GENESIS}'),
    MAX(
        COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0),
        COALESCE((SELECT MAX(id) FROM audit), 0),
        COALESCE(CAST((SELECT value FROM meta WHERE key = 'audit_head_id') AS INTEGER), 0)
    ) + 1
"""
_SET_HEAD = (
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('audit_head_id', ?), ('audit_head_hash', ?)"
)
_CHAIN_COLUMNS = "id, time, session_id, actor, action, subject, detail, prev_hash, hash"
_PRUNABLE = """
SELECT id, hash FROM audit WHERE id < COALESCE(
    (SELECT MIN(id) FROM audit
     WHERE time >= ? OR session_id IN (SELECT id FROM sessions WHERE ended IS NULL)),
    9223372036854775807)
ORDER BY id DESC LIMIT 1
"""

_SQL = Statements(
    param="?",
    insert_session="INSERT INTO sessions (id, created, mode, label, created_by) VALUES (?,?,?,?,?)",
    select_session=f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?",
    all_sessions=f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY created DESC, id",
    open_sessions=(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE ended IS NULL ORDER BY created DESC, id"
    ),
    lock_session="SELECT mode, ended FROM sessions WHERE id = ?",
    upsert_skill=(
        "INSERT INTO session_skills (session_id, name, allowed_tools, arguments, actor,"
        " activated) VALUES (?,?,?,?,?,?) ON CONFLICT (session_id, name) DO UPDATE SET"
        " allowed_tools = excluded.allowed_tools, arguments = excluded.arguments,"
        " actor = excluded.actor, activated = excluded.activated"
    ),
    pending_tools="SELECT tool FROM pending WHERE session_id = ?",
    tool_state="SELECT state, actor FROM session_tools WHERE session_id = ? AND tool = ?",
    put_tool_state=(
        "INSERT INTO session_tools (session_id, tool, state, actor, time) "
        "VALUES (?,?,?,?,?) ON CONFLICT (session_id, tool) DO UPDATE SET "
        "state = excluded.state, actor = excluded.actor, time = excluded.time"
    ),
    forget_tool_state="DELETE FROM session_tools WHERE session_id = ? AND tool = ?",
    set_mode="UPDATE sessions SET mode = ? WHERE id = ?",
    insert_pending=(
        "INSERT OR IGNORE INTO pending (session_id, tool, actor, requested) VALUES (?,?,?,?)"
    ),
    end_session="UPDATE sessions SET ended = ? WHERE id = ?",
    clear_pending="DELETE FROM pending WHERE session_id = ?",
    delete_ended="DELETE FROM sessions WHERE ended IS NOT NULL AND ended < ?",
    chain_rows=f"SELECT {_CHAIN_COLUMNS} FROM audit ORDER BY id",
    audit_since=f"SELECT {AUDIT_COLUMNS} FROM audit WHERE id > ?",
    max_audit_id="SELECT MAX(id) FROM audit",
)


def _statements(script: str) -> list[str]:
    """Split a script into statements (``executescript`` would commit the transaction)."""
    found: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            found.append(buffer.strip())
            buffer = ""
    return found


def _chain_audit(cur: sqlite3.Cursor) -> None:
    """Bring the audit table of an earlier version (or a new one) to version 2: add the
    hash columns, chain the rows in id order, record the head, and replace the triggers
    (version 1 let any writer of ``meta.audit_prune_before`` delete rows)."""
    columns = {row[1] for row in cur.execute("PRAGMA table_info(audit)")}
    for name in ("prev_hash", "hash"):
        if name not in columns:
            cur.execute(f"ALTER TABLE audit ADD COLUMN {name} TEXT")
    cur.execute("DROP TRIGGER IF EXISTS audit_no_update")
    cur.execute("DROP TRIGGER IF EXISTS audit_no_delete")
    cur.execute("DELETE FROM meta WHERE key = 'audit_prune_before'")
    head = (0, GENESIS)
    for values in cur.execute(f"SELECT {_CHAIN_COLUMNS} FROM audit ORDER BY id").fetchall():
        row = ChainRow(*values)
        digest = row.computed(prev_hash=head[1])
        cur.execute(
            "UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (head[1], digest, row.id)
        )
        head = (row.id, digest)
    cur.execute(_SET_HEAD, head)
    cur.execute(_NO_UPDATE)
    cur.execute(_NO_DELETE)


def _disk_full(exc: object) -> bool:
    """True when ``exc`` says the disk or quota is full (SQLite or the OS)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(exc, BaseException) and is_disk_full(exc)


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _json_list(text: str) -> Any:
    """A skill's stored ``allowed_tools`` decoded (damaged JSON grants nothing)."""
    try:
        return json.loads(text)
    except ValueError:
        return []


class SqliteBackend(SqlBackend):
    """:class:`~skilldeck.core.sessions.backend.SessionBackend` over one SQLite file.

    Args:
        path: The database file (created with its folder when missing).

    Raises:
        SkilldeckError: EXECUTION_ERROR when the file is not a usable sessions database.
    """

    sql = _SQL

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._check_header()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if _disk_full(exc):
                raise self._corrupt(exc) from exc
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"cannot create {path.parent}: {exc}",
                path=str(path),
                diagnostic="SS002",
            ) from exc
        try:
            self._conn = sqlite3.connect(
                str(path),
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self._corrupt(exc) from exc
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise self._corrupt(exc) from exc

    def _check_header(self) -> None:
        try:
            with self.path.open("rb") as handle:
                head = handle.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"cannot read sessions database {self.path}: {exc}",
                path=str(self.path),
                diagnostic="SS002",
            ) from exc
        if head and head != SQLITE_MAGIC:
            raise self._corrupt("file is not a database")

    def _corrupt(self, exc: object) -> SkilldeckError:
        """The error to report for a failed database operation: disk full (SS005), not
        writable (SS002), or unreadable/damaged (SS001)."""
        if _disk_full(exc):
            return SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"disk full: cannot write the sessions database {self.path} ({exc}); free "
                "some space and try again (the database is intact)",
                path=str(self.path),
                diagnostic="SS005",
            )
        text = str(exc).lower()
        if "unable to open" in text or "readonly" in text or "read-only" in text:
            return SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"cannot open sessions database {self.path} for writing ({exc})",
                path=str(self.path),
                diagnostic="SS002",
            )
        return SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"sessions database {self.path} is unreadable or damaged ({exc}); it was left "
            "untouched: move it aside to start a new one",
            path=str(self.path),
            diagnostic="SS001",
        )

    def _setup(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                f"sessions database {self.path} has schema {version}, newer than this "
                f"skilldeck understands ({SCHEMA_VERSION})",
                path=str(self.path),
                diagnostic="SS003",
            )
        self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:

            def create() -> None:
                with self._tx() as cur:
                    if int(cur.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
                        for statement in _statements(_SCHEMA):
                            cur.execute(statement)
                        _chain_audit(cur)
                        cur.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

            self._retry(create)

    def _retry(self, action: Callable[[], T]) -> T:
        delay = 0.01
        for attempt in range(_RETRIES):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == _RETRIES - 1:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error)."""
        cur = self._conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
            cur.execute("COMMIT")
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Roll back whatever transaction a failure left open (a failed COMMIT, a full
        disk), so the next call starts clean: faults must not stick to the connection."""
        with contextlib.suppress(sqlite3.Error):
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")

    def _write(self, action: Callable[[sqlite3.Cursor], T]) -> T:
        def run() -> T:
            with self._tx() as cur:
                return action(cur)

        return self._guard(lambda: self._retry(run))

    def _read(self, action: Callable[[sqlite3.Cursor], T]) -> T:
        def run() -> T:
            cur = self._conn.cursor()
            cur.execute("BEGIN")
            try:
                result = action(cur)
                cur.execute("COMMIT")
            except BaseException:
                self._abandon()
                raise
            return result

        return self._guard(lambda: self._retry(run))

    def _guard(self, action: Callable[[], T]) -> T:
        with self._lock:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if _is_busy(exc):
                    raise SkilldeckError(
                        ErrorCode.EXECUTION_ERROR,
                        f"sessions database {self.path} stayed busy: {exc}",
                        path=str(self.path),
                        diagnostic="SS004",
                    ) from exc
                raise self._corrupt(exc) from exc
            except sqlite3.DatabaseError as exc:
                raise self._corrupt(exc) from exc

    # --- SqlBackend hooks -----------------------------------------------------------------

    def _next_link(self, cur: sqlite3.Cursor, detail: str) -> tuple[int, str, str]:
        # BEGIN IMMEDIATE already holds the write lock: nobody appends in between
        prev_hash, row_id = cur.execute(_NEXT_LINK).fetchone()
        return int(row_id), str(prev_hash), detail

    def _append_row(self, cur: sqlite3.Cursor, row: ChainRow) -> None:
        cur.execute(
            f"INSERT INTO audit ({_CHAIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row.values(),
        )
        cur.execute(_SET_HEAD, (row.id, row.hash))

    def _head(self, cur: sqlite3.Cursor) -> tuple[int, str] | None:
        found = dict(
            cur.execute(
                "SELECT key, value FROM meta WHERE key IN ('audit_head_id', 'audit_head_hash')"
            ).fetchall()
        )
        try:
            return int(found["audit_head_id"]), str(found["audit_head_hash"])
        except (KeyError, ValueError):
            return None

    def _prune_audit(
        self, cur: sqlite3.Cursor, audit_before: float, now: float
    ) -> tuple[int, int | None, str | None]:
        last = cur.execute(_PRUNABLE, (audit_before,)).fetchone()
        if last is None:
            return 0, None, None
        # the only way rows leave: the trigger goes and comes back inside this transaction
        cur.execute("DROP TRIGGER IF EXISTS audit_no_delete")
        cur.execute("DELETE FROM audit WHERE id <= ?", (last[0],))
        count = cur.rowcount
        cur.execute(_NO_DELETE)
        return count, int(last[0]), last[1]

    def _load(self, cur: sqlite3.Cursor, row: tuple[Any, ...]) -> Session:
        skills = [
            (name, _json_list(tools), arguments, actor, activated)
            for name, tools, arguments, actor, activated in cur.execute(
                "SELECT name, allowed_tools, arguments, actor, activated FROM session_skills "
                "WHERE session_id = ? ORDER BY activated, name",
                (row[0],),
            )
        ]
        tools = cur.execute(
            "SELECT tool, state FROM session_tools WHERE session_id = ? ORDER BY time, tool",
            (row[0],),
        ).fetchall()
        pending = [
            r[0]
            for r in cur.execute(
                "SELECT tool FROM pending WHERE session_id = ? ORDER BY requested, tool", (row[0],)
            )
        ]
        return build_session(row, skills, tools, pending)

    def _drop_pending(self, cur: sqlite3.Cursor, session_id: str, tools: list[str]) -> None:
        for tool in tools:
            cur.execute("DELETE FROM pending WHERE session_id = ? AND tool = ?", (session_id, tool))

    @staticmethod
    def _decode_detail(value: Any) -> object:
        try:
            return json.loads(value)
        except ValueError:
            return {"raw": value}

    def describe(self) -> dict[str, Any]:
        """Backend, location, reachability and schema version (for ``skilldeck doctor``)."""
        version = self._read(lambda cur: int(cur.execute("PRAGMA user_version").fetchone()[0]))
        return {
            "backend": "sqlite",
            "location": str(self.path),
            "reachable": True,
            "schema_version": version,
        }

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
