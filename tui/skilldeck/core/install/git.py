"""Real ``git`` through a subprocess: no shell, no hooks, no prompts, bounded in time.

Every call runs ``git -c core.hooksPath=/dev/null -c core.fsmonitor=false …`` with
``GIT_TERMINAL_PROMPT=0``, so a repository can neither run code on this machine nor wait
for a password. Submodules are never fetched. Only :func:`fetch_source` and
:func:`remote_commit` touch the network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.local_copy import copy_local

GIT_TIMEOUT = 300.0
"""Seconds a clone or fetch may take."""
_SAFE = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "protocol.file.allow=always",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "submodule.recurse=false",
    "-c",
    "advice.detachedHead=false",
)
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True, slots=True)
class Fetched:
    """A source brought onto this machine.

    Attributes:
        path: The working tree (or the local folder itself when it is not a repository).
        commit: The checked-out commit SHA (None for a plain folder).
    """

    path: Path
    commit: str | None


def is_url(source: str) -> bool:
    """True for ``https://…``, ``ssh://…``, ``file://…`` and ``user@host:path`` sources."""
    return bool(_URL.match(source))


GITHUB = "https://github.com"
"""Where ``owner/repo`` shorthand points (``SKILLDECK_GITHUB_BASE`` overrides it, e.g. a
mirror or, in tests, a ``file://`` folder)."""
_SHORTHAND = re.compile(
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9_.-]*)/(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*)"
    r"(?P<path>(?:/[A-Za-z0-9_.-]+)*)(?:@(?P<ref>[^\s@]+))?"
)


@dataclass(frozen=True, slots=True)
class Shorthand:
    """``owner/repo[/path][@ref]`` as a git source.

    Attributes:
        url: The repository's URL.
        subpath: The folder inside it to install from ('' for all of it).
        ref: The ref asked for ('' for the default branch).
    """

    url: str
    subpath: str
    ref: str


def parse_shorthand(source: str) -> Shorthand | None:
    """The GitHub shorthand ``owner/repo[/path][@ref]`` other skill installers accept, or
    None when ``source`` is no such shorthand (a URL, or a local folder that exists)."""
    found = _SHORTHAND.fullmatch(source)
    if found is None or is_url(source) or Path(source).expanduser().exists():
        return None
    if ".." in found.group("path").split("/"):
        return None
    base = os.environ.get("SKILLDECK_GITHUB_BASE", GITHUB).rstrip("/")
    url = f"{base}/{found.group('owner')}/{found.group('repo').removesuffix('.git')}.git"
    return Shorthand(url, found.group("path").strip("/"), found.group("ref") or "")


def is_sha(ref: str) -> bool:
    """True when ``ref`` is a full commit SHA (a pin that never moves)."""
    return bool(_SHA.match(ref))


def run_git(args: list[str], cwd: Path | None = None, timeout: float = GIT_TIMEOUT) -> str:
    """Run ``git ARGS`` safely and return its standard output.

    Raises:
        SkilldeckError: EXECUTION_ERROR when git is missing, fails or times out.
    """
    exe = shutil.which("git")
    if exe is None:
        raise SkilldeckError(ErrorCode.EXECUTION_ERROR, "git is not installed (needed here)")
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="")
    env["GIT_SSH_COMMAND"] = env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    try:
        done = subprocess.run(
            [exe, *_SAFE, *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"git {args[0]} took longer than {timeout:.0f}s"
        ) from exc
    except OSError as exc:
        raise SkilldeckError(ErrorCode.EXECUTION_ERROR, f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        message = first_error_line(done.stderr)
        raise SkilldeckError(ErrorCode.EXECUTION_ERROR, f"git {args[0]} failed: {message}")
    return done.stdout


def first_error_line(stderr: str) -> str:
    """The line of git's error output that says what went wrong: the first ``fatal:`` or
    ``error:`` line (git's last line is often the tail of a wrapped sentence, such as
    "and the repository exists."), else the first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[0] if lines else "no message"


def check_argument(value: str, what: str) -> None:
    """Refuse a value git would take for an option (``-u…``) or that holds a control
    character.

    Raises:
        SkilldeckError: INVALID_PARAM.
    """
    if not value or value.startswith("-") or any(ord(c) < 32 for c in value):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{what} {value!r} is not usable")


def _local_repo(source: str) -> bool:
    path = Path(source).expanduser()
    return path.is_dir() and (path / ".git").exists()


def fetch_source(source: str, ref: str | None, dest: Path) -> Fetched:
    """Bring ``source`` at ``ref`` into ``dest`` (an empty folder) and say which commit.

    A URL or a local repository is cloned (all refs, no submodules, no hooks) and ``ref``
    (a tag, branch or SHA; a tag wins over a branch of the same name, as in
    :func:`remote_commit`; default the remote HEAD) checked out detached. A local folder
    that is not a repository is copied into ``dest`` (no commit), so what is reviewed and
    installed are the same bytes even if the folder changes meanwhile
    (:func:`~skilldeck.core.install.local_copy.copy_local`: regular files and folders only,
    bounded).

    Raises:
        SkilldeckError: NOT_FOUND for a missing local source, EXECUTION_ERROR when git fails,
            INVALID_PARAM for a source or ref that git would read as an option,
            PERMISSION_DENIED (reason ``unsafe_source``) for a local source that is no
            folder of regular files within the caps.
    """
    check_argument(source, "source")
    if ref:
        check_argument(ref, "--ref")
    if not is_url(source) and not _local_repo(source):
        if ref and Path(source).expanduser().is_dir():
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"{source} is not a git repository: --ref cannot apply"
            )
        copy_local(Path(source).expanduser(), dest)
        return Fetched(dest, None)
    where = source if is_url(source) else str(Path(source).expanduser().resolve())
    run_git(
        ["clone", "--quiet", "--no-checkout", "--no-recurse-submodules", "--", where, str(dest)]
    )
    target = ref or "HEAD"
    if ref and not is_sha(ref):
        for candidate in (f"refs/tags/{ref}", f"origin/{ref}", ref):  # as remote_commit: tags first
            try:
                run_git(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], dest)
            except SkilldeckError:
                continue
            target = candidate
            break
        else:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{source}: no branch, tag or commit {ref!r}")
    try:
        run_git(["checkout", "--quiet", "--detach", target], dest)
    except SkilldeckError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{source}: cannot check out {ref!r}") from exc
    commit = run_git(["rev-parse", "HEAD"], dest).strip()
    return Fetched(dest, commit)


def remote_commit(source: str, ref: str | None) -> str | None:
    """The commit ``ref`` (default HEAD) points at in ``source`` now (``git ls-remote``).

    Returns None for a SHA pin (it never moves) and for a plain folder.
    """
    if ref and is_sha(ref):
        return None
    check_argument(source, "source")
    if ref:
        check_argument(ref, "ref")
    if not is_url(source) and not _local_repo(source):
        return None
    where = source if is_url(source) else str(Path(source).expanduser().resolve())
    out = run_git(["ls-remote", where, ref or "HEAD"], timeout=60.0)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        found[name] = sha
    for name in (
        f"refs/tags/{ref}^{{}}",
        f"refs/tags/{ref}",
        f"refs/heads/{ref}",
        "HEAD",
        ref or "",
    ):
        if name in found:
            return found[name]
    if len(found) == 1:
        return next(iter(found.values()))
    raise SkilldeckError(ErrorCode.NOT_FOUND, f"{source}: no branch or tag {ref!r}")


def clone_history(source: str, dest: Path) -> Path:
    """A bare clone of ``source`` in ``dest`` without file contents where the server allows
    (``--filter=blob:none``): enough to compare folders between commits by tree id.

    Raises:
        SkilldeckError: as :func:`run_git`; INVALID_PARAM for a source read as an option.
    """
    check_argument(source, "source")
    where = source if is_url(source) else str(Path(source).expanduser().resolve())
    run_git(["clone", "--bare", "--quiet", "--filter=blob:none", "--", where, str(dest)])
    return dest


def tree_id(repo: Path, commit: str, subpath: str) -> str | None:
    """The git tree id of the folder ``subpath`` at ``commit`` in ``repo``: equal ids mean
    equal files, modes and links. None when the commit or folder is not there."""
    if not is_sha(commit):
        return None
    sub = subpath.strip("/")
    spec = f"{commit}^{{tree}}" if sub in ("", ".") else f"{commit}:{sub}"
    try:
        return run_git(["rev-parse", "--verify", "--quiet", spec], repo).strip() or None
    except SkilldeckError:
        return None
