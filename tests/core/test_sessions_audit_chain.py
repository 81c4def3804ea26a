"""The audit log is tamper-evident: a hash chain with its head kept outside the rows.

Each test runs on SQLite and on a real PostgreSQL server (``tests/pg_server.py``). The
tampering is done the way an attacker who can write the database would: on SQLite with a
raw ``sqlite3`` connection after dropping the append-only triggers, on PostgreSQL as the
tables' owner with the triggers disabled. The chain must report each change.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import CHECKPOINT, GENESIS, SessionStore, SqliteBackend

DAY = 86_400.0
Run = Callable[..., list[Any]]
CONTENT = ("time", "session_id", "actor", "action", "subject", "detail")


@pytest.fixture
def store(isolated_home: Path, sessions_url: str) -> Iterator[SessionStore]:
    with SessionStore(settings=Settings(telemetry=False, sessions_url=sessions_url)) as s:
        yield s


@contextlib.contextmanager
def attacker(store: SessionStore) -> Iterator[Run]:
    """A connection that can rewrite the audit table behind the store's back.

    ``{p}`` in SQL is the table prefix, ``{jsonb}`` the cast a detail value needs and
    ``{text}`` the cast that reads one as text; ``?`` is the placeholder.
    """
    backend = store.backend
    if isinstance(backend, SqliteBackend):
        conn = sqlite3.connect(backend.path)
        conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
        conn.execute("DROP TRIGGER IF EXISTS audit_no_delete")

        def run_sqlite(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
            return conn.execute(sql.format(p="", jsonb="", text=""), params).fetchall()

        try:
            yield run_sqlite
            conn.commit()
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(backend.url) as pg:  # type: ignore[attr-defined]
        pg.execute("ALTER TABLE skilldeck_audit DISABLE TRIGGER USER")

        def run_pg(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
            text = sql.format(p="skilldeck_", jsonb="::jsonb", text="::text").replace("?", "%s")
            cur = pg.execute(text, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

        yield run_pg
        pg.execute("ALTER TABLE skilldeck_audit ENABLE TRIGGER USER")


def set_head(store: SessionStore, run: Run, head: tuple[int, str] | None) -> None:
    """Rewrite (or, with None, delete) the head kept outside the audit rows."""
    if isinstance(store.backend, SqliteBackend):
        run("DELETE FROM meta WHERE key IN ('audit_head_id', 'audit_head_hash')")
        if head is not None:
            run("INSERT INTO meta VALUES ('audit_head_id', ?), ('audit_head_hash', ?)", head)
        return
    run("DELETE FROM skilldeck_audit_head")
    if head is not None:
        run("INSERT INTO skilldeck_audit_head (one, last_id, last_hash) VALUES (true, ?, ?)", head)


def fill(store: SessionStore) -> list[int]:
    """Six audit rows of one session; their ids."""
    sid = store.create(mode="approval", label="ünïcode ✓").id
    store.approve(sid, "Read")
    store.check(sid, "Bash(git log:*)")
    store.record(sid, "script_run", "x/run.py", {"b": [1.5, 1e16, -0.0, None], "a": "é\n"})
    store.deny(sid, "Write")
    store.set_mode(sid, "strict")
    ids = [e.id for e in store.audit()]
    assert len(ids) == 6
    return ids


def swap(run: Run, a: int, b: int, columns: tuple[str, ...]) -> None:
    """Exchange ``columns`` of audit rows ``a`` and ``b``."""
    read = ", ".join("detail{text}" if c == "detail" else c for c in columns)
    write = ", ".join(f"{c} = ?{{jsonb}}" if c == "detail" else f"{c} = ?" for c in columns)
    first = run(f"SELECT {read} FROM {{p}}audit WHERE id = ?", (a,))[0]
    second = run(f"SELECT {read} FROM {{p}}audit WHERE id = ?", (b,))[0]
    run(f"UPDATE {{p}}audit SET {write} WHERE id = ?", (*second, a))
    run(f"UPDATE {{p}}audit SET {write} WHERE id = ?", (*first, b))


def found(store: SessionStore) -> list[tuple[str, int]]:
    result = store.verify_audit()
    assert result.ok == (not result.problems)
    return [(p.kind, p.id) for p in result.problems]


# ---------------------------------------------------------------------------- detection


def test_an_untouched_chain_holds(store: SessionStore) -> None:
    ids = fill(store)
    result = store.verify_audit()
    assert result.ok and result.problems == ()
    assert (result.rows, result.first_id, result.head_id) == (6, ids[0], ids[-1])
    assert result.head_hash is not None and len(result.head_hash) == 64
    assert result.to_dict()["head"] == {"id": ids[-1], "hash": result.head_hash}


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_chain_detects_a_deleted_row(store: SessionStore, where: str) -> None:
    ids = fill(store)
    victim, shows_at = {
        "first": (ids[0], ids[1]),
        "middle": (ids[2], ids[3]),
        "last": (ids[-1], ids[-1]),  # the head still names it
    }[where]
    with attacker(store) as run:
        run("DELETE FROM {p}audit WHERE id = ?", (victim,))
    assert found(store) == [("missing", shows_at)]


@pytest.mark.parametrize(
    ("column", "value"),
    [("actor", "mallory"), ("detail", '{"forged": true}'), ("time", 1.0), ("session_id", None)],
)
def test_chain_detects_an_edited_row(store: SessionStore, column: str, value: object) -> None:
    ids = fill(store)
    cast = "{jsonb}" if column == "detail" else ""
    with attacker(store) as run:
        run(f"UPDATE {{p}}audit SET {column} = ?{cast} WHERE id = ?", (value, ids[3]))
    assert found(store) == [("edited", ids[3])]


@pytest.mark.parametrize("moved", ["content", "whole row"])
def test_chain_detects_reordered_rows(store: SessionStore, moved: str) -> None:
    ids = fill(store)
    columns = CONTENT if moved == "content" else (*CONTENT, "prev_hash", "hash")
    with attacker(store) as run:
        swap(run, ids[1], ids[3], columns)
    problems = found(store)
    assert {kind for kind, _ in problems} == {"reordered"}
    assert {ids[1], ids[3]} <= {at for _, at in problems}


def test_chain_detects_a_row_written_behind_its_back(store: SessionStore) -> None:
    ids = fill(store)
    with attacker(store) as run:
        run("INSERT INTO {p}audit (time, actor, action) VALUES (?, 'x', 'forged')", (time.time(),))
    kinds = found(store)
    assert kinds[0][0] == "unchained" and kinds[0][1] > ids[-1]
    assert kinds[1:] == [("head", ids[-1])]


def test_a_deleted_head_is_reported(store: SessionStore) -> None:
    fill(store)
    with attacker(store) as run:
        set_head(store, run, None)
    assert found(store) == [("head", 0)]


def test_a_consistent_rewrite_is_caught_by_a_recorded_head(store: SessionStore) -> None:
    ids = fill(store)
    early = store.verify_audit().head_hash
    sid = store.create().id
    store.approve(sid, "Grep")
    recorded = store.verify_audit().head_hash
    assert recorded and early
    assert store.verify_audit(early).anchor_id == ids[-1]
    with attacker(store) as run:  # drop the newest rows and move the head back to match
        run("DELETE FROM {p}audit WHERE id > ?", (ids[-1],))
        set_head(store, run, (ids[-1], early))
    assert store.verify_audit().ok, "without an anchor a clean truncation looks whole"
    anchored = store.verify_audit(recorded.upper())
    assert not anchored.ok and [p.kind for p in anchored.problems] == ["anchor"]
    assert store.verify_audit(early).ok


def test_a_head_that_is_not_a_hash_is_refused(store: SessionStore) -> None:
    with pytest.raises(SkilldeckError) as err:
        store.verify_audit("not-a-hash")
    assert err.value.code is ErrorCode.INVALID_PARAM


# ------------------------------------------------------------------------------ pruning


@pytest.mark.parametrize("days", [-1, 0, 0.5, math.nan])
def test_retention_below_a_day_is_refused(store: SessionStore, days: float) -> None:
    fill(store)
    before = store.audit()
    now = time.time()
    calls: list[Callable[[], object]] = [
        lambda: store.prune(audit_retention_days=days),
        lambda: store.prune(older_than_days=days),
        lambda: store.backend.prune(now - 2 * DAY, now - days * DAY, "op", now),
        lambda: store.backend.prune(now - days * DAY, now - 2 * DAY, "op", now),
    ]
    for call in calls:
        with pytest.raises(SkilldeckError) as err:
            call()
        assert err.value.code is ErrorCode.INVALID_PARAM
        assert err.value.details["diagnostic"] == "SS008"
    store.settings.audit_retention_days = -1
    with pytest.raises(SkilldeckError, match="audit_retention_days must be at least 1"):
        store.prune()
    assert store.audit() == before and store.verify_audit().ok


def test_prune_keeps_open_sessions_and_the_chain(store: SessionStore) -> None:
    backend, old = store.backend, time.time() - 10 * DAY
    backend.create_session("ended", "strict", "", "op", old)
    backend.set_mode("ended", "approval", "op", old)
    backend.create_session("open", "strict", "", "op", old)
    backend.end_session("ended", "op", old + 1)
    kept = store.create().id
    result = store.prune(older_than_days=5, audit_retention_days=5)
    assert (result.sessions, result.audit) == (1, 2)  # ended's create and mode
    assert [e.action for e in store.audit("open")] == ["create"]
    assert [e.action for e in store.audit("ended")] == ["end"]  # after open's old row
    checkpoint = next(e for e in store.audit() if e.action == CHECKPOINT)
    assert checkpoint.detail["count"] == 2
    first = store.verify_audit()
    assert first.ok and first.first_id == store.audit()[0].id
    backend.end_session("open", "op", old + 2)
    assert store.prune(older_than_days=5, audit_retention_days=5).audit == 2
    # the end of "open" was written after newer rows: it stays with them
    assert [e.action for e in store.audit("open")] == ["end"] and store.audit("ended") == []
    assert store.verify_audit().ok
    assert [e.action for e in store.audit(kept)] == ["create"]


def test_prune_with_nothing_old_writes_no_checkpoint(store: SessionStore) -> None:
    fill(store)
    assert store.prune(older_than_days=1, audit_retention_days=1).audit == 0
    assert CHECKPOINT not in [e.action for e in store.audit()]
    assert store.verify_audit().ok


def test_only_pruning_writes_a_checkpoint(store: SessionStore) -> None:
    forged = {"count": 1, "last_id": 0, "last_hash": GENESIS}
    with pytest.raises(SkilldeckError) as err:
        store.record(None, CHECKPOINT, "", forged)
    assert err.value.code is ErrorCode.INVALID_PARAM


# ---------------------------------------------------------------------- SQLite attacks

V1_SCHEMA = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE sessions (id TEXT PRIMARY KEY, created REAL NOT NULL, mode TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '', created_by TEXT NOT NULL DEFAULT '', ended REAL)""",
    """CREATE TABLE session_skills (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, name TEXT NOT NULL,
        allowed_tools TEXT NOT NULL DEFAULT '[]', arguments TEXT NOT NULL DEFAULT '',
        actor TEXT NOT NULL DEFAULT '', activated REAL NOT NULL, PRIMARY KEY (session_id, name))""",
    """CREATE TABLE session_tools (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, tool TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('approved', 'denied')),
        actor TEXT NOT NULL DEFAULT '', time REAL NOT NULL, PRIMARY KEY (session_id, tool))""",
    """CREATE TABLE pending (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, tool TEXT NOT NULL,
        actor TEXT NOT NULL DEFAULT '', requested REAL NOT NULL, PRIMARY KEY (session_id, tool))""",
    """CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL,
        session_id TEXT, actor TEXT NOT NULL, action TEXT NOT NULL,
        subject TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '{}')""",
    "CREATE INDEX audit_by_session ON audit (session_id, id)",
    "CREATE INDEX audit_by_time ON audit (time)",
    """CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END""",
    """CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    WHEN NOT EXISTS (
        SELECT 1 FROM meta WHERE key = 'audit_prune_before' AND OLD.time < CAST(value AS REAL))
    BEGIN
        SELECT RAISE(ABORT, 'audit log is append-only (only retention pruning deletes)');
    END""",
    "PRAGMA user_version = 1",
]


def _meta_switch_attack(path: Path) -> None:
    """What an approved script did to version 1: open the log through ``meta``, wipe it."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('audit_prune_before', '1e300')")
            conn.execute("DELETE FROM audit")
    finally:
        conn.close()


def test_the_meta_switch_no_longer_opens_the_sqlite_log(isolated_home: Path) -> None:
    with SessionStore(settings=Settings(telemetry=False)) as store:
        fill(store)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            _meta_switch_attack(store.path)
        assert len(store.audit()) == 6 and store.verify_audit().ok


def test_a_version_one_sqlite_file_is_chained_in_place(isolated_home: Path) -> None:
    path = isolated_home / "sessions.db"
    conn = sqlite3.connect(path)
    for statement in V1_SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO sessions (id, created, mode) VALUES ('old', 1, 'strict')")
    rows = [
        (1.0, "old", "op", "create", "old", '{"mode": "strict"}'),
        (2.5, None, "x", "y", "", "{}"),
    ]
    conn.executemany(
        "INSERT INTO audit (time, session_id, actor, action, subject, detail) VALUES (?,?,?,?,?,?)",
        rows,
    )
    conn.commit()
    conn.close()
    with SessionStore(path, settings=Settings(telemetry=False)) as store:
        result = store.verify_audit()
        assert result.ok and (result.rows, result.head_id) == (2, 2)
        store.approve("old", "Read")
        assert [e.action for e in store.audit("old")] == ["create", "approve"]
        assert store.verify_audit().ok
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            _meta_switch_attack(path)
        assert store.verify_audit().rows == 3
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == 2
