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

    [skills.pdf-tools.files]
    "SKILL.md" = "f:5d41…"
    "scripts/extract.sh" = "x:7c2a…"

    [skills.code-review]              # from a well-known index
    source = "https://example.com/.well-known/agent-skills/index.json"
    ref = ""
    commit = ""
    subpath = "."
    sha256 = "…"
    version = "1.0"
    digest = "sha256:c4d5…"
    resolvedIndex = "https://example.com/.well-known/agent-skills/index.json"

``files`` (optional; older lockfiles lack it) holds :func:`file_digest` of every installed
file, so ``skilldeck verify`` can name the file that drifted. Both walk the folder with
:func:`~skilldeck.core.skillfolder.walk`, the walk approvals and reviews use.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from skilldeck.core import skillfolder
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.skillfolder import MARKER as MARKER

LOCK_NAME = "skills-lock.toml"
LOCK_VERSION = 1
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(slots=True)
class LockEntry:
    """One installed skill.

    Attributes:
        name: The skill's name (its folder name under the skills root).
        source: Where it came from (URL, repository or folder, as given).
        ref: The ref asked for ('' for the default branch).
        commit: The resolved commit SHA ('' for a plain folder).
        subpath: The skill folder inside the source (POSIX, ``.`` for the top; '' when a
            ``skills-lock.json`` entry does not say: the folder named ``name``).
        sha256: :func:`tree_hash` of the installed folder.
        files: :func:`file_digest` of each installed file by relative path (may be empty).
        computed_hash: A ``skills-lock.json`` entry's ``computedHash`` ('' otherwise).
        version: For a skill from a well-known index: its SKILL.md's version ('' if none).
        digest: For a skill from a well-known index: ``sha256:…`` of the artifact.
        resolved_index: For a skill from a well-known index: the index URL that answered
            ('' for every other source); ``source`` is the index URL asked for.
    """

    name: str
    source: str
    ref: str = ""
    commit: str = ""
    subpath: str = "."
    sha256: str = ""
    files: dict[str, str] = field(default_factory=dict)
    computed_hash: str = ""
    version: str = ""
    digest: str = ""
    resolved_index: str = ""

    @property
    def indexed(self) -> bool:
        """True for a skill installed from a well-known index."""
        return bool(self.resolved_index)

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (the index fields only for a skill from an index)."""
        data = {
            "name": self.name,
            "source": self.source,
            "ref": self.ref,
            "commit": self.commit,
            "subpath": self.subpath,
            "sha256": self.sha256,
        }
        if self.indexed:
            data.update(version=self.version, digest=self.digest, resolvedIndex=self.resolved_index)
        return data


@dataclass(slots=True)
class Lockfile:
    """The lockfile of one skills root.

    Attributes:
        path: The ``skills-lock.toml`` file (or a ``skills-lock.json``, read only).
        root: The skills folder it describes.
        entries: Locked skills by name.
    """

    path: Path
    root: Path
    entries: dict[str, LockEntry] = field(default_factory=dict)

    @property
    def foreign(self) -> bool:
        """True for a ``skills-lock.json`` (read, never written by skilldeck)."""
        return self.path.suffix == ".json"


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
        files = _files_of(path, name, row.get("files", {}))
        pin = _index_pin(path, name, row)
        lock.entries[name] = LockEntry(name, row["source"], **values, files=files, **pin)
    return lock


def _index_pin(path: Path, name: str, row: dict[str, object]) -> dict[str, str]:
    """The well-known index fields of an entry (``version``, ``digest``,
    ``resolvedIndex``), checked; empty strings for any other entry."""
    pin = {
        "version": str(row.get("version", "")),
        "digest": str(row.get("digest", "")),
        "resolved_index": str(row.get("resolvedIndex", "")),
    }
    if pin["resolved_index"] and not _DIGEST.match(pin["digest"]):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: [skills.{json.dumps(name)}] comes from an index but its digest "
            f"{pin['digest']!r} is not sha256:<64 lowercase hex>; nothing was changed: "
            "fix or delete that entry by hand",
            reason="bad_lock_entry",
        )
    return pin


def _files_of(path: Path, name: str, table: object) -> dict[str, str]:
    """The ``files`` table of an entry, each path checked to stay inside the skill."""
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: [skills.{json.dumps(name)}.files] must map file paths to digests",
            reason="bad_lock_entry",
        )
    for rel in table:
        if not inside(rel):
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"{path}: [skills.{json.dumps(name)}.files] names {rel!r}, outside the skill; "
                "nothing was changed: fix or delete that entry by hand",
                reason="bad_lock_entry",
            )
    return dict(table)


def inside(rel: str) -> bool:
    """True when the POSIX path ``rel`` stays inside the folder it is relative to."""
    sub = PurePosixPath(rel)
    return bool(rel) and not sub.is_absolute() and ".." not in sub.parts and "\\" not in rel


def _check_entry(path: Path, name: str, subpath: str) -> None:
    """Refuse an entry whose name is no skill name (it names a folder under the skills root
    that ``remove`` and ``update`` replace or delete: ``../../victim`` must never reach
    them) or whose subpath leaves its source.

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``bad_lock_entry``) saying which entry.
    """
    from skilldeck.core.validate import name_problems

    problems = [message for _, message in name_problems(name)]
    if not inside(subpath or "."):
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
        if entry.files:
            lines += ["", f"[skills.{_toml_string(name)}.files]"]
            lines += [
                f"{_toml_string(k)} = {_toml_string(v)}" for k, v in sorted(entry.files.items())
            ]
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
    """Files (and symlinks, FIFOs, devices) under ``folder``, POSIX paths relative to it,
    sorted, as :func:`~skilldeck.core.skillfolder.walk` lists them (``.git`` and the sync
    marker left out; symlinked folders named, not entered)."""
    return [entry.rel for entry in skillfolder.walk(folder).entries]


def _kind_and_data(path: Path) -> tuple[str, bytes]:
    """``f`` / ``x`` (executable) and the SHA-256 of the bytes, ``l`` and the link target,
    or ``o`` (a FIFO or device: named, never read)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return "l", os.readlink(path).encode("utf-8", "surrogateescape")
    if not stat.S_ISREG(info.st_mode):
        return "o", b""
    kind = "x" if info.st_mode & 0o111 else "f"
    return kind, hashlib.sha256(path.read_bytes()).digest()


def tree_hash(folder: Path) -> str:
    """SHA-256 over every file of ``folder`` as :func:`tree_files` lists it: its relative
    path, whether it is executable, and the SHA-256 of its bytes (a symlink: of its
    target). Independent of timestamps and file order; unambiguous, as a path cannot hold
    the NUL that ends it and each file adds a fixed-length digest."""
    digest = hashlib.sha256()
    for rel in tree_files(folder):
        kind, data = _kind_and_data(folder / rel)
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0")
        digest.update(hashlib.sha256(data).digest() if kind == "l" else data)
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """``KIND:HEX`` for one file: its kind as in :func:`tree_hash` and a SHA-256 of what
    :func:`tree_hash` reads of it (a chmod +x or a retargeted link changes it too)."""
    kind, data = _kind_and_data(path)
    return f"{kind}:{hashlib.sha256(data).hexdigest()}"


def tree_digests(folder: Path) -> dict[str, str]:
    """:func:`file_digest` of every file :func:`tree_hash` covers, by relative path."""
    return {rel: file_digest(folder / rel) for rel in tree_files(folder)}
