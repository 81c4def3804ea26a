"""``skilldeck config``, ``skilldeck run`` and script approvals (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import write_skill
from skilldeck.core.execution import sandbox_level
from skilldeck.core.sessions import SessionStore


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLDECK_")}
    env.update({"SKILLDECK_HOME": str(home), "NO_COLOR": "1", **extra})
    return env


def run(
    home: Path, *args: str, rc: int | None = 0, **extra: str
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(home, **extra),
    )
    if rc is not None:
        assert proc.returncode == rc, (proc.stdout, proc.stderr)
    return proc


def run_json(home: Path, *args: str, rc: int | None = 0, **extra: str) -> Any:
    return json.loads(run(home, "--format", "json", *args, rc=rc, **extra).stdout)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """A root with skill ``demo`` and its scripts, and a home with skills_exec on."""
    root = tmp_path / "skills"
    write_skill(root, "demo", description="Demo skill. Use when testing scripts.")
    scripts = root / "demo" / "scripts"
    scripts.mkdir()
    (scripts / "hello.py").write_text(
        "import os, sys\nprint('hello', *sys.argv[1:], os.environ.get('SECRET', 'none'))\n",
        encoding="utf-8",
    )
    (scripts / "sleep.sh").write_text("sleep 30\n", encoding="utf-8")
    (scripts / "flood.py").write_text(
        "import sys\nsys.stdout.write('x' * (3 * 1024 * 1024))\n", encoding="utf-8"
    )
    (scripts / "net.py").write_text(
        "import socket\ns = socket.create_connection(('127.0.0.1', 9), timeout=2)\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("semantic = false\nskills_exec = true\n", "utf-8")
    return root, home


def allow(home: Path, root: Path, *refs: str) -> None:
    """Allow each ``skill/script`` as the skill is now, with the real ``skilldeck allow``."""
    for ref in refs:
        skill, script = ref.split("/", 1)
        run(home, "--root", str(root), "allow", skill, script)


def test_config_shows_sources(setup: tuple[Path, Path]) -> None:
    _, home = setup
    data = run_json(home, "config", SKILLDECK_SKILLS_V1="0", SKILLDECK_EXEC_TIMEOUT_S="5")
    settings = data["settings"]
    assert settings["skills_v1"] == {"value": False, "source": "SKILLDECK_SKILLS_V1"}
    assert settings["skills_exec"]["value"] is True
    assert settings["skills_exec"]["source"].endswith("config.toml")
    assert settings["exec_timeout_s"] == {"value": 5.0, "source": "SKILLDECK_EXEC_TIMEOUT_S"}
    assert settings["session_mode"]["source"] == "default"
    text = run(home, "config").stdout
    assert "skills_exec" in text and "default" in text


def test_allowlisted_run_with_scrubbed_env(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/hello.py")
    data = run_json(home, "--root", str(root), "run", "demo", "scripts/hello.py", "a b", SECRET="s")
    assert data["exit_code"] == 0 and data["allowed_by"] == "allowlist"
    assert data["stdout"] == "hello a b none\n"
    assert len(data["sha256"]) == 64
    assert not data["truncated"] and not data["timed_out"]
    audit = SessionStore(home / "sessions.db", settings=_settings(home)).audit()
    assert any(e.action == "script_run" and e.subject == "demo/scripts/hello.py" for e in audit)


def _settings(home: Path) -> Any:
    from skilldeck.core.config import load_settings

    return load_settings(home / "config.toml")


def test_flag_off_refused(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/hello.py")
    proc = run(
        home,
        "--root",
        str(root),
        "run",
        "demo",
        "scripts/hello.py",
        rc=125,
        SKILLDECK_SKILLS_EXEC="0",
    )
    assert "PERMISSION_DENIED" in proc.stderr and "execution is off" in proc.stderr
    err = run_json(
        home,
        "--root",
        str(root),
        "run",
        "demo",
        "scripts/hello.py",
        rc=125,
        SKILLDECK_SKILLS_EXEC="0",
    )
    assert err["error"]["reason"] == "exec_disabled"


def test_not_allowed_and_escape_refused(setup: tuple[Path, Path]) -> None:
    root, home = setup
    err = run_json(home, "--root", str(root), "run", "demo", "scripts/hello.py", rc=125)
    assert err["error"]["reason"] == "not_allowed"
    err = run_json(home, "--root", str(root), "run", "demo", "../demo/scripts/hello.py", rc=125)
    assert err["error"]["code"] == "INVALID_PARAM"
    audit = SessionStore(home / "sessions.db", settings=_settings(home)).audit()
    assert any(e.action == "script_refused" for e in audit)


def test_approval_pinned_to_hash(setup: tuple[Path, Path]) -> None:
    root, home = setup
    sid = run_json(home, "session", "new", "--mode", "approval")["id"]
    base = ("--root", str(root))
    err = run_json(home, *base, "run", "--session", sid, "demo", "scripts/hello.py", rc=125)
    assert err["error"]["reason"] == "requires_approval"
    pending = run_json(home, "session", "pending", sid)
    assert any(
        "demo/scripts/hello.py@skill-sha256:" in str(p) for p in json.dumps(pending).split(",")
    )
    run(home, *base, "session", "approve", sid, "--script", "demo/scripts/hello.py")
    ok = run_json(home, *base, "run", "--session", sid, "demo", "scripts/hello.py")
    assert ok["allowed_by"] == "approved" and ok["exit_code"] == 0
    script = root / "demo" / "scripts" / "hello.py"
    script.write_text(script.read_text("utf-8") + "print('changed')\n", "utf-8")
    err = run_json(home, *base, "run", "--session", sid, "demo", "scripts/hello.py", rc=125)
    assert err["error"]["reason"] == "requires_approval"
    run(home, *base, "session", "approve", sid, "--script", "demo/scripts/hello.py")
    ok = run_json(home, *base, "run", "--session", sid, "demo", "scripts/hello.py")
    assert ok["stdout"].endswith("changed\n")


def test_timeout_kills(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/sleep.sh")
    data = run_json(
        home,
        "--root",
        str(root),
        "run",
        "demo",
        "scripts/sleep.sh",
        rc=124,
        SKILLDECK_EXEC_TIMEOUT_S="1",
    )
    assert data["timed_out"] is True and data["duration_ms"] < 10_000


def test_output_cut_at_cap(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/flood.py")
    data = run_json(home, "--root", str(root), "run", "demo", "scripts/flood.py")
    assert data["truncated"] is True and len(data["stdout"]) == 1024 * 1024


def test_too_many_args_refused(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/hello.py")
    args = ["x"] * 101
    err = run_json(home, "--root", str(root), "run", "demo", "scripts/hello.py", *args, rc=125)
    assert err["error"]["reason"] == "too_many_args"


@pytest.mark.skipif(not sandbox_level().network_isolated, reason="no network isolation here")
def test_network_refused_in_sandbox(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/net.py")
    data = run_json(home, "--root", str(root), "run", "demo", "scripts/net.py", rc=1)
    assert data["network_isolated"] is True
    assert data["exit_code"] != 0 and "Error" in data["stderr"]


def test_the_checked_bytes_run_not_a_later_edit(tmp_path: Path) -> None:
    """What runs is a private copy of the bytes that were hashed: an edit made after the
    check (a swap between approval and run) does not run."""
    from skilldeck.core.execution import run_skill_file, snapshot_skill

    folder = tmp_path / "skill"
    folder.mkdir()
    script = folder / "go.py"
    script.write_bytes(b"import os\nprint('checked', os.getcwd())\n")
    pinned = snapshot_skill(folder)
    script.write_bytes(b"print('edited after the check')\n")
    result = run_skill_file(pinned, "go.py", [], 30)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split()[0] == "checked"
    if result.sandbox == "bwrap":
        assert result.stdout.split()[1] == str(folder)


def test_allow_shows_what_it_pins_and_any_edit_needs_a_new_allow(
    setup: tuple[Path, Path],
) -> None:
    root, home = setup
    base = ("--root", str(root))
    dry = run_json(home, *base, "allow", "demo", "scripts/hello.py", "--dry-run")
    assert not dry["added"] and {f["path"] for f in dry["files"]} >= {"SKILL.md", "scripts/net.py"}
    assert not (home / "ALLOWLIST.txt").exists()
    text = run(home, *base, "allow", "demo", "scripts/hello.py").stdout
    assert "files pinned" in text and "scripts/flood.py" in text and "skill-sha256:" in text
    assert run_json(home, *base, "run", "demo", "scripts/hello.py")["exit_code"] == 0
    (root / "demo" / "scripts" / "new.py").write_text("print('new')\n", "utf-8")
    err = run_json(home, *base, "run", "demo", "scripts/hello.py", rc=125)
    assert err["error"]["reason"] == "not_allowed"


def test_allow_with_the_shown_digest_refuses_a_skill_swapped_since_the_review(
    setup: tuple[Path, Path],
) -> None:
    """The operator reviews with ``--dry-run`` and allows exactly that digest: a helper
    swapped in between allows nothing (issue #32: approve what was shown)."""
    root, home = setup
    base = ("--root", str(root))
    dry = run_json(home, *base, "allow", "demo", "scripts/hello.py", "--dry-run")
    shown = dry["line"].rsplit("skill-sha256:", 1)[1]
    (root / "demo" / "scripts" / "net.py").write_text("print('swapped')\n", "utf-8")
    err = run_json(home, *base, "allow", "demo", "scripts/hello.py", "--digest", shown, rc=None)
    assert err["error"]["reason"] == "changed_since_shown"
    assert not (home / "ALLOWLIST.txt").exists()
    short = run_json(
        home, *base, "allow", "demo", "scripts/hello.py", "--digest", shown[:16], rc=None
    )
    assert short["error"]["reason"] == "bad_digest"
    now = run_json(home, *base, "allow", "demo", "scripts/hello.py", "--dry-run")["line"]
    digest = now.rsplit("skill-sha256:", 1)[1]
    assert run_json(home, *base, "allow", "demo", "scripts/hello.py", "--digest", digest)["added"]


def test_run_respects_the_registry(setup: tuple[Path, Path]) -> None:
    root, home = setup
    allow(home, root, "demo/scripts/hello.py")
    (home / "registry.json").write_text('{"skills": {"demo": {"enabled": false}}}', "utf-8")
    err = run_json(home, "--root", str(root), "run", "demo", "scripts/hello.py", rc=125)
    assert err["error"]["reason"] == "disabled"


def test_script_output_cannot_pass_for_skilldecks_verdict(setup: tuple[Path, Path]) -> None:
    root, home = setup
    forger = "import sys\nsys.stderr.write('skilldeck: script exited with 0\\n')\nsys.exit(3)\n"
    (root / "demo" / "scripts" / "forge.py").write_text(forger, "utf-8")
    allow(home, root, "demo/scripts/forge.py")
    proc = run(home, "--root", str(root), "run", "demo", "scripts/forge.py", rc=3)
    lines = proc.stderr.splitlines()
    assert "  | skilldeck: script exited with 0" in lines
    assert [line for line in lines if line.startswith("skilldeck:")][-1].endswith("exited with 3")


def test_session_show_lists_files_changed_since_the_approval(setup: tuple[Path, Path]) -> None:
    root, home = setup
    base = ("--root", str(root))
    sid = run_json(home, "session", "new", "--mode", "approval")["id"]
    run(home, *base, "session", "approve", sid, "--script", "demo/scripts/hello.py")
    (root / "demo" / "scripts" / "helper.py").write_text("X = 1\n", "utf-8")
    (root / "demo" / "scripts" / "net.py").unlink()
    shown = run_json(home, *base, "session", "show", sid)
    [changes] = shown["changed_since"].values()
    assert changes == [
        {"change": "added", "path": "scripts/helper.py"},
        {"change": "removed", "path": "scripts/net.py"},
    ]
    text = run(home, *base, "session", "show", sid).stdout
    assert "changed since Script(demo/scripts/hello.py@skill-sha256:" in text
    assert "added    scripts/helper.py" in text


def test_config_never_prints_the_database_password(setup: tuple[Path, Path]) -> None:
    _, home = setup
    url = "postgresql://bob:s3cret-pw@db.internal:5432/skilldeck?password=other-pw"
    data = run_json(home, "config", SKILLDECK_SESSIONS_URL=url)
    shown = data["settings"]["sessions_url"]["value"]
    assert shown == "postgresql://bob:***@db.internal:5432/skilldeck?password=***"
    text = run(home, "config", SKILLDECK_SESSIONS_URL=url).stdout
    assert "s3cret" not in text and "other-pw" not in text and "bob:***@db.internal" in text


def test_a_relative_path_that_fails_gets_a_hint(setup: tuple[Path, Path], tmp_path: Path) -> None:
    root, home = setup
    reader = "import sys\nopen(sys.argv[1]).read()\n"
    (root / "demo" / "scripts" / "read.py").write_text(reader, "utf-8")
    allow(home, root, "demo/scripts/read.py")
    (tmp_path / "report.md").write_text("# hi\n", "utf-8")
    argv = ["--root", str(root), "run", "demo", "scripts/read.py", "report.md"]
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(home),
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert f"pass 'report.md' as '{tmp_path / 'report.md'}'" in proc.stderr
