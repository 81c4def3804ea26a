"""The sandbox a skill's code runs in, and which level of it this machine gives.

**``bwrap``** (bubblewrap, Debian's ``bubblewrap``): the run gets new PID, IPC, UTS and
network namespaces (and a user namespace when Skilldeck is not root), so it has no network,
cannot see or signal any process outside, and every process it starts dies with it
(``--die-with-parent``; the PID namespace ends when the script does). Its file system is
``/usr`` (and the Python installation) read-only, the skill's private copy read-only at the
skill's own path, a private ``/proc`` and ``/dev``, a private writable ``/tmp`` of
:data:`TMP_BYTES` (one per run: runs share no writable place), and the absolute paths named
in its arguments read-only when :mod:`.shown_paths` allows them (regular files and
folders of them that the run's user can read; never ``/proc``, ``/sys``, ``/dev``,
``/run``, a socket, FIFO or device: such a run is refused before it starts), each mounted
from the descriptor that was checked (a path swapped for a link meanwhile is not shown).
``SKILLDECK_HOME``, the user's home and the parent's ``/proc/<pid>/environ`` are not
there. When Skilldeck runs as root the script runs as ``nobody`` (uid 65534, no
supplementary groups) with **no capability at all**
(effective, permitted, inheritable, ambient and bounding sets empty, ``no_new_privs``), so
it reads only what ``nobody`` may and the process limit applies; only the launcher keeps
``CAP_SETUID``/``CAP_SETGID``/``CAP_SETPCAP`` to become ``nobody`` (no ``setpriv``: no
``bwrap`` level). A seccomp filter (:mod:`.seccomp`) refuses ``open_by_handle_at`` and
``name_to_handle_at`` (reading a file by handle, outside any mount) and ``AF_UNIX``
sockets (a socket created later in a shown folder is reachable through its live mount)
with ``EPERM``.

**``rlimits-only``** (no usable ``bwrap``): the run starts in a private copy of the skill
with a scrubbed environment and a private ``/tmp`` folder of its own (mode 0700), CPU,
memory, file-size and process-count limits, and its process group is killed at the end;
the network is cut with ``unshare --net`` (``-r`` as a non-root user) where that works. It
does **not** hide the file system or other processes: a script can read and write what the
user can (as root: everything), ``SKILLDECK_HOME`` included (it can add a line to
``ALLOWLIST.txt`` or rewrite the audit store with its chain), and a child that leaves its
process group can outlive the run. Use ``require_sandbox = true`` where that matters.

At both levels Python runs with ``-B`` and a ``pycache_prefix`` in the run's private
``/tmp``, so no ``__pycache__`` beside the skill's sources is ever read or written (see
:func:`python_flags`). Every result says which level it got; ``require_sandbox = true``
refuses to run below ``bwrap``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution import seccomp
from skilldeck.core.execution.shown_paths import held_paths as hold_named

BWRAP = "bwrap"
RLIMITS_ONLY = "rlimits-only"
LEVELS = (BWRAP, RLIMITS_ONLY)
"""Sandbox levels, strongest first."""
TMP_BYTES = 64 * 1024 * 1024
"""Size of the private ``/tmp`` under ``bwrap``: all a script may write."""
MAX_PROCESSES = 64
"""Processes (and threads) a run may have at once."""
NOBODY = 65534
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
_LAUNCHER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What ``setpriv`` needs to make the script ``nobody`` without any capability."""


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What this machine gives a run.

    Attributes:
        level: One of :data:`LEVELS`.
        network_isolated: True when runs have no network.
        notes: What the level does not stop here (empty for ``bwrap``).
    """

    level: str
    network_isolated: bool
    notes: tuple[str, ...] = ()


def is_root() -> bool:
    """True when Skilldeck runs as root."""
    return os.geteuid() == 0


@functools.lru_cache(maxsize=1)
def probe() -> Sandbox:
    """The sandbox level of this machine (probed once per process)."""
    drop = _drop_root()
    if drop is not None:
        with filter_fd() as fd:
            prefix = _bwrap_prefix(Path("/"), [], Path("/"), fd)
            if _works([*prefix, *_process_limit(), *drop, "/bin/true"], fd):
                return Sandbox(BWRAP, True)
    notes = [
        "bubblewrap (bwrap) is not usable here: the script can read and write what you can,"
        " SKILLDECK_HOME too (its allowlist and audit store)"
    ]
    if is_root():
        notes.append("running as root without bwrap: the process limit is not enforced")
    unshare = _unshare()
    if unshare is None:
        notes.append("no network isolation (unshare --net does not work here)")
    return Sandbox(RLIMITS_ONLY, unshare is not None, tuple(notes))


def _works(argv: list[str], fd: int | None = None) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    fds = (fd,) if fd is not None else ()
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, pass_fds=fds)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=1)
def _unshare() -> list[str] | None:
    """``unshare --net`` (``-r`` for a non-root user) when it works here."""
    argv = ["unshare", "--net", "--"] if is_root() else ["unshare", "-r", "--net", "--"]
    return argv if _works([*argv, "/bin/true"]) else None


@contextlib.contextmanager
def filter_fd() -> Iterator[int | None]:
    """A file descriptor to read the :mod:`.seccomp` program from, for ``bwrap --seccomp``
    (pass it to the child; it can be read once), or None on a machine without one."""
    program = seccomp.program()
    if program is None:
        yield None
        return
    read, write = os.pipe()  # the program is far smaller than a pipe's buffer
    try:
        with os.fdopen(write, "wb") as sink:
            sink.write(program)
        yield read
    finally:
        os.close(read)


def command(
    sandbox: Sandbox,
    argv: list[str],
    skill_dir: Path,
    copy: Path,
    tmp: Path,
    seccomp_fd: int | None = None,
    shown: Iterable[tuple[int, Path]] = (),
) -> list[str]:
    """The full command line that runs ``argv`` (an interpreter and its arguments) at
    ``sandbox``'s level, with the private ``copy`` of the skill seen at ``skill_dir``
    (``bwrap``) or used as is (``rlimits-only``), and ``tmp`` as the writable area;
    ``seccomp_fd`` (from :func:`filter_fd`) and the descriptors of ``shown`` (from
    :func:`held_paths`, each mounted read-only at its path) are passed to the child and
    used by ``bwrap``.

    Raises:
        SkilldeckError: EXECUTION_ERROR as root without ``setpriv``.
    """
    limit = _process_limit()
    if sandbox.level == BWRAP:
        drop = _drop_root()
        if drop is None:  # setpriv went away since the probe: never run as root
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR, "setpriv is missing: a script never runs as root"
            )
        prefix = _bwrap_prefix(skill_dir, list(shown), copy, seccomp_fd)
        return [*prefix, *limit, *drop, *argv]
    return [*(_unshare() or []), *limit, *argv]


def _process_limit() -> list[str]:
    """``prlimit --nproc`` set inside the sandbox (so a user's other processes do not
    count against it), when ``prlimit`` is there."""
    found = shutil.which("prlimit", path="/usr/bin:/bin")
    if found is None:
        return []
    return [found, f"--nproc={MAX_PROCESSES}:{MAX_PROCESSES}", "--"]


def _drop_root() -> list[str] | None:
    """As root, ``setpriv`` making the script ``nobody`` with every capability set empty
    (root is exempt from the process limit and reads everything); None when ``setpriv``
    is missing. Nothing to do for another user."""
    if not is_root():
        return []
    found = shutil.which("setpriv", path="/usr/bin:/bin")
    if found is None:
        return None
    uid = str(NOBODY)
    return [
        found,
        *("--reuid", uid, "--regid", uid, "--clear-groups"),
        *("--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"),
        *("--no-new-privs", "--"),
    ]


def _bwrap_prefix(
    skill_dir: Path, shown: list[tuple[int, Path]], copy: Path, seccomp_fd: int | None
) -> list[str]:
    """``bwrap`` and its options, up to and including ``--`` (its ``/tmp`` is a private
    tmpfs)."""
    if is_root():
        spaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        spaces += ["--cap-drop", "ALL"]
        for cap in _LAUNCHER_CAPS:
            spaces += ["--cap-add", cap]
    else:
        spaces = ["--unshare-all", "--cap-drop", "ALL"]
    if seccomp_fd is not None:
        spaces += ["--seccomp", str(seccomp_fd)]
    argv = [BWRAP, *spaces, "--die-with-parent", "--new-session", "--clearenv"]
    argv += _system_mounts()
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for path in _python_dirs():
        argv += [*_parents(path), "--ro-bind", str(path), str(path)]
    for fd, path in shown:
        argv += [*_parents(path), "--ro-bind-fd", str(fd), str(path)]
    if skill_dir != Path("/"):
        argv += [*_parents(skill_dir), "--ro-bind", str(copy), str(skill_dir)]
    argv += ["--chdir", str(skill_dir)]
    for key, value in environment(skill_dir, Path("/tmp")).items():
        argv += ["--setenv", key, value]
    return [*argv, "--"]


def _system_mounts() -> list[str]:
    argv: list[str] = []
    for top in _SYSTEM:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for path in _ETC:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    return argv


def _python_dirs() -> list[Path]:
    """The Python installation(s) to mount, when they are not under ``/usr``."""
    found: list[Path] = []
    for prefix in {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}:
        path = Path(prefix)
        if not any(path.is_relative_to(top) for top in _SYSTEM):
            found.append(path)
    return sorted(found)


def _parents(path: Path) -> list[str]:
    """Create ``path``'s parent folders inside the sandbox, readable by everyone."""
    argv: list[str] = []
    for parent in reversed(path.parents):
        if parent != Path("/") and not any(parent.is_relative_to(t) for t in _SYSTEM):
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def read_paths(argv: Iterable[str], skill_dir: Path) -> list[Path]:
    """The absolute paths named in ``argv`` that ``bwrap`` shows read-only, beyond what it
    mounts anyway (see :mod:`.shown_paths`).

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``path_refused``) for one it will not show.
    """
    with held_paths(argv, skill_dir) as held:
        return [path for _, path in held]


@contextlib.contextmanager
def held_paths(argv: Iterable[str], skill_dir: Path) -> Iterator[list[tuple[int, Path]]]:
    """:func:`read_paths`, each opened and checked through its descriptor (open while the
    context lasts): what :func:`command` mounts, so a path swapped after the check is not.

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``path_refused``) for one it will not show.
    """
    mounted = [Path(t) for t in _SYSTEM] + _python_dirs() + [skill_dir]
    with hold_named(argv, mounted, NOBODY if is_root() else None) as held:
        yield held


def python_flags(tmp: Path) -> list[str]:
    """What follows the interpreter on every Python command line of a run: write no
    bytecode, and look for it only under ``tmp`` (never in a ``__pycache__`` the skill
    ships beside its sources).

    The cost: the installation's own bytecode is not used either, so each start compiles
    what it imports (measured: ``text_stats.py`` 20 -> 96 ms of CPU with Debian's
    python3.11)."""
    return ["-B", "-X", f"pycache_prefix={tmp / 'pycache'}"]


def environment(skill_dir: Path, tmp: Path) -> dict[str, str]:
    """The whole environment of a run: nothing is inherited."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        "SKILL_DIR": str(skill_dir),
    }
