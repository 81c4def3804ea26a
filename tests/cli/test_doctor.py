"""``skilldeck doctor``: which sessions backend is in use and whether it answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilldeck.cli.main import main
from skilldeck.core.sessions.postgres import SCHEMA_VERSION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


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
