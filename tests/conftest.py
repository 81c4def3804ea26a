"""Shared fixtures: every test gets its own SKILLDECK_HOME so no user file is touched."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pg_server import own_pg_server, pg_server, pg_url, sessions_url  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
SHIPPED_SKILLS = REPO / "skills"
SHARED = Path(os.environ.get("SKILLDECK_SHARED") or REPO.parent / "shared").expanduser()
"""The shared material (real-world corpus, dev queries): ``SKILLDECK_SHARED`` or the
``shared/`` folder beside the repository. Tests that need it skip, saying where they looked."""
CORPUS = SHARED / "corpus" / "skills"
DEV_QUERIES = SHARED / "eval" / "queries-dev.jsonl"


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point SKILLDECK_HOME (and HOME) at fresh folders for each test."""
    home = tmp_path_factory.mktemp("skilldeck-home")
    user_home = tmp_path_factory.mktemp("user-home")
    monkeypatch.setenv("SKILLDECK_HOME", str(home))
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.delenv("SKILLDECK_CONFIG", raising=False)
    monkeypatch.delenv("SKILLS_PROMPT_CHAR_BUDGET", raising=False)
    monkeypatch.delenv("SKILLDECK_SESSIONS_URL", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    yield home


def write_skill(
    root: Path,
    name: str,
    description: str = "Does a thing. Use when testing.",
    body: str = "# Title\n\nBody text.\n",
    extra: str = "",
    folder: str | None = None,
) -> Path:
    """Create ``root/<folder or name>/SKILL.md`` and return the file's path."""
    folder_path = root / (folder or name)
    folder_path.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"
    path = folder_path / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def corpus_dir() -> Path:
    """The shared real-world corpus; skips with a clear message when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (set SKILLDECK_SHARED)")
    return CORPUS


def pytest_report_header(config: pytest.Config) -> str:
    state = "present" if CORPUS.is_dir() else "absent: corpus tests skip (set SKILLDECK_SHARED)"
    return f"skilldeck corpus: {state} ({CORPUS}); cwd={os.getcwd()}"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; its stdout, stripped (it must succeed)."""
    done = subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def allowlist_line(skill_dir: Path, path: str, name: str | None = None) -> str:
    """The ``ALLOWLIST.txt`` line allowing ``path`` of the skill in ``skill_dir`` as its
    files are now (what ``skilldeck allow`` writes)."""
    from skilldeck.core.execution import allowlist_line as line
    from skilldeck.core.execution import snapshot_skill

    return line(f"{name or skill_dir.name}/{path}", snapshot_skill(skill_dir).digest)


def need_semantic_extra() -> None:
    """Skip unless the ``semantic`` extra is installed; fail instead where CI installed it
    (``SKILLDECK_REQUIRE_SEMANTIC=1``)."""
    from skilldeck.core.search import semantic

    if semantic.extra_installed():
        return
    message = "semantic extra not installed (pip install -e '.[test,semantic]')"
    if os.environ.get("SKILLDECK_REQUIRE_SEMANTIC") == "1":
        pytest.fail(f"{message}, but SKILLDECK_REQUIRE_SEMANTIC=1", pytrace=False)
    pytest.skip(message)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``skilldeck ARGV`` in process: (exit code, stdout, stderr)."""
    from skilldeck.cli.main import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, made the current directory."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder
