"""Remote skill entries: the extension's ``Skill`` objects, checked, and their search
documents.

An entry is taken only when it is safe to act on: a ``skill://<skill-path>/SKILL.md`` URI
whose last segment is the frontmatter ``name`` (a valid skill name), a ``description``,
and a complete manifest within the extension's limits (512 files, 16 MiB) whose every file
is under the skill path at a plain relative path (no ``..``, no absolute path, no control
characters) with a ``sha256:`` digest and a size. The manifest (``HEX  path`` lines sorted
by path, the shape local approvals pin) and its digest are what an approval binds to.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from skilldeck.core import skillfolder
from skilldeck.core.discovery.frontmatter import SKILL_FILE
from skilldeck.core.model import Skill

SCHEME = "skill://"
EXTENSION_ID = "io.modelcontextprotocol/skills"
"""The Skills extension (SEP-2640): a remote must declare it; ``serve`` declares it."""
MAX_FILES = 512
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""The extension's per-skill limits: a larger entry is refused here, and a larger skill
is not served (:mod:`skilldeck.core.loader.manifest`)."""
DOC_ROOT = PurePosixPath("/remote")
"""Search documents of remote skills have SKILL.md paths under this (never read)."""
_SHA = re.compile(r"^sha256:([0-9a-f]{64})$")
_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._-]+$")
"""A segment of a ``<skill-path>`` (names and ``<source>.<hash>`` prefixes; no spaces)."""
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """One file of a remote entry's manifest.

    Attributes:
        rel: Its POSIX path inside the skill.
        uri: Its ``skill://`` URI.
        sha256: Hex SHA-256 the remote states.
        size: Bytes the remote states.
    """

    rel: str
    uri: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """A remote's entry of one skill (a ``skills/list`` or ``skills/get`` item).

    Attributes:
        label: The remote's label.
        skill_path: The ``<skill-path>`` of its URI (last segment: the name).
        frontmatter: Its frontmatter as sent.
        files: Its manifest, sorted by path (SKILL.md included).
    """

    label: str
    skill_path: str
    frontmatter: dict[str, Any]
    files: tuple[RemoteFile, ...]

    @property
    def name(self) -> str:
        """The skill's own name (last segment of its path)."""
        return self.skill_path.rsplit("/", 1)[-1]

    @property
    def qualified(self) -> str:
        """``label:<skill-path>``: its name here."""
        return f"{self.label}:{self.skill_path}"

    @property
    def uri(self) -> str:
        """The URI of its SKILL.md."""
        return f"{SCHEME}{self.skill_path}/{SKILL_FILE}"

    @property
    def description(self) -> str:
        """Its frontmatter description."""
        return str(self.frontmatter.get("description", ""))

    @property
    def manifest(self) -> str:
        """The :mod:`~skilldeck.core.skillfolder` manifest of its files (the shape local
        approvals pin)."""
        return skillfolder.manifest((f.rel, f.sha256) for f in self.files)

    @property
    def digest(self) -> str:
        """Hex SHA-256 of :attr:`manifest`: what an approval pins."""
        return skillfolder.manifest_digest(self.manifest)

    def file(self, rel: str) -> RemoteFile | None:
        """The manifest file at ``rel``, or None."""
        return next((f for f in self.files if f.rel == rel), None)


def parse_entry(label: str, data: object) -> RemoteEntry:
    """Check one ``Skill`` object of the extension and turn it into an entry.

    Raises:
        ValueError: Why it is not usable (bad URI, name, digest, path, limits).
    """
    if not isinstance(data, dict):
        raise ValueError("entry is not an object")
    uri, front, resources = data.get("uri"), data.get("frontmatter"), data.get("resources")
    if not isinstance(uri, str) or not uri.startswith(SCHEME) or not uri.endswith(f"/{SKILL_FILE}"):
        raise ValueError("uri is not skill://<path>/SKILL.md")
    skill_path = uri[len(SCHEME) : -len(SKILL_FILE) - 1]
    segments = skill_path.split("/")
    if not skill_path or not all(
        _PATH_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments
    ):
        raise ValueError(f"bad skill path {skill_path[:80]!r}")
    if not isinstance(front, dict):
        raise ValueError(f"{skill_path}: frontmatter is not an object")
    name = segments[-1]
    if front.get("name") != name or not _NAME.fullmatch(name):
        raise ValueError(f"{skill_path}: name {str(front.get('name'))[:80]!r} does not match")
    if not isinstance(front.get("description"), str):
        raise ValueError(f"{skill_path}: no description")
    if not isinstance(resources, list) or not 0 < len(resources) <= MAX_FILES:
        if resources == "dynamic":
            raise ValueError(f"{skill_path}: dynamic resources cannot be verified (declined)")
        raise ValueError(f"{skill_path}: resources is not a list of 1-{MAX_FILES} files")
    prefix = f"{SCHEME}{skill_path}/"
    files: dict[str, RemoteFile] = {}
    for item in resources:
        if not isinstance(item, dict):
            raise ValueError(f"{skill_path}: a resource is not an object")
        r_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        found = _SHA.fullmatch(digest) if isinstance(digest, str) else None
        if not isinstance(r_uri, str) or not r_uri.startswith(prefix) or found is None:
            raise ValueError(f"{skill_path}: a resource has a bad uri or digest")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"{skill_path}: a resource has a bad size")
        rel = _safe_rel(unquote(r_uri[len(prefix) :]))
        if rel is None or rel in files:
            raise ValueError(f"{skill_path}: a resource path is unsafe or listed twice")
        files[rel] = RemoteFile(rel, r_uri, found.group(1), size)
    if SKILL_FILE not in files:
        raise ValueError(f"{skill_path}: SKILL.md is not in its resources")
    if sum(f.size for f in files.values()) > MAX_TOTAL_BYTES:
        raise ValueError(f"{skill_path}: over {MAX_TOTAL_BYTES} bytes")
    ordered = tuple(files[rel] for rel in sorted(files))
    return RemoteEntry(label, skill_path, front, ordered)


def _safe_rel(rel: str) -> str | None:
    """``rel`` when it is a plain relative POSIX path (no ``..``, no absolute, no name
    :func:`~skilldeck.core.skillfolder.name_problem` refuses)."""
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts):
        return None
    if skillfolder.name_problem(rel) is not None:
        return None
    return rel


def document(entry: RemoteEntry) -> Skill:
    """The search document of a remote skill: a Skill parsed from its frontmatter, named
    ``label:<skill-path>``, with a SKILL.md path under :data:`DOC_ROOT` (nothing to read:
    its body is not indexed)."""
    from skilldeck.core.discovery.frontmatter import parse_bytes

    text = "---\n" + json.dumps(entry.frontmatter, ensure_ascii=False) + "\n---\n"
    path = Path(str(DOC_ROOT / entry.label / entry.skill_path / SKILL_FILE))
    skill = parse_bytes(text.encode("utf-8"), path)
    return dataclasses.replace(skill, name=entry.qualified, description=entry.description)
