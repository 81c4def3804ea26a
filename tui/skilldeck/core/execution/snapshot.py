"""A skill folder's files as one pinned whole: what an approval covers and what runs.

An approval or allowlist line pins the **digest of every file in the skill folder**, not one
script: a script can import a sibling module, source a shell library, or be steered by a
``.pth`` file, and each of those is code the operator must have reviewed. The digest is the
SHA-256 of the folder's *manifest* (:mod:`skilldeck.core.skillfolder`: one ``sha256sum``
line per file, sorted by path, names that could forge a line escaped), the per-file digests
install locks and the MCP skills extension use. The folder is walked by
:func:`~skilldeck.core.skillfolder.walk` (one skip list; a name holding a control character
is refused, reason ``unsafe_name``) and every file is read under the confinement rule
(:func:`~skilldeck.core.confined.read_confined`). What runs is a private copy written from
the very bytes that were hashed (:meth:`Snapshot.materialize`), so an edit racing the run
cannot slip in code nobody reviewed; compiled files (bytecode, native libraries) are pinned
by the digest but never copied, so a run uses only the source the reviewer could read.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core import skillfolder
from skilldeck.core.confined import read_confined
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.skillfolder import manifest_changes as manifest_changes
from skilldeck.core.skillfolder import parse_manifest as parse_manifest

FILE_CAP = 16 * 1024 * 1024
"""Largest single file of a skill that can run (bytes)."""
TOTAL_CAP = 64 * 1024 * 1024
"""Largest skill folder that can run, all files together (bytes)."""
MAX_FILES = 5000
"""Most files a skill folder that can run may hold."""


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
        """The ``sha256sum``-style manifest (:func:`~skilldeck.core.skillfolder.manifest`)."""
        return skillfolder.manifest((f.rel, f.sha256) for f in self.files)

    @property
    def digest(self) -> str:
        """Hex SHA-256 of :attr:`manifest`: the skill's content digest."""
        return skillfolder.manifest_digest(self.manifest)

    def file(self, rel: str) -> SkillFile | None:
        """The file at ``rel`` (POSIX, relative), or None."""
        for entry in self.files:
            if entry.rel == rel:
                return entry
        return None

    @property
    def compiled(self) -> list[str]:
        """Files holding compiled code (:func:`~skilldeck.core.skillfolder.compiled`):
        pinned by the digest, never copied into a run."""
        return [f.rel for f in self.files if skillfolder.compiled(f.rel, f.data[:4])]

    def materialize(self, target: Path) -> None:
        """Write the files into ``target`` (an empty folder), read-only, from the hashed
        bytes, leaving out :attr:`compiled` files (a run uses only source a reviewer could
        read); folders are left readable and searchable by everyone (a sandbox may run the
        copy as another user)."""
        skipped = set(self.compiled)
        folders = {target}
        for entry in self.files:
            if entry.rel in skipped:
                continue
            path = target.joinpath(*entry.rel.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            folders.update(path.parents[: len(path.relative_to(target).parts) - 1])
            path.write_bytes(entry.data)
            path.chmod(0o555 if entry.executable else 0o444)
        for folder in folders:
            folder.chmod(0o555)


def snapshot_skill(folder: Path) -> Snapshot:
    """Read and hash every file of the skill ``folder``.

    Raises:
        SkilldeckError: PERMISSION_DENIED, reason ``unsafe_name`` when a path holds a
            control character (:func:`~skilldeck.core.skillfolder.name_problem`),
            ``confinement`` when a file breaks the confinement rule, ``too_large`` when the
            folder is larger than the caps.
    """
    listing = skillfolder.walk(folder, limit=MAX_FILES * 4)
    listing.require_safe()
    rels = [e.rel for e in listing.entries if e.kind != skillfolder.FOLDER_LINK]
    if listing.truncated or len(rels) > MAX_FILES:
        raise _too_large()
    files: list[SkillFile] = []
    total = 0
    for rel in rels:
        try:
            read = read_confined(folder / rel, folder, cap=FILE_CAP, label=rel)
        except SkilldeckError as exc:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"the skill folder cannot be pinned: {exc.message}",
                reason="confinement",
            ) from exc
        total += len(read.data)
        if read.truncated or total > TOTAL_CAP:
            raise _too_large()
        mode = os.stat(folder / rel).st_mode
        digest = hashlib.sha256(read.data).hexdigest()
        files.append(SkillFile(rel, digest, read.data, bool(mode & stat.S_IXUSR)))
    return Snapshot(folder, tuple(files))


def _too_large() -> SkilldeckError:
    return SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"the skill folder is too large to run (at most {MAX_FILES} files, "
        f"{FILE_CAP} bytes each and {TOTAL_CAP} bytes in all)",
        reason="too_large",
    )


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
