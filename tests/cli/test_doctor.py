"""``skilldeck doctor``: which sessions backend is in use and whether it answers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli as run
from skilldeck.core.config import Settings
from skilldeck.core.sessions import SessionStore
from skilldeck.core.sessions.postgres import SCHEMA_VERSION


def test_doctor_reports_embedded_sqlite(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert "sqlite" in out and str(isolated_home / "sessions.db") in out and "reachable" in out


def test_doctor_reports_reachable_postgres(
    capsys: pytest.CaptureFixture[str], pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", pg_url)
    code, out, _ = run(capsys, "--format", "json", "doctor")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    sessions = report["sessions"]
    assert sessions["backend"] == "postgresql" and sessions["reachable"]
    assert sessions["schema_version"] == SCHEMA_VERSION and sessions["server_version"]
    assert sessions["audit"]["ok"] and sessions["audit"]["problems"] == []


def test_doctor_reports_unreachable_postgres_from_config_file(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    config = isolated_home / "config.toml"
    config.write_text('sessions_url = "postgresql://ops:s3cret@127.0.0.1:1/fleet"\n')
    code, out, err = run(capsys, "doctor", "--timeout", "0")
    assert code == 1
    assert "postgresql://ops@127.0.0.1:1/fleet" in out and "UNREACHABLE" in out
    assert "s3cret" not in out + err and "Traceback" not in out + err


def test_environment_wins_over_config_file(
    capsys: pytest.CaptureFixture[str], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated_home / "config.toml").write_text('sessions_url = "postgresql://x@127.0.0.1:1/a"\n')
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", "")
    code, out, _ = run(capsys, "--format", "json", "doctor")
    assert code == 0 and json.loads(out)["sessions"]["backend"] == "sqlite"


def test_doctor_reports_the_audit_chain(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    with SessionStore(settings=Settings(telemetry=False)) as store:
        sid = store.create().id
        store.approve(sid, "Read")
    code, out, _ = run(capsys, "doctor")
    assert code == 0 and "audit chain" in out and "intact (2 rows" in out
    conn = sqlite3.connect(isolated_home / "sessions.db")
    with conn:  # someone with write access to the file edits a decision
        conn.execute("DROP TRIGGER audit_no_update")
        conn.execute("UPDATE audit SET actor = 'mallory' WHERE id = 2")
    conn.close()
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "reachable" in out and "BROKEN at id 2 (edited)" in out
    code, out, _ = run(capsys, "--format", "json", "doctor")
    report = json.loads(out)
    assert code == 1 and not report["ok"] and not report["sessions"]["audit"]["ok"]


def test_doctor_flags_an_audit_retention_below_a_day(
    capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    (isolated_home / "config.toml").write_text("audit_retention_days = -1\n")
    code, out, err = run(capsys, "doctor")
    assert code == 0, "a config problem is a warning: the database is usable"
    assert "config problem" in out and "audit_retention_days must be at least 1" in out
    assert "Traceback" not in out + err
