"""The shared real-world corpus (372 skills) loads completely."""

from __future__ import annotations

import os
from pathlib import Path

from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.discovery.frontmatter import parse_skill_file, read_body
from skilldeck.core.model import Source
from skilldeck.core.store import LocalStore


def all_skill_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        found.extend(Path(folder) / f for f in files if f.lower() == "skill.md")
    return sorted(found)


def test_every_corpus_skill_loads(corpus_dir: Path) -> None:
    files = all_skill_files(corpus_dir)
    assert len(files) >= 372
    catalog = discover([Root(corpus_dir, Source.EXPLICIT)], Settings())
    assert sorted(s.path for s in catalog.skills) == files
    assert not catalog.diagnostics
    for skill in catalog.skills:
        assert skill.name and skill.description, skill.path
        assert not any(d.code in ("SD199", "SD205") for d in skill.diagnostics), skill.path
        skill.to_dict()
    valid = sum(s.valid for s in catalog.skills)
    assert valid >= 0.95 * len(files)


def test_corpus_parse_and_bodies(corpus_dir: Path) -> None:
    for path in all_skill_files(corpus_dir):
        skill = parse_skill_file(path, root=corpus_dir)
        assert not any(
            d.code.startswith("SD1") and d.severity == "error" for d in skill.diagnostics
        ), (path, skill.diagnostics)
        body = read_body(skill)
        assert not body.startswith("---")
        assert len(skill.resources) <= 200


def test_corpus_warm_equals_cold(corpus_dir: Path) -> None:
    roots = [Root(corpus_dir, Source.EXPLICIT)]
    plain = discover(roots, Settings())
    store = LocalStore.open()
    cold = discover(roots, Settings(), store=store)
    warm = discover(roots, Settings(), store=store)
    assert [s.to_dict() for s in cold.skills] == [s.to_dict() for s in plain.skills]
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in plain.skills]
    assert warm.skills == plain.skills
