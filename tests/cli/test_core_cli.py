"""CLI contract for the core commands: list, show, load, read, validate, lint, prompt, rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHIPPED_SKILLS, write_skill
from conftest import run_cli as run
from skilldeck.cli.main import split_global_options

GOOD_DESC = (
    "Formats changelog entries from merged pull requests. Use when preparing release notes "
    "or a CHANGELOG section."
)


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "changelog-writer",
        GOOD_DESC,
        body="# Changelog\n\nRead [the guide](references/guide.md). Args: $ARGUMENTS\n",
    )
    (root / "changelog-writer" / "references").mkdir()
    (root / "changelog-writer" / "references" / "guide.md").write_text("Guide text\n")
    write_skill(root, "broken", "x", extra="bad: [unclosed\n")
    return root


def test_global_options_anywhere() -> None:
    opts, rest = split_global_options(["list", "--root", "a", "--format=json", "--root", "b"])
    assert opts["root"] == ["a", "b"]
    assert opts["format"] == "json"
    assert rest == ["list"]


def test_list_json_shape(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(capsys, "--root", str(skills_root), "list", "--format", "json")
    assert code == 0
    data = json.loads(out)
    names = [s["name"] for s in data["skills"]]
    assert names == ["changelog-writer"]
    rec = data["skills"][0]
    for key in (
        "name",
        "description",
        "path",
        "base_dir",
        "source",
        "shadowed_by",
        "enabled",
        "valid",
    ):
        assert key in rec
    assert rec["source"] == "explicit"
    assert Path(rec["path"]).is_absolute() and rec["path"].endswith("SKILL.md")


def test_list_all_includes_invalid(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(capsys, "list", "--all", "--root", str(skills_root), "--format", "json")
    assert code == 0
    data = json.loads(out)
    by_name = {s["name"]: s for s in data["skills"]}
    assert by_name["broken"]["valid"] is False


def test_list_text_aligned(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(capsys, "--root", str(skills_root), "list", "--all")
    assert code == 0
    assert "changelog-writer" in out and "broken" in out
    assert "\x1b[" not in out  # not a TTY, NO_COLOR set


def test_show_json(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(
        capsys, "--root", str(skills_root), "show", "changelog-writer", "--format", "json"
    )
    assert code == 0
    rec = json.loads(out)
    assert rec["description"] == GOOD_DESC
    assert "references/guide.md" in rec["resources"]
    assert isinstance(rec["diagnostics"], list) and isinstance(rec["tools"], list)


def test_show_unknown_suggests(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, _, err = run(capsys, "--root", str(skills_root), "show", "changelog-writr")
    assert code == 2
    assert "NOT_FOUND" in err and "changelog-writer" in err
    assert "Traceback" not in err


def test_load_applies_arguments(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(
        capsys, "--root", str(skills_root), "load", "changelog-writer", "v1.2", "v1.3"
    )
    assert code == 0
    assert out.startswith("Base directory for this skill: ")
    assert "Args: v1.2 v1.3" in out


def test_read_resource_and_refusal(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(
        capsys, "--root", str(skills_root), "read", "changelog-writer", "references/guide.md"
    )
    assert code == 0 and out == "Guide text\n"
    code, _, err = run(
        capsys, "--root", str(skills_root), "read", "changelog-writer", "../broken/SKILL.md"
    )
    assert code == 2 and "INVALID_PARAM" in err


def test_validate_exit_codes_and_json(
    capsys: pytest.CaptureFixture[str], skills_root: Path
) -> None:
    code, out, _ = run(
        capsys, "validate", str(skills_root / "changelog-writer"), "--format", "json"
    )
    assert code == 0, out
    code, out, _ = run(capsys, "validate", str(skills_root), "--format", "json")
    assert code == 1
    data = json.loads(out)
    broken = next(s for s in data["skills"] if s["name"] == "broken")
    assert broken["valid"] is False
    diag = broken["diagnostics"][0]
    assert set(diag) >= {"code", "severity", "message", "line", "column"}
    assert diag["severity"] in ("error", "warning", "info")
    assert data["summary"]["invalid"] >= 1


def test_validate_skill_md_path_and_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_skill(tmp_path, "odd-skill", GOOD_DESC, extra="argument-hint: '[file]'\n")
    code, _, _ = run(capsys, "validate", str(path), "--profile", "claude-code")
    assert code == 0
    code, out, _ = run(capsys, "--profile", "agentskills", "validate", str(path))
    assert code == 1 and "argument-hint" in out


def test_validate_dot_does_not_crash(
    capsys: pytest.CaptureFixture[str], skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(skills_root / "changelog-writer")
    code, out, err = run(capsys, "validate", ".")
    assert code == 0, out + err


def test_validate_missing_path_is_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "validate", str(tmp_path / "nope"))
    assert code == 2 and "no such" in err


def test_lint_select_ignore(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_skill(tmp_path, "vague", "Helps with stuff.")
    code, out, _ = run(capsys, "lint", str(tmp_path), "--format", "json")
    assert code == 1
    codes = {d["code"] for s in json.loads(out)["skills"] for d in s["diagnostics"]}
    assert codes
    code, out, _ = run(
        capsys, "lint", str(tmp_path), "--ignore", ",".join(codes), "--format", "json"
    )
    assert code == 0, out


def test_prompt_xml_and_budget(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, out, _ = run(capsys, "--root", str(skills_root), "prompt")
    assert code == 0
    assert "<available_skills>" in out and "<name>" in out and "changelog-writer" in out
    code, out, _ = run(
        capsys, "--root", str(skills_root), "prompt", "--format", "json", "--budget", "5000"
    )
    data = json.loads(out)
    assert data["chars"] <= 5000 and data["included"] == ["changelog-writer"]


def test_rules_reference(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--format", "json")
    assert code == 0
    assert json.loads(out)


def test_bad_format_is_usage_error(capsys: pytest.CaptureFixture[str], skills_root: Path) -> None:
    code, _, err = run(capsys, "--root", str(skills_root), "list", "--format", "yaml")
    assert code == 2 and "--format" in err


def test_unknown_command_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "Traceback" not in err


def test_shipped_skills_pass_strict_validation_and_lint(capsys: pytest.CaptureFixture[str]) -> None:
    names = sorted(p.name for p in SHIPPED_SKILLS.iterdir() if (p / "SKILL.md").is_file())
    assert len(names) >= 3
    for profile in ("agentskills", "shipped"):
        code, out, _ = run(capsys, "validate", str(SHIPPED_SKILLS), "--profile", profile)
        assert code == 0 and f"{len(names)} skill(s) checked, 0 error(s), 0 warning(s)" in out, out
    code, out, _ = run(capsys, "lint", str(SHIPPED_SKILLS), "--fail-on", "info")
    assert code == 0, out


def test_module_entry_point_and_version() -> None:
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-m", "skilldeck", "--version"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0 and out.stdout.startswith("skilldeck ")


def test_no_command_without_tty_prints_list(skills_root: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "skilldeck", "--root", str(skills_root)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert "changelog-writer" in out.stdout


def test_store_repair_notice_goes_to_stderr_once(
    capsys: pytest.CaptureFixture[str], skills_root: Path
) -> None:
    home = Path(os.environ["SKILLDECK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "store.sqlite3").write_bytes(b"not a database at all" * 100)
    code, out, err = run(
        capsys, "--root", str(skills_root), "search", "changelog", "--format", "json"
    )
    assert code == 0 and json.loads(out)["results"]
    assert err.count("local store") == 1 and "rebuilt" in err
    code, _out, err = run(capsys, "--root", str(skills_root), "list")
    assert code == 0 and "local store" not in err, "a repaired store says nothing more"
