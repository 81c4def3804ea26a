"""``sync`` prunes what it placed once a skill is removed, and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_install import add_all, make_repo, skill_files

from skilldeck.core.install import read_lock
from skilldeck.core.install.apply import remove_installed
from skilldeck.core.install.lock import MARKER
from skilldeck.core.install.sync import RECORD, sync_to


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project" / ".agents" / "skills"
    add_all(make_repo(tmp_path), root)
    return root


def actions(results: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {r.name: r.action for r in results}


def test_a_removed_skill_is_pruned_from_copies_and_links(root: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    codex = root.parent.parent / ".codex" / "skills"
    lock = read_lock(root)
    assert actions(sync_to(lock, claude)) == {"csv-tools": "placed", "pdf-tools": "placed"}
    assert actions(sync_to(lock, codex, mode="symlink"))["csv-tools"] == "placed"
    record = json.loads((root.parent / RECORD).read_text(encoding="utf-8"))
    assert record["placed"][str(claude)] == {"csv-tools": "copy", "pdf-tools": "copy"}

    remove_installed(lock, "csv-tools")
    assert actions(sync_to(lock, claude)) == {"csv-tools": "pruned", "pdf-tools": "unchanged"}
    assert actions(sync_to(lock, codex, mode="symlink"))["csv-tools"] == "pruned"
    assert not (claude / "csv-tools").exists()
    assert not (codex / "csv-tools").is_symlink()  # no dangling link left behind
    assert (claude / "pdf-tools" / "SKILL.md").is_file()
    assert actions(sync_to(lock, claude)) == {"pdf-tools": "unchanged"}  # pruned once


def test_pruning_never_touches_what_the_user_made_or_edited(root: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    lock = read_lock(root)
    sync_to(lock, claude)
    mine = skill_files(claude.parent, "my-own")  # .claude/skills/my-own, hand-written
    shutil.copytree(claude / "csv-tools", claude / "copied")  # carries a marker, never synced
    (claude / "pdf-tools" / "SKILL.md").write_text("my notes\n", encoding="utf-8")
    remove_installed(lock, "pdf-tools")
    remove_installed(lock, "csv-tools")
    results = {r.name: r for r in sync_to(lock, claude)}
    assert {n: r.action for n, r in results.items()} == {"csv-tools": "pruned", "pdf-tools": "kept"}
    assert "edited since it was synced" in results["pdf-tools"].reason
    assert (claude / "pdf-tools" / "SKILL.md").read_text(encoding="utf-8") == "my notes\n"
    assert (mine / "SKILL.md").is_file()
    assert (claude / "copied" / MARKER).is_file()
    assert sync_to(lock, claude, force=True)[0].action == "kept"  # force never deletes edits


def test_a_user_folder_put_where_a_pruned_skill_was_is_left_alone(root: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    lock = read_lock(root)
    sync_to(lock, claude, names=["csv-tools"])
    shutil.rmtree(claude / "csv-tools")
    skill_files(claude.parent, "csv-tools")  # the user's own, same name, no marker
    remove_installed(lock, "csv-tools")
    first = {r.name: r for r in sync_to(lock, claude)}
    assert first["csv-tools"].action == "kept"  # said once, then forgotten: it is the user's
    assert "no longer what sync placed" in first["csv-tools"].reason
    assert actions(sync_to(lock, claude)) == {"pdf-tools": "unchanged"}
    assert (claude / "csv-tools" / "SKILL.md").is_file()


def test_an_unreadable_record_prunes_nothing(root: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    lock = read_lock(root)
    sync_to(lock, claude)
    (root.parent / RECORD).write_text("{not json", encoding="utf-8")
    remove_installed(lock, "csv-tools")
    assert actions(sync_to(lock, claude)) == {"pdf-tools": "unchanged"}
    assert (claude / "csv-tools").is_dir()


def test_a_hostile_record_name_is_never_a_path(root: Path, tmp_path: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    victim = tmp_path / "victim"
    skill_files(victim.parent, "victim")
    lock = read_lock(root)
    record = {"version": 1, "placed": {str(claude): {"../../../skills/victim": "copy"}}}
    (root.parent / RECORD).write_text(json.dumps(record), encoding="utf-8")
    sync_to(lock, claude)
    assert (tmp_path / "skills" / "victim" / "SKILL.md").is_file()


def test_a_locked_skill_whose_folder_is_missing_is_not_pruned(root: Path) -> None:
    claude = root.parent.parent / ".claude" / "skills"
    lock = read_lock(root)
    sync_to(lock, claude)
    shutil.rmtree(root / "csv-tools")  # still locked: `skilldeck check` says missing
    results = {r.name: r for r in sync_to(lock, claude)}
    assert results["csv-tools"].action == "skipped"
    assert (claude / "csv-tools" / "SKILL.md").is_file()
