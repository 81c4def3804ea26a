"""The first rows of the listing, kept for the next launch (:mod:`.launch_rows`): given
early only when nothing discovery reads changed, equal to what the finished catalog lists
first, and never a skill that is gone or changed."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.model import Skill
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace, launch_discovery
from skilldeck.core.workspace.launch_rows import HEAD, head

PAST_NS = 10_000_000_000  # older than a timestamp tick can hide


def _age(*folders: Path) -> None:
    when = time.time_ns() - PAST_NS
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.utime(path, ns=(when, when))


def _roots(tmp_path: Path, count: int = 12) -> list[Path]:
    """Two roots: the second wins the shared names, so the first's copies are shadowed."""
    low, high = tmp_path / "low", tmp_path / "high"
    for i in range(count):
        write_skill(high, f"skill-{i:02d}", f"Skill {i}. Use when testing {i}.")
    for root in (low, high):
        write_skill(root, "shared", f"Shared from {root.name}. Use when sharing.")
    write_skill(high, "broken", "Broken: on purpose, the colon breaks YAML.")
    _age(low, high)
    return [low, high]


def _launch(
    roots: list[Path], store: LocalStore
) -> tuple[Workspace, list[tuple[list[Skill], int]]]:
    """One launch: a workspace's first discovery; what its ``early`` was given."""
    given: list[tuple[list[Skill], int]] = []
    workspace = Workspace(Settings(semantic=False), roots, store=store)
    launch_discovery(workspace, None, lambda skills, total: given.append((skills, total)))
    return workspace, given


def _facts(skill: Skill) -> tuple[object, ...]:
    return (
        skill.path,
        skill.name,
        skill.description,
        skill.source,
        skill.id,
        skill.shadowed_by,
        skill.shadow_reason,
        skill.enabled,
        skill.resources,
        [(d.code, d.message, d.line) for d in skill.diagnostics],
    )


def test_next_launch_gets_the_rows_the_catalog_lists_first(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path), LocalStore.open()
    _first, given = _launch(roots, store)
    assert given == []  # nothing kept yet
    second, given = _launch(roots, store)
    assert len(given) == 1
    skills, total = given[0]
    assert total == len(second.catalog.skills) == 15
    expected = head(second.all_sorted())
    assert [_facts(s) for s in skills] == [_facts(s) for s in expected]
    assert skills[-1].shadowed and skills[-1].name == "shared"  # the copy after the winners
    assert any(d.code.startswith("SD") for s in skills if s.name == "broken" for d in s.diagnostics)


def test_a_removed_or_edited_skill_is_never_given(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path), LocalStore.open()
    _launch(roots, store)
    gone = roots[1] / "skill-03"
    for child in gone.iterdir():
        child.unlink()
    gone.rmdir()
    _age(roots[1])
    workspace, given = _launch(roots, store)
    assert given == []  # the fingerprint differs: no early rows at all
    assert "skill-03" not in {s.name for s in workspace.catalog.skills}
    edited = roots[1] / "skill-05" / "SKILL.md"
    edited.write_text("---\nname: renamed\ndescription: Now else.\n---\n# X\n", encoding="utf-8")
    _age(roots[1])
    _workspace, given = _launch(roots, store)
    assert given == []


def test_a_registry_change_means_no_early_rows(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path), LocalStore.open()
    registry = tmp_path / "registry.json"
    settings = Settings(semantic=False, registry_path=registry)
    launch_discovery(Workspace(settings, roots, store=store), None, lambda *_: None)
    registry.write_text(json.dumps({"skill-01": {"enabled": False}}))
    _age(tmp_path / "high")
    os.utime(registry, ns=(time.time_ns() - PAST_NS,) * 2)
    given: list[object] = []
    workspace = Workspace(settings, roots, store=store)
    launch_discovery(workspace, None, lambda *args: given.append(args))
    assert given == []
    assert workspace.by_name("skill-01") is not None
    assert not workspace.by_name("skill-01").enabled  # type: ignore[union-attr]


def test_a_damaged_row_only_means_no_early_rows(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path), LocalStore.open()
    _launch(roots, store)
    with store.write() as conn:
        conn.execute("UPDATE listing_heads SET data = ?", ('{"total": "x", "rows": [[1]]}',))
    workspace, given = _launch(roots, store)  # the launch that got none keeps them again
    assert given == []
    assert len(workspace.catalog.skills) == 15
    _workspace, given = _launch(roots, store)
    assert len(given) == 1


def test_a_store_that_cannot_be_read_only_means_no_early_rows(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path), LocalStore.open()
    _launch(roots, store)
    assert store.path is not None
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TABLE listing_heads")
    conn.execute("CREATE TABLE listing_heads (key TEXT)")  # the wrong columns
    conn.commit()
    conn.close()
    workspace, given = _launch(roots, LocalStore.open())
    assert given == []
    assert len(workspace.catalog.skills) == 15


def test_head_keeps_winners_first_and_at_most_head_rows(tmp_path: Path) -> None:
    roots, store = _roots(tmp_path, count=HEAD + 5), LocalStore.open()
    workspace, _given = _launch(roots, store)
    rows = head(workspace.all_sorted())
    assert len(rows) == HEAD
    assert not any(s.shadowed for s in rows)
    _workspace, given = _launch(roots, store)
    assert given[0][1] == HEAD + 5 + 3
