"""Skill entries of the MCP Skills extension: paths, frontmatter and file manifests.

The extension (``io.modelcontextprotocol/skills``) describes each skill a server serves as
an *entry*: the ``skill://`` URI of its SKILL.md, the SKILL.md frontmatter rendered as JSON,
and the complete manifest of its files (``uri``, ``sha256:`` digest and ``size`` of every
file). This module builds those entries from the catalog; it imports no MCP code, so the
server (:mod:`skilldeck.mcp.skills_extension`) only adapts it to the wire.

Paths. A skill is at ``skill://<skill-path>/<file>`` and the last segment of
``<skill-path>`` is always the skill's name. The skill that wins its name in the catalog has
the bare path ``<name>`` (the URIs ``resources/list`` already gives); every other served
skill with that name (one in another root, shadowed there) gets a prefixed path
``<source>.<8 hex>/<name>``, the hex a hash of its folder, so same-named skills from
different roots stay distinct and addressable instead of one silently hiding the other. A
prefix holds a ``.``, which no valid skill name has, so a prefixed path never collides with
a winner's files.

Files. The manifest is the folder's :func:`~skilldeck.core.execution.snapshot.snapshot_skill`
(every file read once under the confinement rule, ``.git`` left out), and the bytes a
``resources/read`` returns come from a snapshot too, so what a host verifies is what it
gets. The frontmatter is parsed from the very SKILL.md bytes that were hashed.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import math
import mimetypes
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from skilldeck.core.discovery.frontmatter import SKILL_FILE
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import Snapshot, snapshot_skill
from skilldeck.core.model import Skill
from skilldeck.core.remote.entries import MAX_FILES, MAX_TOTAL_BYTES, SCHEME
from skilldeck.core.validate import name_problems

DIGEST_PREFIX = "sha256:"
DIRECTORY_MIME = "inode/directory"


@dataclass(frozen=True, slots=True)
class ManifestFile:
    """One file of a skill entry.

    Attributes:
        rel: POSIX path relative to the skill folder.
        uri: Its ``skill://`` URI.
        digest: ``sha256:`` and 64 lowercase hex digits of its bytes.
        size: Its length in bytes.
    """

    rel: str
    uri: str
    digest: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        """The ``SkillResource`` object of the extension."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """The extension's entry of one skill, with the snapshot it was built from.

    Attributes:
        skill_path: Its ``<skill-path>`` (last segment: the name).
        skill: The catalog skill.
        frontmatter: The SKILL.md frontmatter as a JSON-ready object.
        files: Every file, sorted by path, SKILL.md included.
        snapshot: The bytes the digests cover.
    """

    skill_path: str
    skill: Skill
    frontmatter: dict[str, Any]
    files: tuple[ManifestFile, ...]
    snapshot: Snapshot

    @property
    def uri(self) -> str:
        """The URI of its SKILL.md."""
        return file_uri(self.skill_path, SKILL_FILE)

    def to_dict(self) -> dict[str, Any]:
        """The ``Skill`` object of the extension (``uri``, ``frontmatter``, ``resources``)."""
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [f.to_dict() for f in self.files],
        }

    def data(self, rel: str) -> bytes | None:
        """The snapshot bytes of the file at ``rel``, or None when it is not listed."""
        found = self.snapshot.file(rel)
        return None if found is None else found.data


@dataclass(frozen=True, slots=True)
class Child:
    """A direct child of a directory resource.

    Attributes:
        name: Its last path segment.
        uri: Its URI (no trailing slash for a directory).
        mime: ``inode/directory`` for a directory, else a media type guessed from the name.
        size: Bytes of a file (None for a directory).
    """

    name: str
    uri: str
    mime: str
    size: int | None = None


def servable(skill: Skill) -> bool:
    """True when the extension may serve ``skill``: a model may load it (enabled, not
    hidden, valid) and its name follows the Agent Skills naming rules (the URI's last
    segment must). Shadowed skills are served too, under a prefixed path."""
    return skill.enabled and not skill.hidden and skill.valid and not name_problems(skill.name)


def skill_paths(skills: Iterable[Skill]) -> dict[str, Skill]:
    """The servable skills of ``skills`` keyed by their ``<skill-path>``, sorted by path.

    A skill winning its name is at ``<name>``; a shadowed one at
    ``<source>.<8 hex of its folder>/<name>``.
    """
    found: dict[str, Skill] = {}
    for skill in skills:
        if servable(skill):
            found[path_of(skill)] = skill
    return dict(sorted(found.items()))


def path_of(skill: Skill) -> str:
    """The ``<skill-path>`` of one skill (see :func:`skill_paths`)."""
    if not skill.shadowed:
        return skill.name
    folder = str(skill.base_dir).encode("utf-8", "surrogateescape")
    tag = hashlib.sha256(folder).hexdigest()[:8]
    return f"{skill.source.value}.{tag}/{skill.name}"


def file_uri(skill_path: str, rel: str) -> str:
    """``skill://<skill-path>/<rel>`` with the file path percent-encoded as needed."""
    return f"{SCHEME}{skill_path}/{quote(rel, safe='/')}"


def directory_uri(skill_path: str, rel: str = "") -> str:
    """The URI of a directory of a skill (its root when ``rel`` is empty)."""
    return f"{SCHEME}{skill_path}" + (f"/{quote(rel, safe='/')}" if rel else "")


def split_uri(uri: str, paths: Mapping[str, Skill]) -> tuple[str, str] | None:
    """``(skill-path, rel)`` of a ``skill://`` URI under a served skill, ``rel`` decoded
    and empty for the skill root; None when no served skill holds it."""
    if not uri.startswith(SCHEME):
        return None
    segments = uri[len(SCHEME) :].split("/")
    width = 2 if "." in segments[0] else 1
    skill_path = "/".join(segments[:width])
    if len(segments) < width or skill_path not in paths:
        return None
    rel = unquote("/".join(segments[width:]))
    return skill_path, rel


def build_entry(skill_path: str, skill: Skill) -> SkillEntry:
    """Snapshot ``skill`` and build its entry.

    Raises:
        SkilldeckError: PERMISSION_DENIED when the folder breaks the confinement rule or the
            extension's limits, holds a file name that cannot be pinned (not UTF-8, a
            control character: ``unsafe_name``), or the SKILL.md on disk no longer parses
            to this skill.
    """
    from skilldeck.core.discovery.frontmatter import parse_bytes

    snapshot = discovered_files(snapshot_skill(skill.base_dir), skill)
    skill_md = snapshot.file(skill.path.name)
    if skill_md is None or skill.path.name != SKILL_FILE:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} has no {SKILL_FILE} file to serve",
            reason="not_servable",
        )
    total = sum(len(f.data) for f in snapshot.files)
    if len(snapshot.files) > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} has {len(snapshot.files)} files and {total} bytes, over "
            f"the extension's limits ({MAX_FILES} files, {MAX_TOTAL_BYTES} bytes)",
            reason="too_large",
        )
    parsed = parse_bytes(skill_md.data, skill.path, source=skill.source, root=skill.root)
    front = parsed.frontmatter
    if parsed.name != skill.name or front.get("name") != skill.name:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} changed on disk since it was discovered",
            reason="changed",
        )
    if not isinstance(front.get("description"), str):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} has no description string",
            reason="not_servable",
        )
    files = tuple(
        ManifestFile(f.rel, file_uri(skill_path, f.rel), DIGEST_PREFIX + f.sha256, len(f.data))
        for f in snapshot.files
    )
    frontmatter = json_value(front)
    assert isinstance(frontmatter, dict)
    return SkillEntry(skill_path, skill, frontmatter, files, snapshot)


def discovered_files(snapshot: Snapshot, skill: Skill) -> Snapshot:
    """Only the files discovery listed (the SKILL.md and :attr:`Skill.resources`): a file
    added after discovery is not served until a refresh lists it, and what discovery
    leaves out (hidden files, ``_`` folders) is never served.

    Raises:
        SkilldeckError: PERMISSION_DENIED when discovery's listing was cut short (the
            manifest could not be complete).
    """
    if skill.resources_truncated:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} has more files than discovery lists: over the limits of "
            "what is served",
            reason="too_large",
        )
    listed = {skill.path.name, *skill.resources}
    kept = tuple(f for f in snapshot.files if f.rel in listed)
    return Snapshot(snapshot.folder, kept)


def exact_text(data: bytes) -> str | None:
    """``data`` as UTF-8 text, byte for byte (a BOM kept, so its digest still holds), or
    None when it is binary (a NUL, or not strict UTF-8)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def json_value(value: Any) -> Any:
    """A YAML value as JSON: mappings and sequences recursively (keys as strings), dates
    and times in ISO 8601, binary as base64, sets as sorted lists, non-finite floats as
    their YAML spelling; everything else as is."""
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((json_value(v) for v in value), key=repr)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    return value


def mime_of(rel: str) -> str:
    """The media type of a skill file: ``text/markdown`` for ``.md``, else a guess."""
    if rel.lower().endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(rel.rsplit("/", 1)[-1])[0] or "application/octet-stream"


def children(entry: SkillEntry, rel_dir: str) -> list[Child] | None:
    """The direct children of the directory ``rel_dir`` of a skill (``""``: its root),
    files and subdirectories sorted by name; None when no such directory holds a file."""
    prefix = f"{rel_dir}/" if rel_dir else ""
    files: dict[str, ManifestFile] = {}
    folders: set[str] = set()
    for item in entry.files:
        if not item.rel.startswith(prefix):
            continue
        head, sep, _rest = item.rel[len(prefix) :].partition("/")
        if sep:
            folders.add(head)
        else:
            files[head] = item
    if not files and not folders:
        return None
    found = [Child(n, f.uri, mime_of(f.rel), f.size) for n, f in files.items()]
    found += [
        Child(n, directory_uri(entry.skill_path, prefix + n), DIRECTORY_MIME) for n in folders
    ]
    return sorted(found, key=lambda c: c.name)


def prefix_children(paths: Iterable[str], prefix: str) -> list[Child] | None:
    """The skill roots under an organizational ``prefix`` (``user.1a2b3c4d``) as directory
    children; None when no served skill has that prefix."""
    names = sorted(p.split("/", 1)[1] for p in paths if p.startswith(f"{prefix}/"))
    if not names:
        return None
    return [Child(n, directory_uri(f"{prefix}/{n}"), DIRECTORY_MIME) for n in names]
