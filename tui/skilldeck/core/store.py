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
import time
from collections.abc import Iterator
from pathlib import Path

from skilldeck.core.config import home_dir

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a store this code writes; any other value is rebuilt."""

APPLICATION_ID = 0x534B4443
"""``PRAGMA application_id`` ("SKDC"): tells our file from another program's database."""

STORE_FILE = "store.sqlite3"
BUSY_TIMEOUT_MS = 10_000
PRUNE_AFTER_S = 30 * 24 * 3600
"""A saved index not updated for this long is dropped (rebuilt if its catalog comes back)."""
PRUNE_EVERY_S = 24 * 3600
"""How often :meth:`LocalStore.prune_if_due` prunes (the mtime of ``store.pruned``)."""

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
    # Instructions fetched from a URL (``instructions: {url: ...}``) with the sha256 of
    # ``body``: served again when the URL cannot be fetched (skilldeck.core.loader.remote).
    """CREATE TABLE IF NOT EXISTS instruction_cache (
        url TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        fetched_ns INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
    # A skill's embedding under one model: ``key`` names the version of the skill's
    # embedded text, ``vector`` is raw float32 (skilldeck.core.search.vectors).
    """CREATE TABLE IF NOT EXISTS skill_vectors (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        vector BLOB NOT NULL,
        used_ns INTEGER NOT NULL,
        PRIMARY KEY (model, key)
    ) WITHOUT ROWID""",
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

    # ----------------------------------------------------------------- pruning

    def prune(self, now_s: float | None = None) -> tuple[int, int]:
        """Drop saved indexes not updated for :data:`PRUNE_AFTER_S`, skill vectors not used
        for as long and the rows of SKILL.md files that no longer exist; returns (indexes,
        rows) dropped.

        The store is a cache: what is dropped is rebuilt when needed. Without pruning,
        every catalog ever searched (a CI checkout in a new temp folder each run) would
        stay in the file for good.
        """
        cutoff = int(((now_s if now_s is not None else time.time()) - PRUNE_AFTER_S) * 1e9)
        conn = self.connect()
        stale = [
            k for (k,) in conn.execute("SELECT key FROM index_meta WHERE updated_ns < ?", (cutoff,))
        ]
        gone = [p for (p,) in conn.execute("SELECT path FROM skills") if not os.path.exists(p)]
        if stale or gone:
            with self.write() as tx:
                tx.executemany("DELETE FROM index_blobs WHERE key = ?", [(k,) for k in stale])
                tx.executemany("DELETE FROM index_meta WHERE key = ?", [(k,) for k in stale])
                tx.executemany("DELETE FROM skills WHERE path = ?", [(p,) for p in gone])
        with self.write() as tx:  # embeddings no search used for as long (see .vectors)
            tx.execute("DELETE FROM skill_vectors WHERE used_ns < ?", (cutoff,))
        return len(stale), len(gone)

    def prune_if_due(self) -> None:
        """:meth:`prune` at most once per :data:`PRUNE_EVERY_S` (never for a memory store;
        a store that is busy or failing is left for next time)."""
        if self.path is None:
            return
        marker = self.path.with_name("store.pruned")
        try:
            if time.time() - marker.stat().st_mtime < PRUNE_EVERY_S:
                return
        except OSError:
            pass
        try:
            marker.touch()
            self.prune()
        except (OSError, sqlite3.Error):
            return

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
