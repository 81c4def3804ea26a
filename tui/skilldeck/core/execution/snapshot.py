"""A skill folder's files as one pinned whole: what an approval covers and what runs.

An approval or allowlist line pins the **digest of every file in the skill folder**, not one
script: a script can import a sibling module, source a shell library, or be steered by a
``.pth`` file, and each of those is code the operator must have reviewed. The digest is the
SHA-256 of the folder's *manifest*, one line per file in ``sha256sum`` form (the per-file
digests install locks and the MCP skills extension use)::

    9f86d08…  SKILL.md
    2c26b46…  scripts/helper.py

sorted by path, so ``sha256sum -c`` can check a folder against it. Every file is read under
the confinement rule (:func:`~skilldeck.core.confined.read_confined`); ``.git`` is left out
and symlinked folders are not entered. What runs is a private copy written from the very
bytes that were hashed (:meth:`Snapshot.materialize`), so an edit racing the run cannot
slip in code nobody reviewed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.confined import read_confined
from skilldeck.core.errors import ErrorCode, SkilldeckError

FILE_CAP = 16 * 1024 * 1024
"""Largest single file of a skill that can run (bytes)."""
TOTAL_CAP = 64 * 1024 * 1024
"""Largest skill folder that can run, all files together (bytes)."""
MAX_FILES = 5000
"""Most files a skill folder that can run may hold."""
SKIPPED = frozenset({".git"})
"""Folder entries that are neither pinned nor copied."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a snapshot.

    Attributes:
        rel: Its POSIX path relative to the skill folder.
        sha256: Hex SHA-256 of ``data``.
        data: The bytes read.
        executable: Whether the file had an execute bit.
    """

    rel: str
    sha256: str
    data: bytes
    executable: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every file of one skill folder, read once and hashed.

    Attributes:
        folder: The skill folder it was read from.
        files: The files, sorted by path.
    """

    folder: Path
    files: tuple[SkillFile, ...]

    @property
    def manifest(self) -> str:
        """The ``sha256sum``-style manifest: ``HEX  path`` per file, sorted by path."""
        return "".join(f"{f.sha256}  {f.rel}\n" for f in self.files)

    @property
    def digest(self) -> str:
        """Hex SHA-256 of :attr:`manifest`: the skill's content digest."""
        return hashlib.sha256(self.manifest.encode("utf-8", "surrogateescape")).hexdigest()

    def file(self, rel: str) -> SkillFile | None:
        """The file at ``rel`` (POSIX, relative), or None."""
        for entry in self.files:
            if entry.rel == rel:
                return entry
        return None

    def materialize(self, target: Path) -> None:
        """Write the files into ``target`` (an empty folder), read-only, from the hashed
        bytes; folders are left readable and searchable by everyone (a sandbox may run the
        copy as another user)."""
        for entry in self.files:
            path = target.joinpath(*entry.rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(entry.data)
            path.chmod(0o555 if entry.executable else 0o444)
        for folder, _dirs, _files in os.walk(target):
            Path(folder).chmod(0o555)


def snapshot_skill(folder: Path) -> Snapshot:
    """Read and hash every file of the skill ``folder``.

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``confinement`` or ``too_large``) when a
            file breaks the confinement rule, or the folder is larger than the caps.
    """
    files: list[SkillFile] = []
    total = 0
    for rel in _walk(folder):
        try:
            read = read_confined(folder / rel, folder, cap=FILE_CAP, label=rel)
        except SkilldeckError as exc:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"the skill folder cannot be pinned: {exc.message}",
                reason="confinement",
            ) from exc
        total += len(read.data)
        if read.truncated or total > TOTAL_CAP or len(files) >= MAX_FILES:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"the skill folder is too large to run (at most {MAX_FILES} files, "
                f"{FILE_CAP} bytes each and {TOTAL_CAP} bytes in all)",
                reason="too_large",
            )
        mode = os.stat(folder / rel).st_mode
        digest = hashlib.sha256(read.data).hexdigest()
        files.append(SkillFile(rel, digest, read.data, bool(mode & stat.S_IXUSR)))
    return Snapshot(folder, tuple(files))


def _walk(folder: Path) -> list[str]:
    """Every non-folder entry under ``folder``, POSIX-relative and sorted; symlinked
    folders are not entered and :data:`SKIPPED` names are left out."""
    found: list[str] = []
    stack = [(str(folder), "")]
    while stack:
        current, prefix = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"cannot list {prefix or '.'} of the skill folder: {exc.strerror}",
                reason="confinement",
            ) from exc
        for entry in entries:
            if entry.name in SKIPPED:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{prefix}{entry.name}/"))
            elif not (entry.is_symlink() and os.path.isdir(entry.path)):
                found.append(prefix + entry.name)
    return sorted(found)


def parse_manifest(text: str) -> dict[str, str]:
    """``{path: sha256}`` from a manifest (lines that are not ``HEX  path`` are skipped)."""
    files: dict[str, str] = {}
    for line in text.splitlines():
        digest, sep, rel = line.partition("  ")
        if sep and len(digest) == 64 and rel:
            files[rel] = digest.lower()
    return files


def manifest_changes(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str]]:
    """What changed from manifest ``old`` to ``new``: ``(change, path)`` pairs, change one
    of ``added``, ``removed``, ``changed``, sorted by path."""
    changes = [("removed", rel) for rel in old if rel not in new]
    changes += [("added", rel) for rel in new if rel not in old]
    changes += [("changed", rel) for rel in new if rel in old and old[rel] != new[rel]]
    return sorted(changes, key=lambda change: change[1])


def manifests_dir() -> Path:
    """Where manifests of pinned skills are kept (``SKILLDECK_HOME/manifests``), named by
    digest, so a review can say which files changed since a request or approval."""
    from skilldeck.core.config import home_dir

    return home_dir() / "manifests"


def remember_manifest(snapshot: Snapshot) -> None:
    """Keep ``snapshot``'s manifest under its digest (best effort: a full disk or a
    read-only home only costs the file-by-file comparison later)."""
    path = manifests_dir() / f"{snapshot.digest}.txt"
    if path.is_file():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(snapshot.manifest, encoding="utf-8", errors="surrogateescape")
        os.replace(tmp, path)
    except OSError:
        return


def recall_manifest(digest: str) -> dict[str, str] | None:
    """The manifest kept for ``digest`` as ``{path: sha256}``, or None when unknown here
    (or when the file no longer hashes to ``digest``: it was tampered with)."""
    if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
        return None
    try:
        raw = (manifests_dir() / f"{digest}.txt").read_bytes()
    except OSError:
        return None
    if hashlib.sha256(raw).hexdigest() != digest:
        return None
    return parse_manifest(raw.decode("utf-8", "surrogateescape"))
