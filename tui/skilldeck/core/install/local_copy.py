"""Copy a local folder source into a stage: regular files and folders only, bounded.

A plain local folder (a lock's ``local`` source, or ``add ./folder``) is copied so that what
is reviewed and installed are the same bytes. The folder is surveyed whole before a byte of
a file is read: every entry must be a regular file, a folder or a symlink (copied as a link,
never followed); a device, FIFO or socket refuses the source (``/dev/zero`` would fill the
disk, a FIFO would hang the install), and so do more than :data:`MAX_FILES` files, a file
over :data:`FILE_CAP` or more than :data:`TOTAL_CAP` bytes in all (the caps of
:mod:`~skilldeck.core.execution.snapshot`: what is copied here can also be pinned and run).
The copy then opens every entry relative to its folder without following a link, checks
what it opened and counts the bytes it actually reads, so an entry swapped or grown after
the survey is refused too. A refusal raises with reason ``unsafe_source``; what was written
so far lies in the stage and goes with it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import FILE_CAP, MAX_FILES, TOTAL_CAP
from skilldeck.core.skillfolder import SKIPPED

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_FILE = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_FILE |= getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}


@dataclass(slots=True)
class _Tally:
    """What was met so far: files (and links), folders and bytes."""

    files: int = 0
    folders: int = 0
    size: int = 0


def refuse(source: Path, message: str) -> SkilldeckError:
    """The refusal of the local ``source`` (reason ``unsafe_source``)."""
    return SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"{source}: {message}; nothing was copied from it",
        reason="unsafe_source",
        source=str(source),
    )


def copy_local(source: Path, dest: Path) -> None:
    """Copy the folder ``source`` into ``dest`` (created when missing), the entries
    :data:`~skilldeck.core.skillfolder.SKIPPED` names (``.git``) left out at every level.

    Raises:
        SkilldeckError: NOT_FOUND when ``source`` is missing; PERMISSION_DENIED (reason
            ``unsafe_source``) when it is not a folder, holds anything but regular files,
            folders and symlinks, or is over a cap.
    """
    root = _open_root(source)
    try:
        tally = _Tally()
        for rel, _, _, info in _walk(root, "", source, tally):
            _survey(source, rel, info, tally)
        dest.mkdir(parents=True, exist_ok=True)
        budget, again = _Tally(), _Tally()
        for rel, parent, name, info in _walk(root, "", source, again):
            _survey(source, rel, info, again)  # what was added since is counted too
            _copy_entry(source, rel, parent, name, info, dest, budget)
    except OSError as exc:
        raise refuse(source, f"cannot be copied ({exc.strerror or exc})") from exc
    finally:
        os.close(root)


def _open_root(source: Path) -> int:
    """The source folder, opened; refused when it is something else (``/dev/zero``)."""
    try:
        info = os.stat(source)
    except FileNotFoundError as exc:
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"{source}: no such repository or folder"
        ) from exc
    except OSError as exc:
        raise refuse(source, f"cannot be read ({exc.strerror})") from exc
    if not stat.S_ISDIR(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "a file")
        raise refuse(source, f"is {kind}, not a folder")
    try:
        return os.open(source, _DIR)
    except OSError as exc:
        raise refuse(source, f"cannot be opened ({exc.strerror})") from exc


def _walk(
    dir_fd: int, rel: str, source: Path, tally: _Tally
) -> Iterator[tuple[str, int, str, os.stat_result]]:
    """Every entry below ``dir_fd`` as ``(rel, parent_fd, name, lstat)``, folders before
    their contents, never through a symlink; stops past the caps on entries."""
    with os.scandir(dir_fd) as listing:
        entries = []
        for entry in listing:
            if entry.name in SKIPPED:
                continue
            entries.append(entry)
            if len(entries) + tally.files + tally.folders > 2 * MAX_FILES:
                raise refuse(source, f"holds more than {MAX_FILES} files")
    for entry in sorted(entries, key=lambda e: e.name):
        path = f"{rel}/{entry.name}" if rel else entry.name
        info = entry.stat(follow_symlinks=False)
        yield path, dir_fd, entry.name, info
        if stat.S_ISDIR(info.st_mode):
            sub = os.open(entry.name, _DIR | _NOFOLLOW, dir_fd=dir_fd)
            try:
                yield from _walk(sub, path, source, tally)
            finally:
                os.close(sub)


def _survey(source: Path, rel: str, info: os.stat_result, tally: _Tally) -> None:
    """Count one entry; refuse a kind that is not copied or a cap passed."""
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        tally.folders += 1
        if tally.folders > MAX_FILES:
            raise refuse(source, f"holds more than {MAX_FILES} folders")
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise refuse(source, f"{rel} is {kind} (only regular files and folders are copied)")
    tally.files += 1
    if tally.files > MAX_FILES:
        raise refuse(source, f"holds more than {MAX_FILES} files")
    if stat.S_ISREG(mode):
        _count(source, rel, info.st_size, tally)


def _count(source: Path, rel: str, size: int, tally: _Tally) -> None:
    """Add ``size`` bytes of ``rel`` to ``tally``; refuse past a cap."""
    if size > FILE_CAP:
        raise refuse(source, f"{rel} is over the {FILE_CAP}-byte cap of one file")
    tally.size += size
    if tally.size > TOTAL_CAP:
        raise refuse(source, f"holds more than {TOTAL_CAP} bytes")


def _copy_entry(
    source: Path,
    rel: str,
    parent: int,
    name: str,
    info: os.stat_result,
    dest: Path,
    budget: _Tally,
) -> None:
    """Copy one surveyed entry into ``dest`` (a folder, a link as a link, a file)."""
    target = dest / rel
    if stat.S_ISDIR(info.st_mode):
        target.mkdir()
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(name, dir_fd=parent), target)
    else:
        _copy_file(source, rel, os.open(name, _FILE, dir_fd=parent), target, budget)


def _copy_file(source: Path, rel: str, fd: int, target: Path, budget: _Tally) -> None:
    """Copy the opened file ``fd`` to ``target``, counting what is read against the caps."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise refuse(source, f"{rel} is {kind} (it changed during the copy)")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with open(out, "wb") as handle:
            read = 0
            while chunk := os.read(fd, _CHUNK):
                read += len(chunk)
                _count(source, rel, len(chunk), budget)
                if read > FILE_CAP:
                    raise refuse(source, f"{rel} is over the {FILE_CAP}-byte cap of one file")
                handle.write(chunk)
            os.fchmod(out, stat.S_IMODE(info.st_mode) & 0o777)
    finally:
        os.close(fd)
