"""Which paths named in a run's arguments the ``bwrap`` sandbox shows it, read-only.

An absolute path in the arguments that exists is shown at its real path, or the run is
refused (``PERMISSION_DENIED``, reason ``path_refused``) before anything runs. Shown are
only regular files and folders holding nothing but regular files, folders and symlinks
(walked up to :data:`MAX_ENTRIES` entries, on one file system), that the run's user can
read on the host (as root: ``nobody``; every parent folder searchable too, since the
sandbox makes its own parents). Refused: ``/``, ``/tmp``, and ``/proc``, ``/sys``, ``/dev``,
``/run`` and what is under them (``/run`` holds the host's sockets), a pseudo file system
(``proc``, ``sysfs``, ...) wherever it is mounted, a socket, FIFO or device (or a folder
holding one). ``SKILLDECK_HOME`` and anything holding or inside it is left out (the script
sees no such path). A file with several hard links is fine: who may read it is the inode's
own mode, checked here, not its name. A shown folder is a live mount: what appears in it
later appears in the run too (the seccomp filter refuses unix sockets for that reason).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from skilldeck.core.config import home_dir
from skilldeck.core.errors import ErrorCode, SkilldeckError

MAX_ENTRIES = 10_000
"""Most entries a named folder may hold (walked to check each)."""
_PATH = getattr(os, "O_PATH", 0) | os.O_CLOEXEC
_NEVER_BELOW = ("/proc", "/sys", "/dev", "/run")
_NEVER = (*_NEVER_BELOW, "/", "/tmp")
_PSEUDO = frozenset(
    {
        *("proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs"),
        *("securityfs", "bpf", "configfs", "efivarfs", "fusectl", "mqueue", "pstore"),
        *("binfmt_misc", "autofs", "nsfs", "hugetlbfs", "rpc_pipefs"),
    }
)
"""File system types never shown, wherever they are mounted."""
_SPECIAL = {
    stat.S_IFSOCK: "a socket",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


@contextlib.contextmanager
def held_paths(
    args: Iterable[str], mounted: Iterable[Path], user: int | None
) -> Iterator[list[tuple[int, Path]]]:
    """The resolved paths named in ``args`` to show read-only, each opened from ``/``
    one component at a time without following a link and checked through what was
    opened: ``(descriptor, path)`` pairs, open while the context lasts, for ``bwrap
    --ro-bind-fd`` (a path swapped for a link to ``/proc`` after the check is not what
    gets mounted).

    Args:
        args: The command line (only absolute paths that exist count).
        mounted: Folders the sandbox shows anyway (nothing under them is added).
        user: The uid the script runs as when it is not this process's (``nobody`` as
            root), or None for this process's own user.

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``path_refused``) naming the path and why.
    """
    home = Path(os.path.realpath(home_dir()))
    shown = list(mounted)
    held: list[tuple[int, Path]] = []
    try:
        for arg in args:
            if not arg.startswith("/") or "\x00" in arg:
                continue
            path = Path(os.path.realpath(arg))
            if not os.path.lexists(path) or any(path.is_relative_to(m) for m in shown):
                continue
            if _never(path) is None and (path.is_relative_to(home) or home.is_relative_to(path)):
                continue  # not there: the script sees no such path
            held.append((_hold(arg, path, user), path))
            shown.append(path)
        yield held
    finally:
        for fd, _ in held:
            os.close(fd)


def _hold(arg: str, path: Path, user: int | None) -> int:
    """``path`` opened and checked, or PERMISSION_DENIED (``path_refused``)."""
    why = _never(path)
    fd = -1
    if why is None:
        try:
            fd, parents = _open_beneath_root(path)
            why = _refusal(fd, path, parents, user)
        except OSError as exc:
            why = f"it cannot be checked ({exc.strerror or exc})"
    if why is None:
        return fd
    if fd >= 0:
        os.close(fd)
    raise SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"the argument {arg!r} cannot be shown to the sandbox: {why}",
        reason="path_refused",
        path=arg,
    )


def _never(path: Path) -> str | None:
    if str(path) in _NEVER or any(path.is_relative_to(top) for top in _NEVER_BELOW):
        return f"{path} is never shown to a script"
    return None


def _open_beneath_root(path: Path) -> tuple[int, list[os.stat_result]]:
    """``path`` opened (``O_PATH``) from ``/`` one component at a time, never through a
    link, and the status of each folder above it.

    Raises:
        OSError: A component is missing, or is a link (it changed since it was resolved).
    """
    fd = os.open("/", _PATH | os.O_DIRECTORY)
    parents: list[os.stat_result] = []
    try:
        for part in path.parts[1:]:
            parents.append(os.fstat(fd))
            step = os.open(part, _PATH | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = step
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise OSError(errno.ELOOP, f"{part} changed into a link while being checked")
    except BaseException:
        os.close(fd)
        raise
    return fd, parents


def _refusal(fd: int, path: Path, parents: list[os.stat_result], user: int | None) -> str | None:
    kind = _fs_type(fd)
    if kind in _PSEUDO:
        return f"it is on a {kind} file system"
    info = os.fstat(fd)
    blocked = _unreadable(fd, info, (path, parents), user)
    if blocked is not None:
        return blocked + "; make it readable or copy it somewhere readable"
    if stat.S_ISREG(info.st_mode):
        return None
    if not stat.S_ISDIR(info.st_mode):
        return f"it is {_SPECIAL.get(stat.S_IFMT(info.st_mode), 'not a regular file')}"
    return _folder_problem(fd, info.st_dev)


def _unreadable(
    fd: int, info: os.stat_result, above: tuple[Path, list[os.stat_result]], user: int | None
) -> str | None:
    """Why the run's user cannot reach and read the opened ``fd`` on the host (a folder:
    list and enter it), or None when it can."""
    want = os.R_OK | (os.X_OK if stat.S_ISDIR(info.st_mode) else 0)
    if user is None:
        return None if os.access(f"/proc/self/fd/{fd}", want) else "you cannot read it"
    path, parents = above
    for depth, folder in enumerate(parents):
        if not _allows(folder, user, os.X_OK):
            mode = oct(stat.S_IMODE(folder.st_mode))[2:]
            where = Path(*path.parts[: depth + 1])
            return f"the sandbox user (nobody) cannot enter {where} (mode {mode})"
    if not _allows(info, user, want):
        mode = oct(stat.S_IMODE(info.st_mode))[2:]
        return f"the sandbox user (nobody) cannot read it (mode {mode})"
    return None


def _allows(info: os.stat_result, user: int, want: int) -> bool:
    """Mode bits only (the user has no supplementary groups; its group is its uid)."""
    if info.st_uid == user:
        shift = 6
    elif info.st_gid == user:
        shift = 3
    else:
        shift = 0
    granted = (info.st_mode >> shift) & 0o7
    return granted & want == want


def _folder_problem(fd: int, device: int) -> str | None:
    """Why the opened folder ``fd`` cannot be shown (something in it not a regular file,
    folder or symlink; another file system mounted in it; too many entries), or None."""
    seen = 0
    for folder, dirs, files, dir_fd in os.fwalk(".", dir_fd=fd, onerror=_raise):
        for name in (*dirs, *files):
            seen += 1
            if seen > MAX_ENTRIES:
                return f"it holds more than {MAX_ENTRIES} entries"
            full = os.path.normpath(os.path.join(folder, name))
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            kind = _SPECIAL.get(stat.S_IFMT(info.st_mode))
            if kind is not None:
                return f"it holds {kind}: {full!r}"
            if stat.S_ISDIR(info.st_mode) and info.st_dev != device:
                return f"another file system is mounted in it: {full!r}"
    return None


def _raise(exc: OSError) -> None:
    raise exc


def _fs_type(fd: int) -> str:
    """The file system type of the mount holding the opened ``fd`` (its ``mnt_id`` in
    ``/proc/self/fdinfo``, looked up in ``/proc/self/mountinfo``)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="utf-8") as handle:
            found = re.search(r"^mnt_id:\s*(\d+)", handle.read(), re.MULTILINE)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    for line in lines:
        if found is not None and line.split(" ", 1)[0] == found.group(1) and " - " in line:
            return line.split(" - ", 1)[1].split(" ", 1)[0]
    return ""
