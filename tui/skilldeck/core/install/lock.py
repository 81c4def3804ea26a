"""``skills-lock.toml``: what was installed, from where, at which commit, with which bytes.

The file sits beside the skills folder it describes (``~/.agents/skills-lock.toml`` for
``~/.agents/skills``). It is read with :mod:`tomllib` and written by a tiny writer for its
fixed shape, atomically (a temporary file, then a rename)::

    version = 1

    [skills.pdf-tools]
    source = "https://github.com/acme/skills.git"
    ref = "v1.2.0"
    commit = "3f2c…"
    subpath = "skills/pdf-tools"
    sha256 = "9a0e…"
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from skilldeck.core.errors import ErrorCode, SkilldeckError

LOCK_NAME = "skills-lock.toml"
LOCK_VERSION = 1
MARKER = ".skilldeck-sync"
"""File :mod:`~skilldeck.core.install.sync` leaves in a copy it made (not hashed)."""
_NOT_HASHED = frozenset({".git", MARKER})


@dataclass(slots=True)
class LockEntry:
    """One installed skill.

    Attributes:
        name: The skill's name (its folder name under the skills root).
        source: Where it came from (URL, repository or folder, as given).
        ref: The ref asked for ('' for the default branch).
        commit: The resolved commit SHA ('' for a plain folder).
        subpath: The skill folder inside the source (POSIX, ``.`` for the top).
        sha256: :func:`tree_hash` of the installed folder.
    """

    name: str
    source: str
    ref: str = ""
    commit: str = ""
    subpath: str = "."
    sha256: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "source": self.source,
            "ref": self.ref,
            "commit": self.commit,
            "subpath": self.subpath,
            "sha256": self.sha256,
        }


@dataclass(slots=True)
class Lockfile:
    """The lockfile of one skills root.

    Attributes:
        path: The ``skills-lock.toml`` file.
        root: The skills folder it describes.
        entries: Locked skills by name.
    """

    path: Path
    root: Path
    entries: dict[str, LockEntry] = field(default_factory=dict)


def lock_path_for(root: Path) -> Path:
    """The lockfile beside the skills folder ``root``."""
    return root.parent / LOCK_NAME


def read_lock(root: Path) -> Lockfile:
    """Read the lockfile of the skills folder ``root`` (an absent file is an empty one).

    Raises:
        SkilldeckError: INVALID_PARAM when the file is not a lockfile this version reads.
    """
    path = lock_path_for(root)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Lockfile(path, root)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{path}: unreadable lockfile: {exc}"
        ) from exc
    version = data.get("version", LOCK_VERSION)
    if version != LOCK_VERSION:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{path}: lockfile version {version!r} is not supported"
        )
    lock = Lockfile(path, root)
    skills = data.get("skills", {})
    if not isinstance(skills, dict):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: [skills] must be a table")
    for name, row in skills.items():
        if not isinstance(row, dict) or not isinstance(row.get("source"), str):
            raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: skill {name!r} has no source")
        values = {k: str(row.get(k, "")) for k in ("ref", "commit", "subpath", "sha256")}
        _check_entry(path, name, values["subpath"])
        lock.entries[name] = LockEntry(name, row["source"], **values)
    return lock


def _check_entry(path: Path, name: str, subpath: str) -> None:
    """Refuse an entry whose name is no skill name (it names a folder under the skills root
    that ``remove`` and ``update`` replace or delete: ``../../victim`` must never reach
    them) or whose subpath leaves its source.

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``bad_lock_entry``) saying which entry.
    """
    from skilldeck.core.validate import name_problems

    problems = [message for _, message in name_problems(name)]
    sub = PurePosixPath(subpath or ".")
    if sub.is_absolute() or ".." in sub.parts or "\\" in subpath:
        problems.append(f"subpath {subpath!r} leaves the source")
    if problems:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: entry [skills.{json.dumps(name)}] is refused ({'; '.join(problems)}); "
            "nothing was changed: fix or delete that entry by hand",
            reason="bad_lock_entry",
        )


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON escapes are TOML escapes; DEL is escaped too)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_lock(lock: Lockfile) -> str:
    """The text of ``lock`` as written to disk (skills sorted by name)."""
    lines = [
        "# Written by skilldeck (skilldeck add / update / remove). Commit this file;",
        "# `skilldeck check` verifies the installed skills against it.",
        f"version = {LOCK_VERSION}",
    ]
    for name in sorted(lock.entries):
        entry = lock.entries[name]
        lines += ["", f"[skills.{_toml_string(name)}]"]
        for key, value in entry.to_dict().items():
            if key != "name":
                lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"


def write_lock(lock: Lockfile) -> None:
    """Write ``lock`` atomically (temporary file in the same folder, fsync, rename)."""
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".skills-lock-", suffix=".tmp", dir=lock.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_lock(lock))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, lock.path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def tree_files(folder: Path) -> list[str]:
    """Files (and symlinks) under ``folder``, POSIX paths relative to it, sorted; ``.git``
    and the sync marker are left out; symlinked folders are not entered."""
    found: list[str] = []
    stack = [(folder, "")]
    while stack:
        current, prefix = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.name in _NOT_HASHED:
                    continue
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), rel + "/"))
                else:
                    found.append(rel)
    return sorted(found)


def tree_hash(folder: Path) -> str:
    """SHA-256 over every file of ``folder``: its relative path, whether it is executable,
    and its bytes (a symlink: its target). Independent of timestamps and file order."""
    digest = hashlib.sha256()
    for rel in tree_files(folder):
        path = folder / rel
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            kind, data = "l", os.readlink(path).encode("utf-8", "surrogateescape")
        elif not stat.S_ISREG(info.st_mode):
            kind, data = "o", b""  # a FIFO or device: named, never read
        else:
            kind = "x" if info.st_mode & 0o111 else "f"
            data = hashlib.sha256(path.read_bytes()).digest()
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0")
        digest.update(hashlib.sha256(data).digest() if kind == "l" else data)
    return digest.hexdigest()
