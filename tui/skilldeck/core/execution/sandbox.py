"""The sandbox a skill's code runs in, and which level of it this machine gives.

**``bwrap``** (bubblewrap, Debian's ``bubblewrap``): the run gets new PID, IPC, UTS and
network namespaces (and a user namespace when Skilldeck is not root), so it has no network,
cannot see or signal any process outside, and every process it starts dies with it
(``--die-with-parent``; the PID namespace ends when the script does). Its file system is
``/usr`` (and the Python installation) read-only, the skill's private copy read-only at the
skill's own path, the absolute paths named in its arguments read-only, a private ``/proc``
and ``/dev``, and a private writable ``/tmp`` of :data:`TMP_BYTES`. ``SKILLDECK_HOME``, the
user's home and the parent's ``/proc/<pid>/environ`` are not there. When Skilldeck runs as
root the script runs as ``nobody`` (uid 65534), so the process limit applies, with one
capability kept: reading what the sandbox shows it (``CAP_DAC_READ_SEARCH``), since the
paths named in its arguments may be private to root.

**``rlimits-only``** (no usable ``bwrap``): the run starts in a private copy of the skill
with a scrubbed environment, CPU, memory, file-size and process-count limits, and its
process group is killed at the end; the network is cut with ``unshare --net`` (``-r`` as a
non-root user) where that works. It does **not** hide the file system or other processes:
a script can read what the user can, and a child that leaves its process group can outlive
the run. Every result says which level it got; ``require_sandbox = true`` refuses to run
below ``bwrap``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.config import home_dir

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
    inside = [*_process_limit(), *_drop_root(), "/bin/true"]
    if _works([*_bwrap_prefix(Path("/"), [], Path("/")), *inside]):
        return Sandbox(BWRAP, True)
    notes = ["bubblewrap (bwrap) is not usable here: the script can read what you can"]
    if is_root():
        notes.append("running as root without bwrap: the process limit is not enforced")
    unshare = _unshare()
    if unshare is None:
        notes.append("no network isolation (unshare --net does not work here)")
    return Sandbox(RLIMITS_ONLY, unshare is not None, tuple(notes))


def _works(argv: list[str]) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=1)
def _unshare() -> list[str] | None:
    """``unshare --net`` (``-r`` for a non-root user) when it works here."""
    argv = ["unshare", "--net", "--"] if is_root() else ["unshare", "-r", "--net", "--"]
    return argv if _works([*argv, "/bin/true"]) else None


def command(sandbox: Sandbox, argv: list[str], skill_dir: Path, copy: Path, tmp: Path) -> list[str]:
    """The full command line that runs ``argv`` (an interpreter and its arguments) at
    ``sandbox``'s level, with the private ``copy`` of the skill seen at ``skill_dir``
    (``bwrap``) or used as is (``rlimits-only``), and ``tmp`` as the writable area."""
    limit = _process_limit()
    if sandbox.level == BWRAP:
        inside = [*limit, *_drop_root(), *argv]
        shown = _read_paths(argv, skill_dir)
        return [*_bwrap_prefix(skill_dir, shown, copy), *inside]
    return [*(_unshare() or []), *limit, *argv]


def _process_limit() -> list[str]:
    """``prlimit --nproc`` set inside the sandbox (so a user's other processes do not
    count against it), when ``prlimit`` is there."""
    found = shutil.which("prlimit", path="/usr/bin:/bin")
    if found is None:
        return []
    return [found, f"--nproc={MAX_PROCESSES}:{MAX_PROCESSES}", "--"]


def _drop_root() -> list[str]:
    """As root, the script runs as ``nobody`` (root is exempt from the process limit),
    keeping only the right to read what the sandbox shows it (the paths named in its
    arguments may be private to root)."""
    found = shutil.which("setpriv", path="/usr/bin:/bin")
    if not is_root() or found is None:
        return []
    uid, cap = str(NOBODY), "+dac_read_search"
    return [
        found,
        *("--reuid", uid, "--regid", uid, "--clear-groups"),
        *(f"--inh-caps=-all,{cap}", f"--ambient-caps={cap}", f"--bounding-set=-all,{cap}"),
        *("--no-new-privs", "--"),
    ]


def _bwrap_prefix(skill_dir: Path, read_paths: list[Path], copy: Path) -> list[str]:
    """``bwrap`` and its options, up to and including ``--`` (its ``/tmp`` is a private
    tmpfs)."""
    if is_root():
        spaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_READ_SEARCH"):
            spaces += ["--cap-add", cap]
    else:
        spaces = ["--unshare-all"]
    argv = [BWRAP, *spaces, "--die-with-parent", "--new-session", "--clearenv"]
    argv += _system_mounts()
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for path in _python_dirs():
        argv += [*_parents(path), "--ro-bind", str(path), str(path)]
    for path in read_paths:
        argv += [*_parents(path), "--ro-bind", str(path), str(path)]
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


def _read_paths(argv: Iterable[str], skill_dir: Path) -> list[Path]:
    """Absolute paths named in the arguments that exist, to be seen read-only; never
    ``SKILLDECK_HOME`` or anything holding or inside it, nor what is mounted anyway."""
    home = Path(os.path.realpath(home_dir()))
    mounted = [Path(t) for t in _SYSTEM] + _python_dirs() + [skill_dir]
    found: list[Path] = []
    for arg in argv:
        if not arg.startswith("/") or "\n" in arg or "\x00" in arg:
            continue
        path = Path(os.path.realpath(arg))
        if not path.exists() or path == Path("/") or path in found:
            continue
        if path.is_relative_to(home) or home.is_relative_to(path):
            continue
        if any(path.is_relative_to(m) for m in mounted):
            continue
        found.append(path)
    return found


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
        "SKILL_DIR": str(skill_dir),
    }
