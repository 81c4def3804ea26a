"""PostgreSQL backend: fleets of processes, racing operators, restarts, live changes.

Everything runs against a real PostgreSQL server started by ``tests/pg_server.py``; the
tests skip with the reason only where the server binaries cannot be had.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pg_server import CommitCutter, PgServer, wait_until
from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import SessionStore
from skilldeck.core.sessions.postgres import MIGRATIONS, SCHEMA_VERSION, PostgresBackend

WORKER = """
import sys
from skilldeck.core.sessions import SessionStore
sid, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with SessionStore() as store:
    sys.stdin.readline()
    for i in range(count):
        store.check(sid, f"req-{worker}-{i}")
        store.approve(sid, f"tool-{worker}-{i}", actor=f"op-{worker}")
        assert store.check(sid, f"tool-{worker}-{i}").reason == "approved"
print("done")
"""


def _store(url: str, **kw: float) -> SessionStore:
    backend = PostgresBackend(url, **kw)
    return SessionStore(settings=Settings(telemetry=False, sessions_url=url), backend=backend)


@pytest.mark.slow
def test_hundred_processes_on_two_hosts_lose_nothing(pg_url: str, tmp_path: Path) -> None:
    with _store(pg_url) as store:
        sid = store.create(mode="approval").id
    procs = []
    for w in range(100):
        home = tmp_path / f"host-{w % 2}"
        env = {**os.environ, "SKILLDECK_HOME": str(home), "SKILLDECK_SESSIONS_URL": pg_url}
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", WORKER, sid, str(w), "3"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
        )
    for proc in procs:  # release them together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "done", err
    with _store(pg_url) as store:
        session = store.get(sid)
        approved = {f"tool-{w}-{i}" for w in range(100) for i in range(3)}
        assert set(session.approved) == approved
        assert set(session.pending) == {f"req-{w}-{i}" for w in range(100) for i in range(3)}
        audit = store.audit(sid)
        assert len([e for e in audit if e.action == "approve"]) == 300
        assert len([e for e in audit if e.action == "request"]) == 300
        ids = [e.id for e in store.audit()]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        chain = store.verify_audit()  # a hundred writers on two hosts make one chain
        assert chain.ok and chain.rows == len(ids), chain.problems
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host-0", "host-1"]
    assert not any(p.name == "sessions.db" for p in tmp_path.rglob("*"))


def test_two_operators_racing_end_with_one_decision(sessions_url: str) -> None:
    def open_store() -> SessionStore:
        return SessionStore(settings=Settings(telemetry=False, sessions_url=sessions_url))

    alice, bob = open_store(), open_store()
    try:
        sid = alice.create(mode="approval").id
        tools = [f"Tool{i}" for i in range(20)]
        for tool in tools:
            alice.check(sid, tool)
        for tool in tools:
            barrier = threading.Barrier(2)

            def decide(
                store: SessionStore,
                verb: str,
                who: str,
                tool: str = tool,
                gate: threading.Barrier = barrier,
            ) -> None:
                gate.wait()
                getattr(store, verb)(sid, tool, actor=who)

            threads = [
                threading.Thread(target=decide, args=(alice, "approve", "alice")),
                threading.Thread(target=decide, args=(bob, "deny", "bob")),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        session = alice.get(sid)
        assert session.pending == []
        for tool in tools:
            entries = [e for e in alice.audit(sid) if e.subject == tool and e.action != "request"]
            assert len(entries) == 2
            first, second = entries
            assert first.detail["was_pending"] and not second.detail["was_pending"]
            assert second.detail["previous_actor"] == first.actor != second.actor
            final = "approved" if second.action == "approve" else "denied"
            assert (tool in session.approved, tool in session.denied) == (
                final == "approved",
                final == "denied",
            )
    finally:
        alice.close()
        bob.close()


def test_notify_reaches_another_host_within_a_second(pg_url: str) -> None:
    watcher, agent = _store(pg_url), _store(pg_url)
    try:
        sid = agent.create(mode="approval").id
        mark = watcher.last_audit_id()
        assert watcher.live
        assert watcher.wait_for_change(mark, timeout=0.2) == mark  # nothing new: times out
        seen: list[float] = []

        def watch() -> None:
            new = watcher.wait_for_change(mark, timeout=5.0)
            seen.append(time.monotonic())
            assert new > mark

        thread = threading.Thread(target=watch)
        thread.start()
        time.sleep(0.3)  # the watcher is listening
        started = time.monotonic()
        agent.check(sid, "WebFetch")
        thread.join(timeout=10)
        assert seen and seen[0] - started < 1.0
        changes = watcher.changes_since(mark)
        assert [(c.action, c.subject) for c in changes] == [("request", "WebFetch")]
    finally:
        watcher.close()
        agent.close()


def test_newer_schema_is_refused_and_left_unchanged(pg_url: str) -> None:
    with _store(pg_url) as store:
        store.create()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE skilldeck_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SkilldeckError) as err:
        PostgresBackend(pg_url)
    assert err.value.details["diagnostic"] == "SS003" and "newer" in err.value.message
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT value FROM skilldeck_meta").fetchone()
        assert row == ("99",)
        assert conn.execute("SELECT count(*) FROM skilldeck_sessions").fetchone() == (1,)


SCHEMA_4_SHA256 = "30c255255c678cfb115c42a8672a15d3403737e3f068338320ac28bdfa888a05"
"""The statements of versions 1 to 4 as the databases at schema 4 ran them."""


def test_the_statements_a_database_ran_never_change() -> None:
    """A database at schema 4 ran these statements and is never migrated through them
    again: sharing SQL between them (the audit prune of versions 3 and 4) must leave the
    text they run the same, byte for byte; a change to the schema is a new version."""
    ran = json.dumps({v: MIGRATIONS[v] for v in range(1, 5)}, sort_keys=True)
    assert hashlib.sha256(ran.encode()).hexdigest() == SCHEMA_4_SHA256
    assert SCHEMA_VERSION >= 4


def test_migration_is_in_place_and_idempotent(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE unrelated (x int)")
    for _ in range(2):
        with _store(pg_url) as store:
            store.create()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT value FROM skilldeck_meta").fetchone() == (str(SCHEMA_VERSION),)
        assert conn.execute("SELECT count(*) FROM skilldeck_sessions").fetchone() == (2,)
        assert conn.execute("SELECT to_regclass('unrelated') IS NOT NULL").fetchone() == (True,)


def test_unreachable_database_is_a_clear_error() -> None:
    with pytest.raises(SkilldeckError) as err:
        PostgresBackend("postgresql://nobody:secret@127.0.0.1:1/none", retry_seconds=0.2)
    assert err.value.code is ErrorCode.EXECUTION_ERROR
    assert err.value.details["diagnostic"] == "SS006"
    assert "unreachable" in err.value.message and "secret" not in err.value.message


def test_cli_reports_a_down_database_without_traceback(isolated_home: Path) -> None:
    env = {**os.environ, "SKILLDECK_SESSIONS_URL": "postgresql://u:pw@127.0.0.1:1/db"}
    result = subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", "session", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert "unreachable" in result.stderr and "Traceback" not in result.stderr
    assert "pw" not in result.stderr.replace("postgresql://u@", "")


def test_restart_mid_run_loses_no_acknowledged_decision(
    own_pg_server: PgServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="skilldeck.core.sessions.postgres")
    url = own_pg_server.create_database()
    store = _store(url)
    sid = store.create(mode="approval").id
    acknowledged: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            tool = f"T{i}"
            try:
                store.approve(sid, tool, actor="op")
            except SkilldeckError as exc:
                failures.append(exc.message)
            else:
                acknowledged.append(tool)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    assert wait_until(lambda: len(acknowledged) > 20)
    own_pg_server.stop("fast")
    time.sleep(1.0)
    during = len(acknowledged)
    own_pg_server.start()
    assert wait_until(lambda: len(acknowledged) > during + 20, timeout=30)
    stop.set()
    thread.join(timeout=60)
    assert failures == []
    assert "retrying" in caplog.text  # the writer really met the stopped server
    with _store(url) as fresh:
        approved = set(fresh.get(sid).approved)
    assert set(acknowledged) <= approved
    store.close()


def test_down_longer_than_retry_reports_then_heals(own_pg_server: PgServer) -> None:
    url = own_pg_server.create_database()
    store = _store(url, retry_seconds=0.5)
    sid = store.create().id
    own_pg_server.stop("fast")
    try:
        with pytest.raises(SkilldeckError) as err:
            store.approve(sid, "Read")
        assert err.value.details["diagnostic"] == "SS006"
    finally:
        own_pg_server.start()
    assert store.approve(sid, "Read").approved == ["Read"]
    store.close()


def test_commit_lost_in_flight_is_applied_once(pg_server: PgServer) -> None:
    url = pg_server.create_database()
    cutter = CommitCutter(pg_server.port)
    store = _store(cutter.url(url))
    try:
        sid = store.create(mode="approval").id
        store.check(sid, "Bash")
        cutter.armed.set()
        assert store.approve(sid, "Bash", actor="alice").approved == ["Bash"]
        assert cutter.cuts == 1
        approvals = [e for e in store.audit(sid) if e.action == "approve"]
        assert len(approvals) == 1 and approvals[0].detail["was_pending"]
        cutter.armed.set()  # a change that did not land before the cut is made once, too
        store.deny(sid, "Write", actor="bob")
        assert cutter.cuts == 2
        assert [e.subject for e in store.audit(sid) if e.action == "deny"] == ["Write"]
    finally:
        store.close()
        cutter.close()


def test_version_one_database_is_migrated_in_place(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE skilldeck_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for statement in MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO skilldeck_meta VALUES ('schema_version', '1')")
        conn.execute(
            "INSERT INTO skilldeck_sessions (id, created, mode) VALUES ('old', 1, 'strict')"
        )
        conn.execute(
            "INSERT INTO skilldeck_audit (time, session_id, actor, action) "
            "VALUES (1, 'old', 'op', 'create')"
        )
    with _store(pg_url) as store:
        assert store.get("old").mode == "strict"
        store.approve("old", "Read")
        assert [e.action for e in store.audit("old")] == ["create", "approve"]
        assert store.describe()["schema_version"] == SCHEMA_VERSION == 4
        assert store.verify_audit().ok
    with psycopg.connect(pg_url) as conn:
        ops = conn.execute("SELECT op FROM skilldeck_audit ORDER BY id").fetchall()
        assert ops[0] == (None,) and ops[1][0]


def test_listener_survives_a_restart(own_pg_server: PgServer) -> None:
    url = own_pg_server.create_database()
    watcher, agent = _store(url), _store(url)
    try:
        sid = agent.create(mode="approval").id
        mark = watcher.wait_for_change(0, timeout=0.1)  # listening from now on
        own_pg_server.stop("fast")
        own_pg_server.start()
        agent.check(sid, "Bash")
        deadline = time.monotonic() + 10
        current = mark
        while current == mark and time.monotonic() < deadline:
            current = watcher.wait_for_change(mark, timeout=1.0)
        assert current > mark
        assert [c.action for c in watcher.changes_since(mark)] == ["request"]
        started = time.monotonic()  # and it is live again, not polling
        threading.Timer(0.3, agent.check, args=(sid, "Write")).start()
        assert watcher.wait_for_change(current, timeout=5.0) > current
        assert time.monotonic() - started < 1.3
    finally:
        watcher.close()
        agent.close()


# ----------------------------------------------------------------- the audit's guard

APP_GRANTS = [
    "GRANT SELECT ON skilldeck_sessions, skilldeck_session_skills, skilldeck_session_tools, "
    "skilldeck_pending, skilldeck_audit, skilldeck_audit_head, skilldeck_meta TO {role}",
    "GRANT EXECUTE ON FUNCTION skilldeck_create_session, skilldeck_activate_skill, "
    "skilldeck_add_pending, skilldeck_end_session, skilldeck_append_audit TO {role}",
]
"""What the servers' role is granted (the README's grants, word for word)."""

OLD_APP_GRANTS = [
    "GRANT SELECT, INSERT, UPDATE, DELETE ON skilldeck_sessions, skilldeck_session_skills, "
    "skilldeck_session_tools, skilldeck_pending TO {role}",
    "GRANT SELECT, INSERT ON skilldeck_audit TO {role}",
    "GRANT SELECT, INSERT, UPDATE ON skilldeck_audit_head TO {role}",
    "GRANT SELECT ON skilldeck_meta TO {role}",
    "GRANT USAGE ON SEQUENCE skilldeck_audit_id_seq TO {role}",
]
"""What the README granted before schema 4 (a database migrated from it is checked)."""

WIPES = [
    "DELETE FROM skilldeck_audit",
    "UPDATE skilldeck_audit SET actor = 'mallory'",
    "TRUNCATE skilldeck_audit",
    # the attack of issue #21 on schema 2, and the same with the flag the guard reads now
    "SELECT set_config('skilldeck.audit_prune_before', '1e300', false); "
    "DELETE FROM skilldeck_audit",
    "SELECT set_config('skilldeck.audit_prune', 'on', false); DELETE FROM skilldeck_audit",
    "SELECT * FROM skilldeck_prune(0, 0, 'agent', extract(epoch FROM now()), 'x')",
]


def _role(pg_url: str, *grants: str) -> str:
    """A new login role that does not own the tables, with ``grants``; its URL."""
    role = "app_" + secrets.token_hex(4)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        for grant in grants:
            conn.execute(grant.format(role=role))  # type: ignore[arg-type]
    return re.sub(r"//[^@/]+@", f"//{role}@", pg_url)


def _refused(url: str, sql: str, params: tuple[object, ...] = ()) -> str:
    """The error ``sql`` meets on a connection of its own ('' when it went through)."""
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            for statement in sql.split("; "):
                conn.execute(statement, params or None)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            return str(exc)
    return ""


@pytest.mark.parametrize("too_much", [False, True])
def test_a_role_that_does_not_own_the_tables_cannot_wipe_the_audit(
    pg_url: str, too_much: bool
) -> None:
    old = time.time() - 10 * 86_400
    with _store(pg_url) as owner:  # the owner creates the schema, and one old row
        owner.backend.append_audit(None, "owner", "old", "", {}, old)
    extra = ["GRANT DELETE, UPDATE, TRUNCATE ON skilldeck_audit TO {role}"] if too_much else []
    app_url = _role(pg_url, *APP_GRANTS, *extra)
    with _store(app_url) as app:
        sid = app.create(mode="approval", actor="agent").id
        app.check(sid, "Read")
        before = app.audit()
        for sql in WIPES:
            error = _refused(app_url, sql)
            if "skilldeck_prune(" in sql:
                expected = "permission denied"
            else:  # the grant refuses first; granted too much, the trigger does
                expected = "append-only" if too_much else "permission denied"
            assert expected in error, (sql, error)
        assert app.audit() == before and app.verify_audit().ok
        with pytest.raises(SkilldeckError) as refused:  # pruning is the operator's
            app.prune(older_than_days=1, audit_retention_days=1, actor="agent")
        assert refused.value.details["diagnostic"] == "SS002"
    with _store(pg_url) as owner:
        with pytest.raises(SkilldeckError, match="at least 1"):
            owner.prune(older_than_days=0)
        result = owner.prune(older_than_days=1, audit_retention_days=1)  # the definer function
        assert result.audit == 1
        assert [e.action for e in owner.audit()][-2:] == ["audit_pruned", "prune"]
        assert owner.verify_audit().ok


def test_only_the_owner_may_prune(pg_url: str) -> None:
    with _store(pg_url):
        pass
    stranger = _role(pg_url, "GRANT SELECT ON skilldeck_audit TO {role}")
    sql = "SELECT * FROM skilldeck_prune(0, 0, 'x', 1, 'x')"
    assert "permission denied" in _refused(stranger, sql)
    granted = _role(pg_url, "GRANT EXECUTE ON FUNCTION skilldeck_prune TO {role}")
    assert "may not approve, deny, revoke, change a mode or prune" in _refused(granted, sql)


# ------------------------------------ no policy change without its audit row (#32 §7)

FORGERIES = [
    # the attack of issue #32: an approved Bash straight into the tools table
    "INSERT INTO skilldeck_session_tools (session_id, tool, state, actor, time) "
    "VALUES (%(sid)s, 'Bash', 'approved', 'operator', 1)",
    "INSERT INTO skilldeck_session_skills (session_id, name, allowed_tools, activated) "
    "VALUES (%(sid)s, 'x', '[\"Bash\"]', 1)",
    "UPDATE skilldeck_sessions SET mode = 'permissive' WHERE id = %(sid)s",
    "DELETE FROM skilldeck_session_tools WHERE session_id = %(sid)s",
    "UPDATE skilldeck_audit_head SET last_hash = 'x'",
    # a correctly chained operator row, written directly or through the functions
    "INSERT INTO skilldeck_audit (time, session_id, actor, action, subject) "
    "VALUES (1, %(sid)s, 'operator', 'approve', 'Bash')",
    "SELECT skilldeck_append_row(%(sid)s, 'operator', 'approve', 'Bash', '{}', 1e9, 'x')",
    "SELECT skilldeck_append_audit(%(sid)s, 'operator', 'approve', 'Bash', '{}', 1e9, 'x')",
    "SELECT skilldeck_set_tool_state(%(sid)s, 'Bash', 'approved', '{}', 'agent', 1e9, 'x')",
    "SELECT skilldeck_set_mode(%(sid)s, 'permissive', 'agent', 1e9, 'x')",
    "SELECT skilldeck_activate_skill(%(sid)s, 'x', '[\"Bash\"]', '', '{}', 'operator', 1e9, 'x')",
    "SELECT skilldeck_create_session('forged', 'permissive', '', 'operator', 1e9, 'x')",
    "SELECT skilldeck_append_audit(%(sid)s, 'agent', 'audit_pruned', '', '{}', 1e9, 'x')",
    "SELECT skilldeck_append_audit(%(sid)s, 'agent', 'x', '', '{}', 'NaN', 'x')",
]


@pytest.mark.parametrize("migrated", [False, True])
def test_the_servers_role_changes_no_policy_without_its_audit_row(
    pg_url: str, migrated: bool
) -> None:
    """With the README's grants (or those of the old README, on a database migrated
    since), the servers' role can approve nothing, forge no operator row, and what it may
    do (queue a request, activate a skill, end a session) is audited as the agent's."""
    if migrated:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("CREATE TABLE skilldeck_meta (key TEXT PRIMARY KEY, value TEXT)")
            for statement in MIGRATIONS[1] + MIGRATIONS[2] + MIGRATIONS[3]:
                conn.execute(statement.replace("{schema}", "public"))  # type: ignore[arg-type]
            conn.execute("INSERT INTO skilldeck_meta VALUES ('schema_version', '3')")
        old_prune = "GRANT EXECUTE ON FUNCTION skilldeck_prune_audit(double precision) TO {role}"
        app_url = _role(pg_url, *OLD_APP_GRANTS, old_prune)
    with _store(pg_url) as operator:
        sid = operator.create(mode="approval").id
        if not migrated:
            app_url = _role(pg_url, *APP_GRANTS)
        else:  # the migration took the old write grants back; the new ones are given
            role = re.findall(r"//([^@/]+)@", app_url)[0]
            with psycopg.connect(pg_url, autocommit=True) as conn:
                for grant in APP_GRANTS:
                    conn.execute(grant.format(role=role))  # type: ignore[arg-type]
        with _store(app_url) as app:
            before = app.audit()
            for sql in FORGERIES:
                error = _refused(app_url, sql, {"sid": sid})  # type: ignore[arg-type]
                assert error, sql
                assert (
                    "permission denied" in error
                    or "may not" in error
                    or "agent only" in error
                    or "pruning only" in error
                    or "Unix seconds" in error
                ), (sql, error)
            assert app.audit() == before
            assert app.check(sid, "Bash").reason == "not_in_allowlist"  # queued, not allowed
            for change in (app.approve, app.deny, app.revoke):
                with pytest.raises(SkilldeckError) as caught:
                    change(sid, "Bash", actor="agent")
                assert caught.value.details["diagnostic"] == "SS002"
            with pytest.raises(SkilldeckError):
                app.set_mode(sid, "permissive", actor="agent")
            with pytest.raises(SkilldeckError, match="agent only"):
                app.record(sid, "approve", "Bash", actor="operator")
            app.activate_skill(sid, "notes", ["Read"], actor="agent")
            app.record(sid, "script_exit", "demo/x.py", {"exit_code": 0}, actor="agent")
        session = operator.get(sid)
        assert session.approved == [] and session.mode == "approval"
        assert session.pending == ["Bash"] and session.allowed_tools == ["Read"]
        assert operator.decide(session, "Bash").reason == "not_in_allowlist"
        rows = [(e.actor, e.action) for e in operator.audit(sid)]
        assert rows == [
            ("operator", "create"),
            ("agent", "request"),
            ("agent", "activate"),
            ("agent", "script_exit"),
        ]
        assert operator.verify_audit().ok
        operator.approve(sid, "Bash")  # the operator's role decides
        assert operator.check(sid, "Bash").reason == "approved"
        assert operator.audit(sid)[-1].detail["was_pending"] is True
        assert operator.verify_audit().ok


def test_the_database_computes_the_same_chain(pg_url: str) -> None:
    """Rows hashed by the database's functions verify in Python: odd text, times, JSON."""
    with _store(pg_url) as store:
        sid = store.create(mode="approval", label='q"uote\\ é 𝄞 \u2028').id
        for stamp in (time.time(), 1_700_000_000.0, 1_700_000_000.5, 1e9 + 1e-6):
            detail = {"s": 'a\tb\u0001\u007f"', "n": 1.5, "big": 1e16, "l": [None, True]}
            store.backend.append_audit(sid, "operator", "x\ny", "sub\\j", detail, stamp)
        store.backend.append_audit(None, "operator", "none", "", {}, time.time())
        result = store.verify_audit()
        assert result.ok and result.rows == 6, result.to_dict()


def test_version_two_database_is_chained_in_place(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE skilldeck_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for statement in MIGRATIONS[1] + MIGRATIONS[2]:
            conn.execute(statement)  # type: ignore[arg-type]
        conn.execute("INSERT INTO skilldeck_meta VALUES ('schema_version', '2')")
        conn.execute("INSERT INTO skilldeck_sessions (id, created, mode) VALUES ('s', 1, 'strict')")
        for detail in ('{"mode": "strict"}', '{"b": [1.50, "é"], "a": 1e16}', "{}"):
            conn.execute(
                "INSERT INTO skilldeck_audit (time, session_id, actor, action, detail) "
                "VALUES (1.25, 's', 'op', 'x', %s::jsonb)",
                (detail,),
            )
    with _store(pg_url) as store:
        result = store.verify_audit()
        assert result.ok and (result.rows, result.head_id) == (3, 3)
        store.approve("s", "Read")
        assert store.verify_audit().ok and store.verify_audit().rows == 4
    assert "append-only" in _refused(pg_url, WIPES[3])  # version 2's switch is gone
