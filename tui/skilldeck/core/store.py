"""The local store: one SQLite file under ``SKILLDECK_HOME`` that caches parsed skills and
keeps the search index, so a one-shot command never re-parses or re-indexes what did not
change.

Plain data only: text, numbers, JSON and raw array bytes. Nothing read from it is ever
unpickled or executed, and nothing in it is trusted: a file that is not a database, is
damaged, belongs to another program or to another schema version is moved aside and
rebuilt with a notice (:attr:`LocalStore.notices`); a row that does not decode is dropped
and its skill parsed again by whoever reads it. A home that cannot be written gets an
in-memory store (same notice), so skills are still served.

Several processes (the TUI, MCP servers, the CLI) share one file: it runs in WAL mode with
a busy timeout, and every write is one short ``BEGIN IMMEDIATE`` transaction. Each thread
gets its own connection.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from skilldeck.core.config import home_dir

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a store this code writes; any other value is rebuilt."""

APPLICATION_ID = 0x534B4443
"""``PRAGMA application_id`` ("SKDC"): tells our file from another program's database."""

STORE_FILE = "store.sqlite3"
BUSY_TIMEOUT_MS = 10_000

SCHEMA = (
    # One parsed skill, keyed by the real path of its SKILL.md, with the file's stat when
    # parsed and its frontmatter hash; ``record`` is JSON (fields, resources and the
    # folder mtimes they were listed at, parse diagnostics, validated diagnostics by
    # validator). A row whose stat differs is parsed again (skilldeck.core.discovery).
    """CREATE TABLE IF NOT EXISTS skills (
        path TEXT PRIMARY KEY,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        hash TEXT NOT NULL,
        record TEXT NOT NULL
    )""",
    # A persisted search index, one per workspace ``key`` (its roots and profile):
    # ``meta`` is JSON (format, analysis fingerprint, field weights, sizes, a CRC-32 per
    # blob; see skilldeck.core.search.persist).
    """CREATE TABLE IF NOT EXISTS index_meta (
        key TEXT PRIMARY KEY,
        meta TEXT NOT NULL,
        updated_ns INTEGER NOT NULL
    )""",
    # The index's arrays as raw little-endian bytes (read back with numpy.frombuffer and a
    # dtype from a fixed list, never unpickled) and its word and path lists (NUL-separated
    # text). No per-skill rows: an update re-reads only the changed skills' bodies and
    # rebuilds the postings from these arrays.
    # A catalog's lint findings (JSON) under the workspace key, with a digest of what
    # they depend on (skilldeck.core.workspace.lint_store).
    """CREATE TABLE IF NOT EXISTS lint_results (
        key TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        data TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS index_blobs (
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (key, name)
    )""",
)


class LocalStore:
    """The store file and a connection per thread.

    Use :meth:`open`; it never raises for a bad file (see the module docstring).

    Attributes:
        path: The database file (``None`` for an in-memory store).
        notices: One sentence per repair made while opening (shown by the faces).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.notices: list[str] = []
        self._local = threading.local()
        self._memory_uri = f"file:skilldeck-{id(self)}?mode=memory&cache=shared"
        self._keep: sqlite3.Connection | None = None

    @classmethod
    def open(cls, home: Path | None = None) -> LocalStore:
        """Open (creating or repairing) ``home/store.sqlite3``; ``home`` defaults to
        ``SKILLDECK_HOME``."""
        folder = home if home is not None else home_dir()
        store = cls(folder / STORE_FILE)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            store._prepare()
        except (OSError, sqlite3.Error) as exc:
            store._fall_back_to_memory(exc)
        return store

    @classmethod
    def in_memory(cls) -> LocalStore:
        """A private store that lives as long as this object (tests, read-only homes)."""
        store = cls(None)
        store._prepare()
        return store

    # ----------------------------------------------------------------- connections

    def connect(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use :meth:`write` for changes)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._new_connection()
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error."""
        conn = self.connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (others close when their thread's object goes)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _new_connection(self) -> sqlite3.Connection:
        if self.path is None:
            conn = sqlite3.connect(self._memory_uri, uri=True, check_same_thread=False)
        else:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.isolation_level = None
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    # ----------------------------------------------------------------- opening

    def _prepare(self) -> None:
        """Check the file and create the schema, rebuilding a file that fails a check."""
        if self.path is None:
            self._keep = self._new_connection()  # a shared memory db lives while one is open
            self._create(self._keep)
            return
        problem = self._problem()
        if problem is not None:
            self._move_aside(problem)
        conn = self.connect()
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("PRAGMA journal_mode = WAL")
        self._create(conn)

    def _problem(self) -> str | None:
        """Why the existing file cannot be used as it is (None: it can, or there is none).

        Only the header is checked here (``PRAGMA quick_check`` cost 10-35 ms on a 10k
        store at every start); damaged pages show as ``sqlite3.DatabaseError`` when read,
        and the reader then calls :meth:`heal`.
        """
        assert self.path is not None
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        try:
            conn = self._new_connection()
            try:
                app_id = conn.execute("PRAGMA application_id").fetchone()[0]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            return f"it is not a readable database ({exc})"
        if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or tables):
            return "it belongs to another program"
        if version not in (0, SCHEMA_VERSION):
            return f"it has schema version {version}, this Skilldeck writes {SCHEMA_VERSION}"
        return None

    def _move_aside(self, problem: str) -> None:
        """Rename the bad file (and its WAL files) so a fresh one is made; say so."""
        assert self.path is not None
        self.close()
        aside = self.path.with_name(f"{self.path.name}.bad")  # only the latest is kept
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        try:
            os.replace(self.path, aside)
            where = f"moved to {aside.name}"
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()
            where = "removed"
        self.notices.append(
            f"local store {self.path} was rebuilt: {problem}; the old file was {where}"
        )

    def _create(self, conn: sqlite3.Connection) -> None:
        with contextlib.closing(conn.cursor()) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                for statement in SCHEMA:
                    cur.execute(statement)
                cur.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                cur.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def _fall_back_to_memory(self, exc: BaseException) -> None:
        reason = getattr(exc, "strerror", None) or str(exc)
        where = self.path
        self.close()
        self.path = None
        self.notices.append(
            f"local store {where} cannot be used ({reason}); working from memory, nothing is kept"
        )
        self._prepare()

    def heal(self, problem: str) -> None:
        """Rebuild the file after a reader found it unusable mid-run (e.g. damaged pages)."""
        if self.path is None:
            return
        self._move_aside(problem)
        self._prepare()


def is_disk_full(exc: BaseException) -> bool:
    """True when ``exc`` says the disk (or quota) is full, not that the file is damaged."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and (
        "database or disk is full" in text or ("disk i/o error" in text and "full" in text)
    )
