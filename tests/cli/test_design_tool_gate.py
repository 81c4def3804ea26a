"""Issue 26 item 1 through the CLI: ``tool-validation: strict`` with a missing required tool
makes the skill invalid (list says why, validate fails); warn and ignore do not; with
``fail_on_invalid_skills`` on, commands exit non-zero and ``serve`` refuses to start."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli as run
from conftest import write_skill

TOOLS = "tools:\n  - name: NoSuchTool\n    required: true\n"


def make_root(tmp_path: Path, mode: str | None) -> Path:
    root = tmp_path / "skills"
    extra = TOOLS + (f"tool-validation: {mode}\n" if mode else "")
    write_skill(root, "needs-tool", "Needs a tool. Use when testing.", extra=extra)
    write_skill(root, "plain", "Plain skill. Use when testing.")
    return root


def test_strict_missing_tool_is_invalid_and_list_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_root(tmp_path, "strict")
    code, out, _ = run(capsys, "--root", str(root), "validate")
    assert code == 1
    assert "ST201 error required tool 'NoSuchTool' is not available" in out
    assert "tool-validation" not in out  # no longer "is ignored"
    code, out, _ = run(capsys, "--root", str(root), "list")
    assert code == 0
    assert "needs-tool: unavailable: required tool(s) NoSuchTool not available" in out
    code, out, _ = run(capsys, "--root", str(root), "--format", "json", "list", "--all")
    record = next(s for s in json.loads(out)["skills"] if s["name"] == "needs-tool")
    assert record["valid"] is False
    assert record["missing_tools"] == ["NoSuchTool"]


@pytest.mark.parametrize("mode", ["warn", "ignore"])
def test_warn_and_ignore_keep_the_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    root = make_root(tmp_path, mode)
    code, out, _ = run(capsys, "--root", str(root), "validate")
    assert code == 0, out
    code, out, _ = run(capsys, "--root", str(root), "--format", "json", "list")
    assert "needs-tool" in {s["name"] for s in json.loads(out)["skills"]}


def test_strict_default_from_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_root(tmp_path, None)
    home = Path(os.environ["SKILLDECK_HOME"])
    (home / "config.toml").write_text('tool_validation = "strict"\n', encoding="utf-8")
    code, out, _ = run(capsys, "--root", str(root), "validate")
    assert code == 1
    assert "ST201" in out


def test_fail_on_invalid_skills_fails_commands_and_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_root(tmp_path, "strict")
    home = Path(os.environ["SKILLDECK_HOME"])
    (home / "config.toml").write_text("fail_on_invalid_skills = true\n", encoding="utf-8")
    code, out, err = run(capsys, "--root", str(root), "list")
    assert code == 1
    assert "needs-tool: unavailable" in out
    assert "fail_on_invalid_skills is on: needs-tool" in err
    code, _, err = run(capsys, "--root", str(root), "serve")
    assert code == 2
    assert "not serving" in err and "needs-tool" in err
    (root / "needs-tool" / "SKILL.md").unlink()
    (root / "needs-tool").rmdir()
    code, _, _ = run(capsys, "--root", str(root), "list")
    assert code == 0
