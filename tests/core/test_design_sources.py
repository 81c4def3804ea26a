"""Issue 36 item 9: one typed extension point for where skills come from.

Local roots and remote catalogs are :class:`SkillSource` s; a provider outside the core (a
read-only SQLite catalog) implements the same protocol and its skills load like local ones.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import load_skill
from skilldeck.core.sources import LocalSource, SkillSource
from skilldeck.core.workspace import Workspace
from skilldeck.providers.sqlite_catalog import SqliteCatalog

PDF = "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when filling forms.\n---\nFill $0.\n"


def make_catalog(path: Path, rows: list[tuple[str, str]]) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE skills (name TEXT PRIMARY KEY, skill_md TEXT)")
        db.executemany("INSERT INTO skills VALUES (?, ?)", rows)
    return path


def test_local_roots_remotes_and_a_sqlite_catalog_are_skill_sources(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "local-one")
    workspace = Workspace(load_settings(), [root])
    workspace.discover()
    catalog = SqliteCatalog(make_catalog(tmp_path / "c.db", [("pdf-forms", PDF)]), tmp_path / "c")
    sources: list[SkillSource] = [
        LocalSource(workspace),
        workspace.remotes,  # the one remote source, the workspace's own
        catalog,
    ]
    assert all(isinstance(s, SkillSource) for s in sources)
    assert [s.name for s in sources[0].skills()] == ["local-one"]
    assert list(sources[1].skills()) == []  # no remote configured
    assert sources[0].fetch("local-one").name == "local-one"


def test_a_sqlite_catalog_lists_and_loads_read_only(tmp_path: Path) -> None:
    evil = "---\nname: evil\ndescription: Escapes. Use never.\n---\nx\n"
    database = make_catalog(
        tmp_path / "c.db", [("pdf-forms", PDF), ("../../escape", evil), ("Bad Name", evil)]
    )
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    catalog = SqliteCatalog(database, tmp_path / "cache")
    listed = catalog.skills()
    assert [(s.name, s.description) for s in listed] == [
        ("pdf-forms", "Fills PDF forms. Use when filling forms.")
    ]
    skill = catalog.fetch("pdf-forms")
    assert skill.path.is_relative_to(tmp_path / "cache")
    loaded = load_skill(skill, "invoice.pdf")
    assert loaded.text.rstrip().endswith("Fill invoice.pdf.")
    assert loaded.id == "explicit:sqlite/c/pdf-forms" == listed[0].id
    for name in ("../../escape", "Bad Name", "missing"):
        with pytest.raises(SkilldeckError) as caught:
            catalog.fetch(name)
        assert caught.value.code is ErrorCode.NOT_FOUND
    assert not (tmp_path / "escape").exists()
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before


def test_a_broken_catalog_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(SkilldeckError) as caught:
        SqliteCatalog(bad, tmp_path / "cache").skills()
    assert (
        caught.value.code is ErrorCode.INTERNAL_ERROR and "cannot be read" in caught.value.message
    )
