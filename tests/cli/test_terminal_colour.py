"""The CLI on a real pseudo-terminal, colour on: colour codes reach the terminal as codes.

Through pipes and capsys colour is off, so only a terminal shows whether a colour mark was
escaped a second time (``\\x1b[32m`` printed as text, issue #35 item 1).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_skill


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Two skills, one with an escape sequence in its description."""
    base = tmp_path / "skills"
    write_skill(base, "pdf-helper", description="Fills PDF forms. Use when a PDF form is given.")
    write_skill(base, "evil", description="Fills PDF \x1b]0;owned\x07 titles. Use for PDF.")
    return base


def on_a_terminal(*argv: str) -> str:
    """Run ``python -m skilldeck ARGV`` with stdout on a pseudo-terminal, colour allowed
    (``TERM=xterm-256color``, no ``NO_COLOR``); what the terminal received."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm-256color"
    leader, follower = pty.openpty()
    chunks: list[bytes] = []
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "skilldeck", *argv],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
            env=env,
        )
        os.close(follower)
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(
    "argv",
    [
        ("search", "pdf form"),
        ("search", "pdf form", "--explain"),
        ("list",),
    ],
)
def test_colour_codes_reach_the_terminal_as_codes(root: Path, argv: tuple[str, ...]) -> None:
    shown = on_a_terminal("--root", str(root), *argv)
    assert "pdf-helper" in shown
    assert "\x1b[" in shown, shown
    assert "\\x1b[" not in shown, shown


def test_escape_sequences_from_a_skill_stay_escaped(root: Path) -> None:
    shown = on_a_terminal("--root", str(root), "search", "pdf titles")
    assert "evil" in shown and "\x1b[32m" in shown
    assert "\x1b]0;owned" not in shown
