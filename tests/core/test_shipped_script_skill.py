"""The shipped example skill ``measuring-text-files`` runs its script for real, through the
same path agents use (:func:`skilldeck.core.execution.execute`): refused until allowed,
then run from an allowlist line in an isolated SKILLDECK_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SHIPPED_SKILLS, allowlist_line
from skilldeck.core.config import load_settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import execute
from skilldeck.core.model import Skill, Source
from skilldeck.core.sessions import SessionStore

NAME = "measuring-text-files"
SCRIPT = "scripts/text_stats.py"


@pytest.fixture
def skill() -> Skill:
    return parse_skill_file(
        SHIPPED_SKILLS / NAME / "SKILL.md", source=Source.BUNDLED, root=SHIPPED_SKILLS
    )


@pytest.fixture
def exec_on(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """skills_exec on in the isolated home's config.toml (no environment override)."""
    for name in ("SKILLDECK_SKILLS_EXEC", "SKILLDECK_SKILLS_V1", "SKILLDECK_EXEC_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    (isolated_home / "config.toml").write_text("skills_exec = true\n", encoding="utf-8")
    return isolated_home


@pytest.fixture
def sample(readable_tmp: Path) -> Path:
    doc = readable_tmp / "doc.md"
    doc.write_text("# Title\n\none two three\nfour five\n", encoding="utf-8")
    return doc


def allow(home: Path) -> None:
    line = allowlist_line(SHIPPED_SKILLS / NAME, SCRIPT)
    (home / "ALLOWLIST.txt").write_text(f"# shipped example\n{line}\n", encoding="utf-8")


def test_refused_until_listed(skill: Skill, exec_on: Path, sample: Path) -> None:
    with pytest.raises(SkilldeckError) as caught:
        execute(load_settings(), skill, SCRIPT, [str(sample)])
    assert caught.value.details["reason"] == "not_allowed"


def test_runs_from_the_allowlist(skill: Skill, exec_on: Path, sample: Path) -> None:
    allow(exec_on)
    result = execute(load_settings(), skill, SCRIPT, [str(sample)])
    assert result.allowed_by == "allowlist" and result.run.exit_code == 0, result
    header, row = result.run.stdout.splitlines()
    assert header.split()[:4] == ["lines", "words", "chars", "~tokens"]
    lines, words, chars, _tokens, path = row.split()
    assert (int(lines), int(words), int(chars)) == (4, 7, 33)
    assert path == str(sample)


def test_budget_and_json(skill: Skill, exec_on: Path, sample: Path, readable_tmp: Path) -> None:
    allow(exec_on)
    (readable_tmp / "big.txt").write_text("word " * 400, encoding="utf-8")
    result = execute(
        load_settings(), skill, SCRIPT, ["--json", "--max-tokens", "100", str(readable_tmp)]
    )
    assert result.run.exit_code == 1, result  # big.txt is over the budget
    rows = {Path(r["path"]).name: r for r in json.loads(result.run.stdout)}
    assert rows["big.txt"]["over"] == ["tokens 520 > 100"]
    assert rows["doc.md"]["over"] == [] and rows["doc.md"]["words"] == 7


def test_missing_path_exits_2(skill: Skill, exec_on: Path, tmp_path: Path) -> None:
    allow(exec_on)
    result = execute(load_settings(), skill, SCRIPT, [str(tmp_path / "absent.txt")])
    assert result.run.exit_code == 2 and "No such file" in result.run.stdout


def test_approval_mode_queues_then_runs_once_approved(
    skill: Skill, exec_on: Path, sample: Path
) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    with pytest.raises(SkilldeckError) as caught:
        execute(load_settings(), skill, SCRIPT, [str(sample)], store=store, session_id=session.id)
    key = caught.value.details["approval"]
    assert store.pending(session.id) == [key]
    store.approve(session.id, key)
    result = execute(
        load_settings(), skill, SCRIPT, [str(sample)], store=store, session_id=session.id
    )
    assert result.allowed_by == "approved" and result.run.exit_code == 0
    store.close()
