"""Shared fixtures: every test gets its own SKILLDECK_HOME so no user file is touched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pg_server import own_pg_server, pg_server, pg_url, sessions_url  # noqa: F401
from skilldeck.core.config import Settings, load_settings
from skilldeck.core.model import Skill

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
    for knob in ("SKILLS_DIR", "CUSTOM_SKILLS_DIR", "SKILLS_REFRESH_ON_CALL"):
        monkeypatch.delenv(knob, raising=False)
        monkeypatch.delenv(f"SKILLDECK_{knob}", raising=False)
    monkeypatch.delenv("SKILLDECK_TELEMETRY_OTLP_ENDPOINT", raising=False)
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


LONG_BODY = "# Guide\n\n" + "\n".join(f"Step {i}: do the thing number {i}." for i in range(40))


def build_root(root: Path) -> Path:
    """Four skills with a spread of states in ``root`` (emptied first): clean with tools and
    a resource file, warnings and a declared missing tool, a broken link, broken YAML."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    write_skill(
        root,
        "pdf-forms",
        description="Fills and flattens PDF forms. Use when the user asks to fill a "
        "PDF form or extract form fields.",
        body="# PDF forms\n\nRead [the guide](references/guide.md) first.\n\n"
        "Run `fill.py $ARGUMENTS`.\n",
        extra="allowed-tools: Read Bash\n",
    )
    (root / "pdf-forms" / "references").mkdir()
    (root / "pdf-forms" / "references" / "guide.md").write_text(
        "# Guide\n\nField names are case sensitive.\n", encoding="utf-8"
    )
    write_skill(
        root,
        "git-release",
        description="Prepares a release with changelog, tag and notes. Use when "
        "cutting a new version of a git repository.",
        body=LONG_BODY + "\n",
        extra="tools:\n  - name: NoSuchTool\n    purpose: publish\n    required: true\n",
    )
    write_skill(root, "vague", description="Helps.", body="# Vague\n\nSee [x](missing.md).\n")
    write_skill(root, "broken-yaml", description="Broken: on purpose, the colon breaks YAML.")
    return root


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    """The four skills of :func:`build_root` in this test's own folder."""
    return build_root(tmp_path / "skills")


@pytest.fixture
def readable_tmp() -> Iterator[Path]:
    """A fresh folder every user can enter: pytest's own are private to root, and a run
    sandboxed as root is shown only what ``nobody`` can read."""
    folder = Path(tempfile.mkdtemp(prefix="skilldeck-readable-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def corpus_dir() -> Path:
    """The shared real-world corpus; skips with a clear message when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (set SKILLDECK_SHARED)")
    return CORPUS


PG_FIXTURES = frozenset({"pg_server", "pg_url", "own_pg_server"})
"""Fixtures that start a PostgreSQL server: their tests are ``integration`` (and those of
``sessions_url`` when it is ``postgres``; its ``sqlite`` half is not)."""

EXTERNAL = re.compile(
    r"\bbwrap\b|BWRAP|\bgit\(|\[\s*\"git\",|HTTPServer|serve_forever|start_http\(|ServerClient\("
)
"""What in a test module's source means it runs real components beside the Python under
test (bubblewrap, git, an HTTP server or the MCP server as a process): its tests are
``integration``."""


def _runs_external(path: Path, seen: dict[Path, bool]) -> bool:
    if path not in seen:
        seen[path] = bool(EXTERNAL.search(path.read_text(encoding="utf-8")))
    return seen[path]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``integration`` every test that uses PostgreSQL (by fixture) or whose module
    runs bubblewrap, git or a server (by source); ``slow`` is marked on the test itself.
    ``pytest -m "not integration and not slow"`` is then the fast set, and
    ``pytest -m "integration or slow"`` the rest (CI runs both, in that order)."""
    seen: dict[Path, bool] = {}
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("sessions_url") if callspec is not None else None
        if fixtures & PG_FIXTURES or backend == "postgres" or _runs_external(item.path, seen):
            item.add_marker(pytest.mark.integration)


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


@pytest.fixture
def exec_on(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """``skills_exec`` on (runs limited to 20 s) in the isolated home's config.toml, with no
    environment variable overriding it."""
    for name in ("SKILLDECK_SKILLS_EXEC", "SKILLDECK_REQUIRE_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    (isolated_home / "config.toml").write_text(
        "skills_exec = true\nexec_timeout_s = 20\n", encoding="utf-8"
    )
    return load_settings()


def skill_with_files(root: Path, files: dict[str, str], name: str = "demo") -> Skill:
    """Skill ``name`` under ``root`` holding ``files`` (relative path to text), parsed."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file

    path = write_skill(root, name, description="Demo skill. Use when testing scripts.")
    for rel, text in files.items():
        target = path.parent / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return parse_skill_file(path, root=root)


def allowed_skill(root: Path, files: dict[str, str], name: str = "demo") -> Skill:
    """:func:`skill_with_files`, each of its files allowed in the home allowlist as the
    skill is now (what ``skilldeck allow`` writes)."""
    from skilldeck.core.execution import add_to_allowlist, resolve_script

    skill = skill_with_files(root, files, name)
    for rel in files:
        add_to_allowlist(resolve_script(skill, rel))
    return skill
