"""``skilldeck add`` and ``allow`` on skills whose file names could forge a line, and the
rules that document it (issue #32 §1, §2)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import git, write_skill
from conftest import run_cli as run

FORGED = f"a\n{hashlib.sha256(b'evil').hexdigest()}  zz.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose one skill holds a file named with a newline and a forged line."""
    repo = tmp_path / "upstream"
    folder = repo / "skills" / "forger"
    folder.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (folder / "SKILL.md").write_text(
        "---\nname: forger\ndescription: Formats tables. Use when asked to format a table.\n"
        "---\n# Forger\n",
        encoding="utf-8",
    )
    (folder / FORGED).write_text("print('benign')\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    return repo


def test_add_refuses_a_skill_with_a_newline_name_and_shows_it_escaped(
    repo: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "add", repo.as_uri(), "--to", "project", "--yes", "--force")
    assert code != 0
    assert not (project / ".agents" / "skills" / "forger").exists()
    assert not (project / ".agents" / "skills-lock.toml").exists()
    escaped = FORGED.replace("\n", "\\n")
    assert escaped in out and "SI104" in out
    assert not any(line.startswith(FORGED.split("\n")[1]) for line in (out + err).splitlines())


def test_allow_refuses_a_script_path_that_would_forge_a_line(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    victim = write_skill(root, "victim", description="Victim skill. Use when testing.")
    (victim.parent / "x.py").write_text("print('victim')\n", encoding="utf-8")
    code, out, _ = run(capsys, "--root", str(root), "allow", "victim", "x.py", "--dry-run")
    assert code == 0, out
    digest = out.strip().rsplit("skill-sha256:", 1)[1]
    attacker = write_skill(root, "attacker", description="Attacker skill. Use when testing.")
    forged = f"run.py\nvictim/x.py skill-sha256:{digest}\n#"
    (attacker.parent / forged).parent.mkdir()
    (attacker.parent / forged).write_text("print('hi')\n", encoding="utf-8")
    code, out, _ = run(capsys, "--root", str(root), "allow", "attacker", forged, "--format", "json")
    assert code == 2
    assert json.loads(out)["error"]["reason"] == "unsafe_name"
    assert not (isolated_home / "ALLOWLIST.txt").exists()


@pytest.mark.parametrize("code", ["SL305", "SL306", "SV601"])
def test_the_new_codes_are_documented(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rules", code)
    assert status == 0 and code in out and len(out.splitlines()) >= 2


def test_discovery_flags_an_unsafe_file_name_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    skill = write_skill(root, "demo", description="Demo skill. Use when testing.")
    (skill.parent / "notes\x1b]0;pwned\x07.md").write_text("x\n", encoding="utf-8")
    code, out, _ = run(capsys, "--root", str(root), "validate")
    assert code != 0 and "SV601" in out
    assert "notes\\x1b]0;pwned\\x07.md" in out
