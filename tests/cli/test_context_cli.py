"""``skilldeck context "user message"``: JSON and text output, ``--session`` recent use,
``--max-skills``, usage errors, and hostile skill text kept off the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli as run
from conftest import write_skill

ESC = "\x1b"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run(capsys, "--format", "json", *argv)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill(
        base,
        "pdf-forms",
        description="Fill in PDF forms. Use when asked to fill a PDF form.",
        body="# PDF forms\n\nFill the form.\n",
        extra="triggers: [fill form]\n",
    )
    for name in ("charlie", "delta"):
        write_skill(
            base,
            name,
            description=f"{name.title()} releases. Use when releasing.",
            extra="triggers: [deploying]\n",
        )
    write_skill(base, "git-history", description="Summarise git history and blame.")
    return base


def test_json_for_each_tier(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = run_json(capsys, "--root", str(root), "context", "please fill form 7")
    assert full["tier"] == "full" and full["message"] == "please fill form 7"
    assert [s["name"] for s in full["skills"]] == ["pdf-forms"]
    assert full["skills"][0]["instructions"] in full["text"]
    assert full["skills"][0]["reason"].startswith("trigger phrase 'fill form'")
    crumb = run_json(capsys, "--root", str(root), "context", "what time is it in Oslo")
    assert crumb["tier"] == "breadcrumb" and crumb["text"] == "[4 skills available]"
    listing = run_json(capsys, "--root", str(root), "context", "what can you do?")
    assert listing["tier"] == "listing" and "- git-history: " in listing["text"]
    empty = root.parent / "none"
    empty.mkdir()
    nothing = run_json(capsys, "--root", str(empty), "context", "fill form")
    assert nothing["tier"] == "none" and nothing["text"] == "" and nothing["skills"] == []


def test_session_recent_use_and_max_skills(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ("--root", str(root), "context", "deploy it", "--max-skills", "1")
    assert [s["name"] for s in run_json(capsys, *base)["skills"]] == ["charlie"]
    code, out, err = run(capsys, "session", "new", "--mode", "permissive")
    assert code == 0, err
    sid = out.strip()
    code, _, err = run(capsys, "--root", str(root), "session", "load", sid, "delta")
    assert code == 0, err
    data = run_json(capsys, *base, "--session", sid)
    assert [s["name"] for s in data["skills"]] == ["delta"]
    assert data["skills"][0]["recent"] is True and data["session"] == sid


def test_text_output(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(root), "context", "fill form for me")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("tier: full (")
    assert lines[1].startswith("  1. pdf-forms  score ")
    assert "--- text to inject (" in out and '<skill name="pdf-forms">' in out
    code, out, _ = run(capsys, "--root", str(root), "context", "nothing relevant here")
    assert out.splitlines() == [
        "tier: breadcrumb (no skill matches the message)",
        "--- text to inject (20 characters) ---",
        "[4 skills available]",
    ]


def test_usage_errors(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--root", str(root), "context", "x", "--max-skills", "0")
    assert code == 2 and "--max-skills" in err
    code, out, _ = run(
        capsys, "--format", "json", "--root", str(root), "context", "x", "--session", "nope"
    )
    assert code == 2 and json.loads(out)["error"]["code"] == "NOT_FOUND"


def test_hostile_skill_text_never_reaches_the_terminal_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "hostile"
    write_skill(
        base,
        "evil-skill",
        description="Clears the screen. Use when testing.",
        body=f"# Evil\n\nRing {chr(7)} and {ESC}]0;title{chr(7)} retitle.\n",
        extra="triggers: [clear screen]\n",
    )
    code, out, err = run(capsys, "--root", str(base), "context", "clear screen now")
    assert code == 0, err
    assert "tier: full" in out and ESC not in out and chr(7) not in out
    assert "\\x1b]0;title\\x07" in out
    data = run_json(capsys, "--root", str(base), "context", "clear screen now")
    assert ESC in data["text"]


def test_subprocess_entry_point(root: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLDECK_")}
    env.update({"SKILLDECK_HOME": str(tmp_path / "home"), "NO_COLOR": "1"})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skilldeck",
            "--root",
            str(root),
            "context",
            "fill form",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tier"] == "full"
