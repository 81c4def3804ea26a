"""Shell completion (bash, zsh, fish) and the grouped top-level help, run in real shells.

The completion scripts call the CLI back for skill names and session ids: a small
``skilldeck`` wrapper stands for the installed command.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, write_skill
from skilldeck.cli import main as cli_main


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    """An executable ``skilldeck`` that runs this checkout's CLI."""
    path = tmp_path / "bin" / "skilldeck"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec {sys.executable} -m skilldeck "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    for name in ("pdf-forms", "pdf-tables", "csv-tools"):
        write_skill(base, name)
    return base


def _script(shell: str, tmp_path: Path) -> Path:
    out = subprocess.run(
        [sys.executable, "-m", "skilldeck", "completion", shell],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = tmp_path / f"skilldeck.{shell}"
    path.write_text(out, encoding="utf-8")
    return path


def bash_complete(script: Path, wrapper: Path, *words: str) -> list[str]:
    """What bash offers for ``skilldeck WORDS`` (the last word is the one completed)."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    line = " ".join(f"'{w}'" for w in (str(wrapper), *words))
    probe = (
        f"source {script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}\n"
        '_skilldeck; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.splitlines() if w]


def test_bash_completes_skill_names_with_the_roots_on_the_line(
    tmp_path: Path, wrapper: Path, root: Path
) -> None:
    script = _script("bash", tmp_path)
    assert bash_complete(script, wrapper, "--root", str(root), "show", "pdf") == [
        "pdf-forms",
        "pdf-tables",
    ]
    assert bash_complete(script, wrapper, "load", "--root", str(root), "") == [
        "csv-tools",
        "pdf-forms",
        "pdf-tables",
    ]
    # run SKILL SCRIPT: the second word is a file, not a skill (bash falls back to files)
    assert bash_complete(script, wrapper, "--root", str(root), "run", "csv-tools", "pdf") == []
    # NAME...: every word of remove is a skill
    assert bash_complete(script, wrapper, "--root", str(root), "remove", "csv-tools", "p") == [
        "pdf-forms",
        "pdf-tables",
    ]


def test_bash_completes_open_session_ids(
    tmp_path: Path, wrapper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "session", "new")
    assert code == 0
    session = out.strip()
    code, out, _ = run_cli(capsys, "session", "new")
    ended = out.strip()
    assert run_cli(capsys, "session", "end", ended)[0] == 0
    script = _script("bash", tmp_path)
    assert bash_complete(script, wrapper, "session", "show", "") == [session]
    assert bash_complete(script, wrapper, "context", "hi", "--session", "") == [session]
    assert bash_complete(script, wrapper, "session", "mode", session, "") == [
        "strict",
        "approval",
        "permissive",
    ]


def test_bash_skips_option_values_as_each_command_defines_them(
    tmp_path: Path, wrapper: Path
) -> None:
    """``--agent`` takes a value for ``sync`` and none for ``search``."""
    script = _script("bash", tmp_path)
    assert bash_complete(script, wrapper, "sync", "--mode", "") == ["copy", "symlink"]
    assert bash_complete(script, wrapper, "sync", "--agent", "claude", "--m") == ["--mode"]
    assert bash_complete(script, wrapper, "--format", "js") == ["json"]
    assert bash_complete(script, wrapper, "completion", "") == ["bash", "zsh", "fish"]
    assert bash_complete(script, wrapper, "session", "app") == ["approve"]


def test_a_failing_list_prints_nothing_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "--root", str(tmp_path / "none"), "completion", "--list", "skills"
    )
    assert code == 0 and out == "" and "Traceback" not in err


def test_fish_completes_commands_with_help_skills_and_choices(
    tmp_path: Path, wrapper: Path, root: Path
) -> None:
    script = _script("fish", tmp_path)
    fish = shutil.which("fish")
    if fish is None:  # the script's own words, at least
        text = script.read_text(encoding="utf-8")
        assert "complete -c skilldeck" in text and "__skilldeck_list skills" in text
        pytest.skip("fish is not installed (apt-get install fish): checked the script text")
    check = subprocess.run([fish, "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr

    def complete(line: str) -> list[str]:
        probe = f"source {script}; complete -C {line!r}"
        env_path = f"{wrapper.parent}:/usr/bin:/bin"
        out = subprocess.run(
            [fish, "--no-config", "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": env_path, "HOME": str(tmp_path), "NO_COLOR": "1"},
        )
        return out.stdout.splitlines()

    assert complete("skilldeck sh") == ["show\tshow one skill's full record"]
    assert complete(f"skilldeck --root {root} show pdf") == ["pdf-forms", "pdf-tables"]
    assert complete("skilldeck sync --mode ") == ["copy", "symlink"]
    assert complete("skilldeck session mode x ") == ["approval", "permissive", "strict"]


def test_top_level_help_groups_every_command() -> None:
    """``--help`` listed 31 commands flat (issue #35 item 14): each is in one group now."""
    parser = cli_main.build_parser()
    text = parser.format_help()
    grouped = [name for names in cli_main.HELP_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(cli_main.COMMANDS), "a command is in no group, or two"
    assert "other commands" not in text
    positions = [text.index(f"\n{title}:\n") for title in cli_main.HELP_GROUPS]
    assert positions == sorted(positions)
    for title, names in cli_main.HELP_GROUPS.items():
        section = text.split(f"\n{title}:\n")[1].split("\n\n")[0]
        assert [line.split()[0] for line in section.splitlines() if line[2:3] != " "] == list(names)
