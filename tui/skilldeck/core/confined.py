"""One confinement rule for every file of a skill, SKILL.md included.

A skill's files are read only when they are regular files that resolve inside the skill
folder (symlinks within the folder are fine; a symlink leaving it is not), have a single
hard link unless the configuration allows more (a hard link can expose a file from outside
the folder), and only up to a cap: a device, FIFO or socket where a file should be is
refused, and a huge or endless file is cut at the cap and reported as truncated. Every
entry point (load, read, resources, the preview, MCP resources, the search index) goes
through :func:`read_confined`; discovery uses :func:`refusal` to mark such a skill invalid.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.config import hardlinks_allowed
from skilldeck.core.errors import ErrorCode, SkilldeckError

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


@dataclass(frozen=True, slots=True)
class Read:
    """What :func:`read_confined` read.

    Attributes:
        data: The bytes read (at most the cap).
        size: The file's size on disk.
        truncated: True when the file holds more than was read.
    """

    data: bytes
    size: int
    truncated: bool


def inside(path: str, folder: str, is_link: bool | None = None) -> bool:
    """True when ``path`` resolves inside ``folder`` (both resolved through symlinks).

    A file directly in ``folder`` that is not a symlink needs no resolving: this is the
    common case (every SKILL.md) and costs one ``lstat`` (none when ``is_link`` is given).
    """
    if is_link is None:
        is_link = os.path.islink(path)
    if not is_link and os.path.dirname(path) == folder.rstrip(os.sep):
        return True
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def kind_problem(info: os.stat_result, allow_hardlinks: bool = False) -> str | None:
    """Why a file with this ``fstat`` must not be read (None: it may)."""
    if not stat.S_ISREG(info.st_mode):
        return f"is {_KINDS.get(stat.S_IFMT(info.st_mode), 'not a regular file')}"
    if info.st_nlink > 1 and not allow_hardlinks:
        return (
            f"has {info.st_nlink} hard links (a hard link can expose a file from outside the "
            "skill folder; set allow_hardlinks = true in config.toml to accept them)"
        )
    return None


def refusal(path: Path, folder: Path, allow_hardlinks: bool | None = None) -> str | None:
    """Why ``path`` (a file of the skill in ``folder``) must not be read, or None.

    Checks the confinement and the kind of file without reading it (stat only). A file
    that is missing or a folder gives None: the reader reports those in its own words.
    """
    text = str(path)
    if not inside(text, str(folder)):
        return "resolves outside the skill folder"
    try:
        info = os.stat(text)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    if allow_hardlinks is None and info.st_nlink > 1:
        allow_hardlinks = hardlinks_allowed()
    return kind_problem(info, bool(allow_hardlinks))


def read_confined(
    path: Path,
    folder: Path,
    *,
    cap: int,
    offset: int = 0,
    allow_hardlinks: bool | None = None,
    label: str | None = None,
) -> Read:
    """Read ``path`` under the confinement rule, at most ``cap`` bytes from ``offset``.

    Args:
        path: The file (inside ``folder``).
        folder: The skill folder.
        cap: Most bytes returned; a longer file is cut (``truncated``).
        offset: Where to start reading.
        allow_hardlinks: Accept a file with more than one hard link (None: as the config
            file says, :func:`~skilldeck.core.config.hardlinks_allowed`).
        label: How to name the file in errors (default: its path).

    Raises:
        SkilldeckError: PERMISSION_DENIED when the file resolves outside the folder, is not
            a regular file or has several hard links; NOT_FOUND when it is gone.
    """
    name = label or str(path)
    text = str(path)
    is_link = os.path.islink(text)
    if not inside(text, str(folder), is_link):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"{name} resolves outside the skill folder", path=name
        )
    fd = _open(text, name, is_link)
    try:
        if is_link:
            _check_opened(fd, str(folder), name)
        info = os.fstat(fd)
        if allow_hardlinks is None and info.st_nlink > 1:
            allow_hardlinks = hardlinks_allowed()
        problem = kind_problem(info, bool(allow_hardlinks))
        if problem is not None:
            raise SkilldeckError(ErrorCode.PERMISSION_DENIED, f"{name} {problem}", path=name)
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        data = _read_up_to(fd, cap + 1)
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"cannot read {name}: {exc.strerror}", path=name
        ) from exc
    finally:
        os.close(fd)
    return Read(data[:cap], info.st_size, len(data) > cap)


def _open(path: str, name: str, is_link: bool) -> int:
    """Open for reading without blocking (a FIFO) and, when the path was no symlink,
    without following one swapped in meanwhile."""
    flags = _FLAGS if is_link else _FLAGS | _NOFOLLOW
    try:
        return os.open(path, flags)
    except FileNotFoundError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} no longer exists", path=name) from exc
    except IsADirectoryError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is a folder", path=name) from exc
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"cannot open {name}: {exc.strerror}", path=name
        ) from exc


def _check_opened(fd: int, folder: str, name: str) -> None:
    """A symlink may have been swapped between the check and the open: where the platform
    tells what was opened (``/proc/self/fd``), check that again."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return
    if not inside(opened, folder):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"{name} changed while it was being opened", path=name
        )


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
