"""Feedback on long work (issue #35 item 4): a progress line on a terminal's stderr, never
on pipes, with ``--format json`` or ``--quiet``; long reviews end with a summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_install_cli import write
from test_terminal_colour import on_a_terminal

from conftest import git, write_skill
from conftest import run_cli as run
from skilldeck.cli.progress import Progress, wanted


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """1,200 skills, and every step shown at once (``SKILLDECK_PROGRESS_DELAY=0``)."""
    monkeypatch.setenv("SKILLDECK_PROGRESS_DELAY", "0")
    base = tmp_path / "big"
    for i in range(1200):
        write_skill(base, f"skill-{i:04d}", description=f"Handles case {i}. Use when {i}.")
    return base


def test_the_first_index_of_a_big_folder_shows_progress_on_a_terminal(big: Path) -> None:
    shown = on_a_terminal("--root", str(big), "search", "case 7", "--no-semantic")
    assert "reading skills: " in shown and " of 1200" in shown, shown[-500:]
    assert "\r\x1b[K" in shown  # erased before the results
    assert "skill-0007" in shown.rsplit("\x1b[K", 1)[1]


def test_no_progress_on_pipes_with_json_or_quiet(big: Path) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "skilldeck", "--root", str(big), "list"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "reading skills" not in piped.stderr and "\x1b" not in piped.stderr + piped.stdout
    shown = on_a_terminal("--root", str(big), "list", "--format", "json")
    assert "reading skills" not in shown and json.loads(shown)["skills"]
    shown = on_a_terminal("--root", str(big), "--quiet", "search", "case 7", "--no-semantic")
    assert "reading skills" not in shown and "skill-0007" in shown


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """A repository of 40 skills, one of which is refused (its symlink leaves it)."""
    upstream = tmp_path / "many"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    for i in range(39):
        write(upstream, f"tool-{i:02d}")
    write(upstream, "escaper")
    (upstream / "skills" / "escaper" / "keys").symlink_to(tmp_path)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "many")
    return upstream


def test_add_shows_its_review_progress_and_ends_with_a_summary(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_PROGRESS_DELAY", "0")
    monkeypatch.chdir(tmp_path)
    shown = on_a_terminal("add", many.as_uri(), "--to", "project", "--yes")
    assert "reviewing skills: " in shown and " of 40" in shown, shown[:800]
    tail = shown.rsplit("add: ", 1)[1]
    assert tail.startswith("39 installed, 1 refused, 0 skipped"), tail
    assert "refused\x1b[0m escaper: " in tail and "symlink leaves the skill folder" in tail


def test_the_summary_names_each_refusal_and_skip(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a terminal nothing is confirmed: every skill is skipped, the refusal named."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "add", many.as_uri(), "--to", "project")
    assert code == 1 and "reviewing" not in err
    summary = out[out.index("add: ") :].splitlines()
    assert summary[0] == "add: 0 installed, 1 refused, 39 skipped"
    assert summary[1].startswith("  refused escaper: ")
    assert summary[2].startswith("  skipped tool-00, tool-01,")
    assert summary[2].endswith("not confirmed (answer on a terminal, or pass --yes)")
    code, out, _ = run(capsys, "add", many.as_uri(), "--to", "project", "--yes", "--quiet")
    assert "add: " not in out  # --quiet: results and errors only


def test_update_ends_with_a_summary(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run(capsys, "add", many.as_uri(), "--to", "project", "--yes", "--skill", "tool-00")
    run(capsys, "add", many.as_uri(), "--to", "project", "--yes", "--skill", "tool-01")
    write(many, "tool-00", body="# Changed\n")
    git(many, "commit", "-qam", "change")
    code, out, _ = run(capsys, "update", "--yes")
    assert code == 0
    assert out.splitlines()[-1] == "update: 1 updated, 1 up to date, 0 refused, 0 skipped"


def test_the_line_is_drawn_only_after_the_delay_and_erased(tmp_path: Path) -> None:
    path = tmp_path / "tty"
    with path.open("w+", newline="") as stream:
        progress = Progress(stream, delay=0.3)
        progress("quick")
        progress("")
        progress("slow step")
        time.sleep(0.6)
        progress("")
        progress.close()
        stream.seek(0)
        text = stream.read()
    assert "quick" not in text and "slow step" in text and text.endswith("\r\x1b[K")
    assert not wanted(sys.stderr, quiet=False, output_format="json")
    with open(os.devnull, "w") as devnull:
        assert not wanted(devnull, quiet=False, output_format=None)
