"""One confinement rule for every file of a skill, SKILL.md included.

A skill's files are read only when they are regular files that resolve inside the skill
folder (symlinks within the folder are fine; a symlink leaving it is not), have a single
hard link unless the configuration allows more (a hard link can expose a file from outside
the folder), and only up to a cap: a device, FIFO or socket where a file should be is
refused, and a huge or endless file is cut at the cap and reported as truncated. Every
entry point (load, read, resources, the preview, MCP resources, the search index) goes
through :func:`read_confined`; discovery uses :func:`refusal` to mark such a skill invalid.

The path is never handed to the kernel whole: each component is opened relative to the
folder opened before it, without following a link (``O_NOFOLLOW``), so a folder swapped for
a symlink between a check and the open cannot lead outside. A symlink met on the way is
resolved here, against the folder's own descriptors, and refused when it climbs above the
skill folder or is absolute outside it (at most :data:`MAX_HOPS` of them per path).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from skilldeck.core.config import hardlinks_allowed
from skilldeck.core.errors import ErrorCode, SkilldeckError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = os.O_RDONLY | _CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_PATH = getattr(os, "O_PATH", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_STEP = (_PATH or os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)) | _CLOEXEC | _NOFOLLOW
"""How a component is opened only to look at it or walk through it (``O_PATH``: no read
permission needed and nothing opened for real, a device or FIFO included)."""
_DIR = _STEP | _DIRECTORY
MAX_HOPS = 40
"""Most symlinks resolved for one path (as the kernel's own limit)."""
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}
_OUTSIDE = "resolves outside the skill folder"


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


class _Outside(Exception):
    """The path leads outside the skill folder (or through too many links)."""


def inside(path: str, folder: str, is_link: bool | None = None) -> bool:
    """True when ``path`` resolves inside ``folder`` (both resolved through symlinks).

    A file directly in ``folder`` that is not a symlink needs no resolving: this is the
    common case (every SKILL.md) and costs one ``lstat`` (none when ``is_link`` is given).
    This answers by path, for listing; reading goes through :func:`read_confined`, which
    does not trust an answer given before the open.
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

    Checks the confinement and the kind of file without reading it (the file is opened
    only as a path, walked as :func:`read_confined` walks it). A file that is missing or a
    folder gives None: the reader reports those in its own words.
    """
    try:
        fd = _open_beneath(str(folder), _parts(path, folder), _STEP)
    except _Outside:
        return _OUTSIDE
    except OSError:
        return None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
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
        path: The file (inside ``folder``, or inside the folder's real path).
        folder: The skill folder (itself may be a symlink: it is the anchor).
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
    fd = _open(path, folder, name)
    try:
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


def _open(path: Path, folder: Path, name: str) -> int:
    """Open ``path`` for reading, without blocking (a FIFO), walked beneath ``folder``."""
    try:
        return _open_beneath(str(folder), _parts(path, folder), _FLAGS | _NOFOLLOW)
    except _Outside as exc:
        raise SkilldeckError(ErrorCode.PERMISSION_DENIED, f"{name} {_OUTSIDE}", path=name) from exc
    except FileNotFoundError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} no longer exists", path=name) from exc
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"cannot open {name}: {exc.strerror}", path=name
        ) from exc


def _parts(path: Path, folder: Path) -> list[str]:
    """The components of ``path`` below ``folder`` (given as is, or as its real path)."""
    text, base = os.path.abspath(path), os.path.abspath(folder)
    for root in (base, os.path.realpath(base)):
        if text == root:
            return []
        if text.startswith(root.rstrip(os.sep) + os.sep):
            return text[len(root.rstrip(os.sep)) + 1 :].split(os.sep)
    raise _Outside(text)


def _open_beneath(folder: str, parts: list[str], flags: int) -> int:
    """The descriptor of ``folder/parts…`` opened with ``flags``, each component opened
    relative to the one before without following a link; links are resolved here and
    may not leave ``folder``.

    Raises:
        _Outside: A link climbs above or points outside ``folder``, or too many links.
        OSError: A component is missing or cannot be opened.
    """
    chain = [os.open(folder, _DIR & ~_NOFOLLOW)]
    pending = list(reversed(parts))
    hops = 0
    try:
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if len(chain) == 1:
                    raise _Outside(part)
                os.close(chain.pop())
                continue
            step = flags if not pending else _DIR
            try:
                chain.append(os.open(part, step, dir_fd=chain[-1]))
            except OSError as exc:
                target = _link_target(exc, part, chain[-1])
            else:
                if not _is_link(chain[-1], step):
                    continue
                os.close(chain.pop())
                target = _link_target(None, part, chain[-1])
            hops += 1
            if hops > MAX_HOPS:
                raise _Outside(part)
            if target is None:  # it changed kind while being walked: walk it again
                pending.append(part)
                continue
            pending.extend(reversed(_link_parts(target, folder, chain)))
        if len(chain) == 1:
            chain.append(os.open(".", flags & ~_NOFOLLOW, dir_fd=chain[0]))
        return chain.pop()
    finally:
        for fd in chain:
            os.close(fd)


def _is_link(fd: int, flags: int) -> bool:
    """True when ``fd`` is a symlink itself (what ``O_PATH | O_NOFOLLOW`` opens)."""
    if not flags & _PATH or flags & _DIRECTORY:
        return False
    return stat.S_ISLNK(os.fstat(fd).st_mode)


def _link_target(exc: OSError | None, part: str, dir_fd: int) -> str | None:
    """The target of the symlink ``part`` (that failed to open with ``exc``, or was opened
    as a link); None when it is a symlink no longer (swapped meanwhile: walk it again).

    Raises:
        OSError: ``exc`` again when ``part`` never was a symlink; the error of the look
            when it is gone.
    """
    if exc is not None and exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        raise exc
    try:
        return os.readlink(part, dir_fd=dir_fd)
    except OSError as failure:
        if failure.errno != errno.EINVAL:
            raise
    mode = os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode
    if exc is None or exc.errno == errno.ELOOP or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    raise exc


def _link_parts(target: str, folder: str, chain: list[int]) -> list[str]:
    """Components to walk for a link's ``target``: relative ones from where the link is;
    an absolute one only when it names a place inside ``folder`` (walked from its root)."""
    if not os.path.isabs(target):
        return list(PurePosixPath(target).parts)
    for root in (os.path.abspath(folder), os.path.realpath(folder)):
        if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
            for fd in chain[1:]:
                os.close(fd)
            del chain[1:]
            return target[len(root.rstrip(os.sep)) :].split(os.sep)
    raise _Outside(target)


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
