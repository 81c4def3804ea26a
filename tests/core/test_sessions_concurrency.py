"""Several processes writing to one session at once lose nothing (SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck.core.sessions import SessionStore

WORKER = """
import sys
from skilldeck.core.sessions import SessionStore
sid, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with SessionStore() as store:
    sys.stdin.readline()
    for i in range(count):
        store.approve(sid, f"tool-{worker}-{i}", actor=f"worker-{worker}")
        store.check(sid, f"other-{worker}-{i}")
print("done")
"""


def test_four_processes_approve_concurrently(
    isolated_home: Path, sessions_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", sessions_url)
    env = dict(os.environ)
    with SessionStore() as store:
        sid = store.create(mode="approval").id
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, sid, str(w), "25"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in range(4)
    ]
    for proc in procs:  # release them together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "done"
    with SessionStore() as store:
        session = store.get(sid)
        expected = {f"tool-{w}-{i}" for w in range(4) for i in range(25)}
        assert set(session.approved) == expected and len(session.approved) == 100
        assert len(session.pending) == 100
        audit = store.audit(sid)
        approvals = [e for e in audit if e.action == "approve"]
        assert len(approvals) == 100
        assert {e.subject for e in approvals} == expected
        assert len([e for e in audit if e.action == "request"]) == 100
        ids = [e.id for e in audit]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        chain = store.verify_audit()  # four writers at once still make one chain
        assert chain.ok and chain.rows == len(store.audit()), chain.problems
