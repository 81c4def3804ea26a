"""The local store: one SQLite file under ``SKILLDECK_HOME`` that caches parsed skills and
keeps the search index, so a one-shot command never re-parses or re-indexes what did not
change.

Plain data only: text, numbers, JSON and raw array bytes. Nothing read from it is ever
unpickled or executed, and nothing in it is trusted: a file that is not a database, is
damaged, belongs to another program or to another schema version is moved aside and
rebuilt with a notice (:meth:`LocalStore.notice`); a row that does not decode is dropped
and its skill parsed again by whoever reads it. A home that cannot be written gets an
in-memory store (same notice), so skills are still served.

The store owns the file, not its tables: each table is declared (``TABLES``) in the module
whose SQL reads and writes it, which creates it on first use with :meth:`LocalStore.ensure`
and prunes it (:meth:`LocalStore.prune` asks each owner):

* ``skills``: :mod:`skilldeck.core.discovery.records`;
* ``index_meta``, ``index_blobs``: :mod:`skilldeck.core.search.persist`;
* ``text_vectors``: :mod:`skilldeck.core.search.vectors`;
* ``lint_results``: :mod:`skilldeck.core.workspace.lint_store`;
* ``instruction_cache``: :mod:`skilldeck.core.loader.remote`.

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
from collections.abc import Iterator, Sequence
from pathlib import Path

from skilldeck.core.config import home_dir

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a store this code writes; any other value is rebuilt. Bump it
when an owner changes the columns of a table it declares."""

APPLICATION_ID = 0x534B4443
"""``PRAGMA application_id`` ("SKDC"): tells our file from another program's database."""

STORE_FILE = "store.sqlite3"
BUSY_TIMEOUT_MS = 10_000
PRUNE_AFTER_S = 30 * 24 * 3600
"""A saved index not updated for this long is dropped (rebuilt if its catalog comes back)."""
PRUNE_EVERY_S = 24 * 3600
"""How often :meth:`LocalStore.prune_if_due` prunes (the mtime of ``store.pruned``)."""


class LocalStore:
    """The store file and a connection per thread.

    Use :meth:`open`; it never raises for a bad file (see the module docstring).

    Attributes:
        path: The database file (``None`` for an in-memory store).
        notices: One sentence per repair or problem met (shown by the faces); read it,
            add to it only with :meth:`notice`.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.notices: list[str] = []
        self._ensured: set[tuple[str, ...]] = set()
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

    def ensure(self, tables: Sequence[str]) -> None:
        """Run an owner's ``CREATE TABLE IF NOT EXISTS`` statements in one ``BEGIN
        IMMEDIATE`` transaction, once per store (again after the file is rebuilt).

        Raises:
            sqlite3.Error: As a write would (busy, full, damaged); the owner handles it as
                it handles its own queries' errors.
        """
        key = tuple(tables)
        if key in self._ensured:
            return
        with self.write() as conn:
            for statement in key:
                conn.execute(statement)
        self._ensured.add(key)

    def notice(self, text: str) -> None:
        """Add one sentence to :attr:`notices` (the only way to add one)."""
        self.notices.append(text)

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
        """Ask each table's owner to drop what is stale: saved indexes not updated for
        :data:`PRUNE_AFTER_S`, skill vectors not used for as long and the rows of SKILL.md
        files that no longer exist; returns (indexes, rows) dropped.

        The store is a cache: what is dropped is rebuilt when needed. Without pruning,
        every catalog ever searched (a CI checkout in a new temp folder each run) would
        stay in the file for good. The owners are imported here, not at the top: they
        import this module (and numpy), and only pruning needs them all.
        """
        from skilldeck.core.discovery import records
        from skilldeck.core.search import persist, vectors

        cutoff_ns = int(((now_s if now_s is not None else time.time()) - PRUNE_AFTER_S) * 1e9)
        indexes = persist.prune(self, cutoff_ns)
        rows = records.prune(self)
        vectors.prune(self, cutoff_ns)
        return indexes, rows

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
        """Check the file and stamp it as ours, rebuilding a file that fails a check.

        Tables are the owners' (:meth:`ensure`): a new or rebuilt file has none yet.
        """
        self._ensured.clear()
        if self.path is None:
            self._keep = self._new_connection()  # a shared memory db lives while one is open
            self._stamp(self._keep)
            return
        problem = self._problem()
        if problem is not None:
            self._move_aside(problem)
        conn = self.connect()
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("PRAGMA journal_mode = WAL")
        self._stamp(conn)

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
        self.notice(f"local store {self.path} was rebuilt: {problem}; the old file was {where}")

    def _stamp(self, conn: sqlite3.Connection) -> None:
        """Mark the file as ours and of :data:`SCHEMA_VERSION`, in one transaction."""
        with contextlib.closing(conn.cursor()) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
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
        self.notice(
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
