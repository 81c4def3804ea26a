"""The scan's folder tree in the cache: unchanged folders are not listed again, and every
change to the tree (added, removed or moved skills, new symlinks) is still seen."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import skilldeck.core.discovery as discovery
from conftest import write_skill
from skilldeck.core.cache import MetadataCache
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.model import Source

OLD = 1_600_000_000_000_000_000


def age_tree(root: Path) -> None:
    """Every folder and file under ``root`` gets an mtime well in the past."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.utime(path, ns=(OLD, OLD))
    os.utime(root, ns=(OLD, OLD))


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Record every folder discovery lists with ``os.scandir`` (the real one still runs)."""
    calls: list[str] = []
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        calls.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", counting)
    yield calls


def run(root: Path, **kwargs: Any) -> list[tuple[str, str, tuple[str, ...], list[str]]]:
    catalog = discover([Root(root, Source.EXPLICIT)], Settings(), **kwargs)
    return [
        (s.rel_id, s.name, s.resources, [d.code for d in s.diagnostics]) for s in catalog.skills
    ] + [("catalog", d.code, (), [str(d.path)]) for d in catalog.diagnostics]


def same_as_fresh(root: Path) -> list[tuple[str, str, tuple[str, ...], list[str]]]:
    warm = run(root)
    assert warm == run(root, use_cache=False)
    return warm


def build(root: Path) -> None:
    for group in ("g1", "g2"):
        for i in range(3):
            write_skill(root / group, f"{group}-s{i}")
    write_skill(root / "g2" / "nested" / "deeper", "deep")
    (root / "g1" / "README.md").write_text("not a skill")
    age_tree(root)


def test_unchanged_folders_are_not_listed_again(tmp_path: Path, listed: list[str]) -> None:
    build(tmp_path)
    cold = run(tmp_path)
    assert len(cold) == 7
    assert MetadataCache.load(tmp_path).tree  # the scan's folders were kept
    listed.clear()
    assert run(tmp_path) == cold
    assert listed == []


@pytest.fixture(params=["here", "forked job", "failed job"])
def stats_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Skills in unchanged folders are stat'ed here, by a forked job, or by a job that
    fails (then here)."""
    mode: str = request.param
    if mode != "here":
        if not discovery._can_fork():
            pytest.skip("forked jobs not available here")
        monkeypatch.setattr(discovery, "STAT_JOB_MIN", 1)
    if mode == "failed job":
        main, real = os.getpid(), discovery._stat_found

        def failing(found: Any) -> Any:
            if os.getpid() != main:
                raise RuntimeError("job fails")
            return real(found)

        monkeypatch.setattr(discovery, "_stat_found", failing)
    return mode


def test_every_tree_change_is_seen(tmp_path: Path, stats_by: str) -> None:
    build(tmp_path)
    base = same_as_fresh(tmp_path)
    write_skill(tmp_path / "g1", "added")  # g1's mtime changes
    assert ("g1/added", "added", (), []) in same_as_fresh(tmp_path)
    age_tree(tmp_path)
    (tmp_path / "g2" / "g2-s1" / "SKILL.md").unlink()  # only the skill folder changes
    assert not any(row[0] == "g2/g2-s1" for row in same_as_fresh(tmp_path))
    age_tree(tmp_path)
    # a plain subfolder of a cached folder becomes a skill: only the subfolder changes
    write_skill(tmp_path / "g2" / "nested", "now-a-skill", folder=".")
    rows = same_as_fresh(tmp_path)
    assert ("g2/nested", "now-a-skill", ("deeper/deep/SKILL.md",), []) in rows
    assert not any(row[1] == "deep" for row in rows)
    age_tree(tmp_path)
    (tmp_path / "g2" / "nested" / "SKILL.md").unlink()
    write_skill(tmp_path / "g2" / "nested" / "deeper" / "deep" / "x", "deepest")
    rows = same_as_fresh(tmp_path)
    assert [r[1] for r in rows if "nested" in r[0]] == ["deep"]  # a skill holds no skills
    age_tree(tmp_path)
    (tmp_path / "g1" / "g1-s0").rename(tmp_path / "g1" / "_hidden")
    assert len(same_as_fresh(tmp_path)) == len(base) - 1


def test_symlinks_are_always_looked_at_again(tmp_path: Path, stats_by: str) -> None:
    root = tmp_path / "root"
    build(root)
    elsewhere = tmp_path / "elsewhere"
    (root / "g1" / "link").symlink_to(elsewhere, target_is_directory=True)  # dangling
    age_tree(root)
    assert not any(r[0] == "g1/link" for r in same_as_fresh(root))
    write_skill(tmp_path, "elsewhere")  # the link's target appears; g1 does not change
    assert ("g1/link", "elsewhere", (), []) in same_as_fresh(root)
    (root / "g1" / "loop").symlink_to(root, target_is_directory=True)
    age_tree(root)
    rows = same_as_fresh(root)
    assert ("catalog", "SD203", (), [str(root / "g1" / "loop")]) in rows


def test_a_replaced_root_or_folder_is_listed_again(tmp_path: Path) -> None:
    real_a, real_b = tmp_path / "a", tmp_path / "b"
    build(real_a)
    build(real_b)
    write_skill(real_b / "g1", "only-in-b")
    age_tree(real_b)
    link = tmp_path / "root"
    link.symlink_to(real_a, target_is_directory=True)
    first = same_as_fresh(link)
    link.unlink()
    link.symlink_to(real_b, target_is_directory=True)  # same path, other folder
    second = same_as_fresh(link)
    assert len(second) == len(first) + 1
    # a folder swapped for another with the very same mtime: its inode differs
    (real_a / "g1").rename(tmp_path / "old-g1")
    (real_b / "g1").rename(real_a / "g1")
    os.utime(real_a, ns=(OLD, OLD))
    assert ("g1/only-in-b", "only-in-b", (), []) in same_as_fresh(real_a)


def test_a_foreign_tree_in_the_cache_is_ignored(tmp_path: Path) -> None:
    build(tmp_path)
    cold = run(tmp_path)
    cache = MetadataCache.load(tmp_path)
    cache.put_tree({str(tmp_path): ("junk",), str(tmp_path / "g1"): "x"})
    cache.save()
    assert run(tmp_path) == cold


def test_recently_modified_folders_are_not_trusted(tmp_path: Path, listed: list[str]) -> None:
    for i in range(2):
        write_skill(tmp_path / "g", f"s{i}")
    run(tmp_path)  # folders just written: within the racy window
    listed.clear()
    run(tmp_path)
    assert str(tmp_path / "g") in listed


def test_a_skill_folder_emptied_is_listed_again_next_time(
    tmp_path: Path, listed: list[str], stats_by: str
) -> None:
    """A cached skill folder whose SKILL.md went is scanned afresh, and its parent's
    cached listing is dropped so the next scan lists the parent too."""
    build(tmp_path)
    same_as_fresh(tmp_path)
    (tmp_path / "g1" / "g1-s2" / "SKILL.md").unlink()
    write_skill(tmp_path / "g1" / "g1-s2", "inner")
    for path in (tmp_path / "g1" / "g1-s2", tmp_path / "g1" / "g1-s2" / "inner"):
        os.utime(path, ns=(OLD, OLD))
    listed.clear()
    rows = run(tmp_path)
    assert ("g1/g1-s2/inner", "inner", (), []) in rows
    assert rows == run(tmp_path, use_cache=False)
    assert str(tmp_path / "g1" / "g1-s2") in listed
    listed.clear()
    assert run(tmp_path) == rows
    assert str(tmp_path / "g1") in listed
