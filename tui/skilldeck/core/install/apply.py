"""Atomic installs: stage a copy beside the skills folder, then swap it in by renaming.

The stage (in ``.skilldeck-staging`` beside the skills root, so on the same file system;
:mod:`.staging`) holds the new copy until it is complete and hashed. The swap renames the current
version aside, renames the new one in, writes the lockfile, and only then deletes the old
version; any failure or interruption (KeyboardInterrupt included) before that puts the old
version back and leaves the lockfile as it was.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.lock import (
    LockEntry,
    Lockfile,
    read_lock,
    tree_digests,
    tree_hash,
    write_lock,
)
from skilldeck.core.install.staging import KNOWN, stage


@contextmanager
def staging_area(root: Path) -> Iterator[Path]:
    """A stage beside ``root`` (same file system), removed on exit (:mod:`.staging`)."""
    with stage(root.parent / KNOWN, "stage") as folder:
        yield folder


def copy_skill(source: Path, dest: Path) -> None:
    """Copy the skill folder ``source`` to ``dest`` (symlinks kept as links, ``.git`` left
    out, permissions kept)."""
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))


def install_folder(lock: Lockfile, entry: LockEntry, source: Path) -> LockEntry:
    """Install the skill folder ``source`` as ``lock.root / entry.name`` and lock it.

    The old version (if any) stays in place until the new one and the lockfile are both
    written; on any failure it is restored and the lockfile is left unchanged.

    Returns:
        The entry as locked (with the installed tree's hash).
    """
    target = lock.root / entry.name
    lock.root.mkdir(parents=True, exist_ok=True)
    with staging_area(lock.root) as stage:
        staged = stage / "new"
        copy_skill(source, staged)
        entry.sha256 = tree_hash(staged)
        entry.files = tree_digests(staged)
        _swap_in(lock, entry, staged, target, stage / "old")
    return entry


def place_folder(root: Path, name: str, source: Path) -> Path:
    """Copy the skill folder ``source`` to ``root / name``, where nothing may be yet, by a
    rename from a stage; no lockfile is read or written (``install --frozen``).

    Raises:
        SkilldeckError: CONFLICT when something appeared at ``root / name`` meanwhile.
    """
    target = root / name
    root.mkdir(parents=True, exist_ok=True)
    with staging_area(root) as stage:
        staged = stage / "new"
        copy_skill(source, staged)
        if target.exists() or target.is_symlink():
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR, f"{target} appeared meanwhile; left alone"
            )
        staged.rename(target)
    return target


@contextmanager
def exclusive(lock: Lockfile) -> Iterator[None]:
    """Hold an advisory lock (``flock`` on the lockfile's folder) so that two skilldeck
    runs writing the same lockfile take turns; a no-op where ``flock`` does not exist."""
    folder = lock.path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _commit(lock: Lockfile, name: str, entry: LockEntry | None) -> None:
    """Re-read the lockfile, set or drop ``name`` only, write it; then adopt what was
    written (so entries another run added meanwhile are kept)."""
    fresh = read_lock(lock.root)
    if entry is None:
        fresh.entries.pop(name, None)
    else:
        fresh.entries[name] = entry
    write_lock(fresh)
    lock.entries = fresh.entries


def _swap_in(lock: Lockfile, entry: LockEntry, staged: Path, target: Path, aside: Path) -> None:
    with exclusive(lock):
        had_old = target.exists() or target.is_symlink()
        if had_old:
            target.rename(aside)
        moved_in = False
        try:
            staged.rename(target)
            moved_in = True
            _commit(lock, entry.name, entry)
        except BaseException:
            if moved_in:
                shutil.rmtree(target, ignore_errors=True)
            if had_old:
                aside.rename(target)
            raise


def remove_installed(lock: Lockfile, name: str) -> None:
    """Delete the installed skill ``name`` and its lock entry (the folder is moved aside,
    the lockfile written, then the folder deleted; a failure puts the folder back)."""
    if name not in lock.entries:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is not in {lock.path}")
    target = lock.root / name
    with staging_area(lock.root) as stage, exclusive(lock):
        old = stage / "old"
        if target.exists() or target.is_symlink():
            target.rename(old)
        try:
            _commit(lock, name, None)
        except BaseException:
            if old.exists() or old.is_symlink():
                old.rename(target)
            raise
