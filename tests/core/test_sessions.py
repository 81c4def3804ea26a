"""Session store: policy modes, precedence, matching, pending queue, audit, pruning.

The ``store`` tests are the shared backend suite: each runs on SQLite and on a real
PostgreSQL server (see ``tests/pg_server.py``); ``sqlite_store`` tests are SQLite-only.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pg_server import raw_sql
from skilldeck.core.config import Settings, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import (
    REASONS,
    SessionBackend,
    SessionStore,
    SqliteBackend,
    base_tool_name,
    run_outcome,
    split_tool,
    tool_matches,
)

DAY = 86_400.0


def _settings(sessions_url: str, **overrides: object) -> Settings:
    settings = load_settings()
    settings.sessions_url = sessions_url
    for key, value in overrides.items():
        setattr(settings, key, value)
    return settings


@pytest.fixture
def store(isolated_home: Path, sessions_url: str) -> Iterator[SessionStore]:
    s = SessionStore(settings=_settings(sessions_url))
    yield s
    s.close()


@pytest.fixture
def sqlite_store(isolated_home: Path) -> Iterator[SessionStore]:
    s = SessionStore()
    yield s
    s.close()


def test_default_location_is_under_home(sqlite_store: SessionStore, isolated_home: Path) -> None:
    assert sqlite_store.path == isolated_home / "sessions.db"
    assert sqlite_store.path.is_file()
    mode = sqlite3.connect(sqlite_store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    assert sqlite_store.describe()["backend"] == "sqlite"


def test_backend_satisfies_protocol(store: SessionStore, sessions_url: str) -> None:
    backend: SessionBackend = store.backend
    if sessions_url:
        from skilldeck.core.sessions.postgres import SCHEMA_VERSION as PG_SCHEMA
        from skilldeck.core.sessions.postgres import PostgresBackend

        assert isinstance(backend, PostgresBackend)
        info = store.describe()
        assert info["backend"] == "postgresql" and info["reachable"]
        assert info["location"].startswith("postgresql://") and info["schema_version"] == PG_SCHEMA
    else:
        assert isinstance(backend, SqliteBackend)


def test_create_uses_default_mode_and_round_trips(store: SessionStore) -> None:
    session = store.create(label="demo")
    assert session.mode == "approval"
    again = store.get(session.id)
    assert again.id == session.id and again.label == "demo" and again.is_open
    assert [s.id for s in store.list()] == [session.id]
    data = store.show(session.id)
    assert data["audit"][0]["action"] == "create"
    json.dumps(data)


def test_unknown_mode_and_session(store: SessionStore) -> None:
    with pytest.raises(SkilldeckError) as bad_mode:
        store.create(mode="yolo")
    assert bad_mode.value.code is ErrorCode.INVALID_PARAM
    with pytest.raises(SkilldeckError) as missing:
        store.approve("nope", "Bash")
    assert missing.value.code is ErrorCode.NOT_FOUND
    decision = store.check("nope", "Bash")
    assert (decision.allowed, decision.requires_approval, decision.reason) == (
        False,
        False,
        "no_session",
    )


def test_strict_mode(store: SessionStore) -> None:
    sid = store.create(mode="strict").id
    store.activate_skill(sid, "git", ["Read", "Bash(git log:*)"])
    assert store.check(sid, "Read").reason == "skill_allowlist"
    refused = store.check(sid, "Write")
    assert (refused.allowed, refused.requires_approval, refused.reason) == (
        False,
        False,
        "not_in_allowlist",
    )
    assert store.pending(sid) == []
    store.approve(sid, "Write")
    assert store.check(sid, "Write").reason == "approved"


def test_approval_mode_queues_pending_once(store: SessionStore) -> None:
    sid = store.create(mode="approval").id
    first = store.check(sid, "WebFetch")
    again = store.check(sid, "WebFetch")
    assert first.requires_approval and not first.allowed
    assert first.reason == again.reason == "not_in_allowlist"
    assert store.pending(sid) == ["WebFetch"]
    requests = [e for e in store.audit(sid) if e.action == "request"]
    assert len(requests) == 1 and requests[0].actor == "agent"
    store.approve(sid, "WebFetch", actor="alice")
    assert store.pending(sid) == []
    decision = store.check(sid, "WebFetch")
    assert decision.allowed and decision.reason == "approved"


def test_deny_clears_pending(store: SessionStore) -> None:
    sid = store.create().id
    store.check(sid, "Bash")
    store.deny(sid, "Bash")
    assert store.pending(sid) == []
    assert store.check(sid, "Bash").reason == "denied"


def test_permissive_mode_allows_and_audits_a_warning(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    sid = store.create(mode="permissive").id
    with caplog.at_level("WARNING"):
        decision = store.check(sid, "Anything")
    assert decision.allowed and decision.reason == "permissive"
    assert "permissive" in caplog.text
    assert [e.action for e in store.audit(sid)][-1] == "permissive_allow"


@pytest.mark.parametrize("mode", ["strict", "approval", "permissive"])
def test_deny_beats_approve_beats_allowlist(store: SessionStore, mode: str) -> None:
    sid = store.create(mode=mode).id
    store.activate_skill(sid, "shell", ["Bash"])
    assert store.check(sid, "Bash").reason == "skill_allowlist"
    store.approve(sid, "Bash")
    assert store.check(sid, "Bash").reason == "approved"
    store.deny(sid, "Bash")
    decision = store.check(sid, "Bash")
    assert (decision.allowed, decision.requires_approval, decision.reason) == (
        False,
        False,
        "denied",
    )
    store.revoke(sid, "Bash")
    assert store.check(sid, "Bash").reason == "skill_allowlist"


def test_deny_after_approve_replaces_it(store: SessionStore) -> None:
    sid = store.create().id
    store.approve(sid, "Write")
    session = store.deny(sid, "Write")
    assert session.denied == ["Write"] and session.approved == []


def test_set_mode_changes_decisions(store: SessionStore) -> None:
    sid = store.create(mode="strict").id
    assert not store.check(sid, "Grep").requires_approval
    store.set_mode(sid, "permissive")
    assert store.check(sid, "Grep").allowed
    assert store.get(sid).mode == "permissive"
    modes = [e for e in store.audit(sid) if e.action == "mode"]
    assert modes[0].subject == "permissive" and modes[0].detail == {"previous": "strict"}


def test_activation_resolves_covered_pending(store: SessionStore) -> None:
    sid = store.create().id
    store.check(sid, "Bash")
    store.check(sid, "Write")
    session = store.activate_skill(sid, "git", ["Bash(git log:*)"], actor="operator", arguments="x")
    assert session.pending == ["Write"]
    assert session.active_skills == ["git"] and session.allowed_tools == ["Bash(git log:*)"]
    assert session.skills[0].actor == "operator" and session.skills[0].arguments == "x"


def test_reasons_are_the_documented_set(store: SessionStore) -> None:
    sid = store.create().id
    store.activate_skill(sid, "s", ["Read"])
    store.approve(sid, "Write")
    store.deny(sid, "Bash")
    seen = {store.check(sid, t).reason for t in ("Read", "Write", "Bash", "Grep")}
    seen.add(store.check("missing", "Read").reason)
    assert seen <= set(REASONS)
    assert seen == {"skill_allowlist", "approved", "denied", "not_in_allowlist", "no_session"}


# ------------------------------------------------------------------------------ matching


def test_split_and_base_names() -> None:
    assert split_tool("Bash(git log:*)") == ("Bash", "git log:*")
    assert split_tool("Read") == ("Read", None)
    assert split_tool("mcp__github__create_issue") == ("github.create_issue", None)
    assert base_tool_name(" Bash( npm run test ) ") == "Bash"


@pytest.mark.parametrize(
    ("entry", "tool", "expected"),
    [
        ("Bash(git log:*)", "Bash", True),
        ("Bash(git log:*)", "Bash(git log --oneline)", True),
        ("Bash(git log:*)", "Bash(rm -rf /)", False),
        ("Bash", "Bash(rm -rf /)", True),
        ("Bash(npm run *)", "Bash(npm run test)", True),
        ("Bash(npm test)", "Bash(npm test)", True),
        ("Bash(npm test)", "Bash(npm install)", False),
        ("Read", "ReadFile", False),
        ("Read", "read", False),
        ("github.*", "github.create_issue", True),
        ("mcp__github__create_issue", "github.create_issue", True),
        ("mcp__github", "github.list", True),
        ("Write", "Bash", False),
    ],
)
def test_tool_matching(entry: str, tool: str, expected: bool) -> None:
    assert tool_matches(entry, tool) is expected


def test_pattern_in_allowlist_and_denial(store: SessionStore) -> None:
    sid = store.create(mode="strict").id
    store.activate_skill(sid, "git", ["Bash(git log:*)"])
    assert store.check(sid, "Bash").allowed
    assert store.check(sid, "Bash(git log -3)").allowed
    assert not store.check(sid, "Bash(rm -rf /)").allowed
    store.deny(sid, "Bash(git log:*)")
    assert store.check(sid, "Bash(git log -3)").reason == "denied"


# ------------------------------------------------------------------------- audit, prune


@pytest.mark.parametrize(
    "attack",
    [
        "UPDATE {p}audit SET actor = 'mallory'",
        "DELETE FROM {p}audit",
        "DELETE FROM {p}audit WHERE id = 1",
    ],
)
def test_audit_is_append_only(store: SessionStore, attack: str) -> None:
    sid = store.create().id
    store.approve(sid, "Read")
    with pytest.raises(Exception, match="append-only"):
        raw_sql(store, attack)
    assert [e.action for e in store.audit(sid)] == ["create", "approve"]


def test_audit_polling(store: SessionStore) -> None:
    before = store.last_audit_id()
    sid = store.create().id
    store.deny(sid, "Bash")
    changes = store.changes_since(before)
    assert [c.action for c in changes] == ["create", "deny"]
    assert store.last_audit_id() == changes[-1].id == store.data_version()
    assert store.changes_since(store.last_audit_id()) == []
    assert [e.to_dict()["session"] for e in changes] == [sid, sid]


def test_end_and_prune_keep_audit(store: SessionStore) -> None:
    keep = store.create().id
    gone = store.create().id
    store.check(gone, "Bash")
    store.backend.end_session(gone, "operator", time.time() - 2 * DAY)  # ended two days ago
    assert store.check(gone, "Bash").reason == "no_session"
    assert [s.id for s in store.list()] == [keep]
    assert {s.id for s in store.list(include_ended=True)} == {keep, gone}
    assert store.prune(older_than_days=3).sessions == 0
    result = store.prune(older_than_days=1)
    assert result.sessions == 1 and result.audit == 0
    assert store.find(gone) is None
    actions = [e.action for e in store.audit(gone)]
    assert actions == ["create", "request", "end"]
    assert store.audit()[-1].action == "prune"
    assert store.verify_audit().ok


def test_prune_drops_audit_past_retention(isolated_home: Path, sessions_url: str) -> None:
    settings = _settings(sessions_url, audit_retention_days=1)
    with SessionStore(settings=settings) as store:
        store.backend.append_audit(None, "x", "old", "", {}, time.time() - 3 * DAY)
        sid = store.create().id
        result = store.prune(older_than_days=1)
        assert result.audit == 1
        assert [e.action for e in store.audit(sid)] == ["create"]
        assert [e.action for e in store.audit()] == ["create", "audit_pruned", "prune"]
        assert store.verify_audit().ok


# -------------------------------------------------------------------------- corruption


def test_corrupt_database_is_reported_and_untouched(isolated_home: Path) -> None:
    db = load_settings().sessions_db
    db.parent.mkdir(parents=True, exist_ok=True)
    garbage = b"this is not a database\n" * 100
    db.write_bytes(garbage)
    with pytest.raises(SkilldeckError) as err:
        SessionStore()
    assert "sessions database" in err.value.message and "untouched" in err.value.message
    assert err.value.details["diagnostic"] == "SS001"
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in db.parent.iterdir()) == ["sessions.db"]


def test_damaged_database_with_valid_header(isolated_home: Path) -> None:
    db = load_settings().sessions_db
    with SessionStore() as store:
        store.create()
    data = bytearray(db.read_bytes())
    for sidecar in ("-wal", "-shm"):
        Path(str(db) + sidecar).unlink(missing_ok=True)
    data[100:] = b"\xff" * (len(data) - 100)
    db.write_bytes(bytes(data))
    snapshot = db.read_bytes()
    with pytest.raises(SkilldeckError) as err, SessionStore() as store:
        store.list()
    assert err.value.code is ErrorCode.EXECUTION_ERROR
    assert db.read_bytes() == snapshot


def test_telemetry_records_authorizations(store: SessionStore, isolated_home: Path) -> None:
    sid = store.create().id
    store.check(sid, "Bash")
    lines = [
        json.loads(x)
        for f in (isolated_home / "telemetry").iterdir()
        for x in f.read_text().splitlines()
    ]
    event = [x for x in lines if x["event"] == "tool_authorization"][-1]
    assert event["decision"] == "requires_approval" and event["reason"] == "not_in_allowlist"
    assert event["session"] == sid and event["tool"] == "Bash"


def test_threads_share_one_store(store: SessionStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    sid = store.create().id

    def work(worker: int) -> None:
        for i in range(25):
            store.approve(sid, f"t{worker}-{i}")
            store.check(sid, f"t{worker}-{i}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    assert len(store.get(sid).approved) == 100


def test_unwritable_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SkilldeckError) as err:
        SessionStore(blocker / "sub" / "sessions.db")
    assert err.value.code is ErrorCode.EXECUTION_ERROR


@pytest.mark.parametrize(
    ("detail", "said"),
    [
        ({"run": 1, "exit_code": 0, "timed_out": False}, ("exit 0", True)),
        ({"run": 1, "exit_code": 3, "timed_out": False}, ("exit 3", False)),
        ({"run": 1, "exit_code": -9, "timed_out": True}, ("timed out", False)),
        ({"run": 1, "exit_code": None, "error": "no-sandbox"}, ("failed (no-sandbox)", False)),
    ],
)
def test_a_run_outcome_has_one_wording(detail: dict[str, object], said: tuple[str, bool]) -> None:
    """The CLI's ``session show`` and the TUI's audit table both word a ``script_exit`` row
    with :func:`run_outcome` (the TUI colours it by the flag)."""
    assert run_outcome(detail) == said
