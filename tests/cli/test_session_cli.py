"""CLI contract of ``session``, ``tools`` and ``telemetry`` (real subprocesses)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import write_skill


def run(
    *args: str, check_rc: int | None = 0, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.stdout, proc.stderr)
    return proc


def run_json(*args: str, check_rc: int | None = 0) -> Any:
    return json.loads(run(*args, "--format", "json", check_rc=check_rc).stdout)


def check_json(*args: str) -> Any:
    """``session check`` in JSON; its exit status says whether the tool is allowed."""
    proc = run("session", "check", *args, "--format", "json", check_rc=None)
    decision = json.loads(proc.stdout)
    assert proc.returncode == (0 if decision["allowed"] else 1), proc.stderr
    return decision


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "gitlog",
        body="Summarise $ARGUMENTS\n",
        extra='allowed-tools: "Bash(git log:*) Read"\ntools:\n  - name: github.create_issue\n'
        "    required: true\n",
    )
    return root


def test_session_lifecycle(skills: Path) -> None:
    sid = run_json("session", "new", "--mode", "approval", "--label", "demo")["id"]
    assert run("session", "new").stdout.strip() != sid
    decision = check_json(sid, "Bash")
    assert decision == {
        "allowed": False,
        "requires_approval": True,
        "reason": "not_in_allowlist",
        "matched": None,
    }
    loaded = run("--root", str(skills), "session", "load", sid, "gitlog", "the", "week")
    assert "Summarise the week" in loaded.stdout
    assert check_json(sid, "Bash")["reason"] == "skill_allowlist"
    run("session", "approve", sid, "Write")
    assert check_json(sid, "Write")["reason"] == "approved"
    denied = run_json("session", "deny", sid, "Write")
    assert denied["denied"] == ["Write"]
    assert check_json(sid, "Write") == {
        "allowed": False,
        "requires_approval": False,
        "reason": "denied",
        "matched": "Write",
    }
    assert run_json("session", "mode", sid, "strict")["mode"] == "strict"
    assert check_json(sid, "Grep")["reason"] == "not_in_allowlist"
    shown = run_json("session", "show", sid)
    assert shown["active_skills"] == ["gitlog"] and shown["label"] == "demo"
    actions = [(e["actor"], e["action"]) for e in shown["audit"]]
    assert ("operator", "activate") in actions and ("operator", "deny") in actions
    assert ("agent", "request") in actions
    listed = run_json("session", "list")["sessions"]
    assert sid in {s["id"] for s in listed}
    assert "demo" in run("session", "list").stdout
    assert run_json("session", "end", sid)["ended"] is not None
    assert check_json(sid, "Read")["reason"] == "no_session"
    assert sid not in {s["id"] for s in run_json("session", "list")["sessions"]}
    refused = run("session", "prune", "--older-than", "0", check_rc=2)
    assert "at least 1" in refused.stderr and "Traceback" not in refused.stderr
    assert run_json("session", "prune", "--older-than", "1")["sessions"] == 0
    assert sid in {s["id"] for s in run_json("session", "list", "--all")["sessions"]}
    assert "audit" in run("session", "show", run("session", "new").stdout.strip()).stdout


def test_load_json_and_unknown_skill(skills: Path) -> None:
    sid = run("session", "new").stdout.strip()
    data = json.loads(
        run("--root", str(skills), "session", "load", sid, "gitlog", "--format", "json").stdout
    )
    assert data["load"]["name"] == "gitlog"
    # a tools: entry joins the allowlist like allowed-tools (issue 36 item 1)
    assert data["session"]["allowed_tools"] == ["Bash(git log:*)", "Read", "github.create_issue"]
    missing = run("--root", str(skills), "session", "load", sid, "gitlgo", check_rc=2)
    assert "NOT_FOUND" in missing.stderr and "gitlog" in missing.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("show", "nope"),
        ("approve", "nope", "Bash"),
        ("check", "nope", "Bash"),
        ("load", "nope", "gitlog"),
    ],
)
def test_unknown_session_exits_2(command: tuple[str, ...]) -> None:
    proc = run("session", *command, check_rc=2)
    assert "NOT_FOUND" in proc.stderr and "nope" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_usage_exits_2() -> None:
    assert run("session", "new", "--mode", "yolo", check_rc=2).returncode == 2
    assert run("session", check_rc=2).returncode == 2


def test_corrupt_database_is_an_error_not_a_traceback(isolated_home: Path) -> None:
    db = isolated_home / "sessions.db"
    db.write_bytes(b"garbage" * 50)
    proc = run("session", "list", check_rc=2)
    assert "sessions database" in proc.stderr and "Traceback" not in proc.stderr
    assert db.read_bytes() == b"garbage" * 50


def test_tools_command(skills: Path) -> None:
    data = run_json("tools")
    assert "Bash" in {t["name"] for t in data["tools"]}
    text = run("tools").stdout
    assert "Bash" in text and "preset" in text
    report = json.loads(run("--root", str(skills), "tools", "gitlog", "--format", "json").stdout)
    assert report["missing"] == ["github.create_issue"] and report["complete"] is False
    assert [d["code"] for d in report["diagnostics"]] == ["ST201"]
    assert "incomplete" in run("--root", str(skills), "tools", "gitlog").stdout


def test_tools_strict_mode_exits_1(skills: Path, isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text('tool_validation = "strict"\n')
    proc = run("--root", str(skills), "tools", "gitlog", check_rc=1)
    assert "ST201 error" in proc.stdout


def test_tools_refresh_queries_mcp(tmp_path: Path, isolated_home: Path) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "mcp_tools_server.py"
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"fx": {"command": sys.executable, "args": [str(fixture)]}}})
    )
    (isolated_home / "config.toml").write_text(f"mcp_config = {json.dumps(str(config))}\n")
    data = json.loads(run("tools", "--refresh", "--format", "json").stdout)
    names = {t["name"] for t in data["tools"]}
    assert {"fx.echo", "fx.add", "echo"} <= names
    assert data["mcp_servers"][0]["queried_at"] is not None


def test_project_mcp_config_runs_only_on_refresh(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    marker = tmp_path / "started"
    code = f"open({str(marker)!r}, 'w').close()"
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"local": {"command": sys.executable, "args": ["-c", code]}}})
    )
    plain = json.loads(run("tools", "--format", "json", cwd=project).stdout)
    assert [d["code"] for d in plain["diagnostics"]] == ["ST106"]
    assert not marker.exists()
    refreshed = json.loads(
        run("tools", "--refresh", "--timeout", "5", "--format", "json", cwd=project).stdout
    )
    assert marker.exists()
    assert [d["code"] for d in refreshed["diagnostics"]] == ["ST104"]


def test_telemetry_command(skills: Path) -> None:
    sid = run("session", "new").stdout.strip()
    run("session", "check", sid, "Bash", check_rc=1)
    run("--root", str(skills), "session", "load", sid, "gitlog")
    summary = run_json("telemetry", "--since", "7d")
    assert summary["events"]["tool_authorization"] == 1
    assert summary["events"]["skill_loaded"] == 1
    assert summary["top_skills"][0]["skill"] == "gitlog"
    only = run_json("telemetry", "--event", "skill_loaded", "--since", "2000-01-01")
    assert only["total"] == 1
    assert "tool_authorization" in run("telemetry").stdout
    assert run("telemetry", "--since", "soon", check_rc=2).returncode == 2


def _tamper(db: Path, sql: str) -> None:
    """Rewrite the audit table as someone with write access to the file would."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
            conn.execute("DROP TRIGGER IF EXISTS audit_no_delete")
            conn.execute(sql)
    finally:
        conn.close()


def test_verify_prints_the_head_and_reports_a_broken_chain(isolated_home: Path) -> None:
    sid = run("session", "new").stdout.strip()
    run("session", "approve", sid, "Read")
    run("session", "deny", sid, "Write")
    intact = run("session", "verify")
    report = run_json("session", "verify")
    head = report["head"]
    assert report["ok"] and report["rows"] == 3 and report["problems"] == []
    assert "audit chain intact" in intact.stdout and head["hash"] in intact.stdout
    anchored = run_json("session", "verify", "--head", head["hash"])
    assert anchored["anchor"] == {"hash": head["hash"], "id": head["id"]}
    refused = run("session", "verify", "--head", "not-a-hash", check_rc=2)
    assert "64 hex digits" in refused.stderr and "Traceback" not in refused.stderr
    _tamper(isolated_home / "sessions.db", "DELETE FROM audit WHERE id = 2")
    broken = run("session", "verify", check_rc=1)
    assert "audit chain BROKEN" in broken.stdout and "between id 1 and id 3" in broken.stdout
    problems = run_json("session", "verify", check_rc=1)["problems"]
    assert [(p["kind"], p["id"]) for p in problems] == [("missing", 3)]


# ------------------------------------------------ an approval binds to what was shown


@pytest.fixture
def script_skill(tmp_path: Path, isolated_home: Path) -> Path:
    """Skill ``demo`` whose script imports a helper; skills_exec on."""
    (isolated_home / "config.toml").write_text("semantic = false\nskills_exec = true\n")
    root = tmp_path / "skills"
    write_skill(root, "demo", description="Demo skill. Use when testing scripts.")
    (root / "demo" / "scripts").mkdir()
    (root / "demo" / "scripts" / "run.py").write_text("import helper\nhelper.go()\n")
    (root / "demo" / "scripts" / "helper.py").write_text("def go():\n    print('benign')\n")
    return root


def _run_demo(root: Path, sid: str) -> subprocess.CompletedProcess[str]:
    """``skilldeck run`` of the demo skill's script in session ``sid`` (JSON out)."""
    return run(
        "--root",
        str(root),
        "--format",
        "json",
        "run",
        "--session",
        sid,
        "demo",
        "scripts/run.py",
        check_rc=None,
    )


def _queued(root: Path, sid: str) -> str:
    """An agent's run that waits for approval; the pending entry it left."""
    refused = _run_demo(root, sid)
    assert json.loads(refused.stdout)["error"]["reason"] == "requires_approval"
    [entry] = run_json("session", "pending", sid)["pending"]
    return str(entry)


def test_approving_a_script_pins_the_request_not_a_helper_swapped_since(
    script_skill: Path,
) -> None:
    root = script_skill
    sid = run_json("session", "new", "--mode", "approval")["id"]
    entry = _queued(root, sid)  # the operator reviews this request's files
    evil = "def go():\n    print('EVIL')\n"
    (root / "demo" / "scripts" / "helper.py").write_text(evil)  # swapped before approval
    proc = run(
        "--root",
        str(root),
        "--format",
        "json",
        "session",
        "approve",
        sid,
        "--script",
        "demo/scripts/run.py",
        check_rc=None,
    )
    assert proc.returncode != 0
    error = json.loads(proc.stdout)["error"]
    assert error["reason"] == "changed_since_request"
    assert error["changes"] == [["changed", "scripts/helper.py"]]
    assert "nothing approved" in error["message"]
    session = run_json("session", "show", sid)
    assert session["approved"] == [] and session["pending"] == [entry]  # nothing written
    ran = _run_demo(root, sid)
    assert "EVIL" not in ran.stdout  # refused, and queued as a request of its own

    # put back as reviewed: the shown digest is approved, and what runs is what was read
    (root / "demo" / "scripts" / "helper.py").write_text("def go():\n    print('benign')\n")
    digest = entry.rsplit(":", 1)[1].rstrip(")")
    run(
        "--root",
        str(root),
        "session",
        "approve",
        sid,
        "--script",
        "demo/scripts/run.py",
        "--digest",
        digest,
    )
    assert run_json("session", "show", sid)["approved"] == [entry]
    ok = run_json("--root", str(root), "run", "--session", sid, "demo", "scripts/run.py")
    assert ok["stdout"] == "benign\n"


def test_approve_digest_names_exactly_what_was_shown(script_skill: Path) -> None:
    root = script_skill
    sid = run_json("session", "new", "--mode", "approval")["id"]
    entry = _queued(root, sid)
    digest = entry.rsplit("skill-sha256:", 1)[1].rstrip(")")
    base = ("--root", str(root), "--format", "json", "session", "approve", sid)
    for given, reason in (("abc", "bad_digest"), ("0" * 12, "unknown_digest")):
        proc = run(*base, "--script", "demo/scripts/run.py", "--digest", given, check_rc=None)
        assert json.loads(proc.stdout)["error"]["reason"] == reason, proc.stdout
    proc = run(*base, "Bash", "--digest", digest, check_rc=None)
    assert json.loads(proc.stdout)["error"]["code"] == "INVALID_PARAM"
    assert run_json("session", "show", sid)["approved"] == []
    # a second request of the same script at another digest: a bare approve is ambiguous
    (root / "demo" / "scripts" / "helper.py").write_text("def go():\n    print('two')\n")
    second = _queued_again(root, sid)
    assert second != entry
    proc = run(*base, "--script", "demo/scripts/run.py", check_rc=None)
    assert json.loads(proc.stdout)["error"]["reason"] == "ambiguous_request"
    # the first was shown, but the folder is the second now: refused
    proc = run(*base, "--script", "demo/scripts/run.py", "--digest", digest[:16], check_rc=None)
    assert json.loads(proc.stdout)["error"]["reason"] == "changed_since_request"
    new = second.rsplit("skill-sha256:", 1)[1].rstrip(")")
    approved = run_json(
        "--root",
        str(root),
        "session",
        "approve",
        sid,
        "--script",
        "demo/scripts/run.py",
        "--digest",
        new[:12],
    )
    assert approved["approved"] == [second] and approved["pending"] == [entry]


def _queued_again(root: Path, sid: str) -> str:
    """Another waiting run; the newest pending entry."""
    run("--root", str(root), "run", "--session", sid, "demo", "scripts/run.py", check_rc=None)
    return str(run_json("session", "pending", sid)["pending"][-1])


def test_a_runs_exit_status_is_in_the_audit(script_skill: Path) -> None:
    root = script_skill
    (root / "demo" / "scripts" / "fail.py").write_text("import sys\nsys.exit(3)\n")
    sid = run_json("session", "new", "--mode", "approval")["id"]
    run("--root", str(root), "allow", "demo", "scripts/fail.py")
    ran = run("--root", str(root), "run", "--session", sid, "demo", "scripts/fail.py", check_rc=3)
    assert ran.returncode == 3
    audit = run_json("session", "show", sid)["audit"]
    started = next(e for e in audit if e["action"] == "script_run")
    [ended] = [e for e in audit if e["action"] == "script_exit"]
    assert ended["subject"] == "demo/scripts/fail.py"
    assert ended["detail"]["run"] == started["id"] and ended["detail"]["exit_code"] == 3
    assert ended["detail"]["timed_out"] is False
    shown = run("session", "show", sid).stdout
    assert any("script_exit" in line and line.endswith("exit 3") for line in shown.splitlines())
    assert run("session", "verify").returncode == 0
