"""The Agent Skills well-known discovery index (``/.well-known/agent-skills/index.json``).

:func:`read_index` fetches an index and keeps the entries this client can use (schema
0.2.0 only: any other ``$schema`` stops it; an entry of an unknown ``type`` or with a bad
field is skipped with a warning). :func:`stage_entry` fetches one entry's artifact,
verifies its ``sha256`` digest before anything else looks at it, and lays it out as
``<dest>/SKILL.md…`` (a ``skill-md`` file, or an archive unpacked by
:mod:`~skilldeck.core.install.archive`). Every fetch goes through :func:`skilldeck.core.web.get`.

An index served from a public address may not lead this client to this machine or a
private network: an entry whose host is spelled as such is skipped with a warning, and its
artifact is fetched with ``public_only`` (the address the name resolves to is checked, and
connected to); a redirect from a public address to an internal one is refused too. An index
the user serves on this machine (a local ``http.server``, tests) may point there.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.archive import FILE_CAP, TOTAL_CAP, archive_kind, unpack
from skilldeck.core.web import names_internal

SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
"""The only index schema this client reads."""
INDEX_PATH = "/.well-known/agent-skills/index.json"
INDEX_CAP = 4 * 1024 * 1024
"""Largest index accepted (bytes)."""
TYPES = ("skill-md", "archive")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def index_url(source: str) -> str | None:
    """The index URL ``source`` stands for: ``https://host`` (no path, or ``/``) means
    ``https://host/.well-known/agent-skills/index.json``; an explicit index URL is itself.
    None for anything else (a git URL, a folder)."""
    try:
        parts = urllib.parse.urlsplit(source)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    if parts.path in ("", "/") and not parts.query and not parts.fragment:
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, INDEX_PATH, "", ""))
    if parts.path.endswith(INDEX_PATH):
        return source
    return None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One usable skill of an index.

    Attributes:
        name: Its name (a valid skill name).
        description: What the index says it does (untrusted text).
        type: ``skill-md`` or ``archive``.
        url: The artifact's URL, resolved against the index URL (RFC 3986).
        digest: ``sha256:<64 lowercase hex>`` of the artifact's bytes.
        local_index: Its index was served from this machine or a private network: then
            its artifact may be too (else every internal address is refused).
    """

    name: str
    description: str
    type: str
    url: str
    digest: str
    local_index: bool = False

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "url": self.url,
            "digest": self.digest,
        }


@dataclass(slots=True)
class Index:
    """An index as read.

    Attributes:
        url: The index URL asked for.
        resolved: The URL that answered (after redirects): the base of every entry URL.
        entries: Usable entries by name, in index order.
        warnings: Entries skipped, and why.
        internal: It was served from this machine or a private network
            (:attr:`skilldeck.core.web.Answer.internal`).
    """

    url: str
    resolved: str
    entries: dict[str, IndexEntry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    internal: bool = False


def _bad(url: str, message: str, reason: str = "bad_index") -> SkilldeckError:
    return SkilldeckError(ErrorCode.INVALID_PARAM, f"{url}: {message}", reason=reason, url=url)


def read_index(url: str) -> Index:
    """Fetch and read the index at ``url``.

    Raises:
        SkilldeckError: INVALID_PARAM for an index that is not JSON, has an unknown or no
            ``$schema`` (reason ``unknown_schema``: it is not processed) or no ``skills``
            list; as :func:`skilldeck.core.web.get` when it cannot be fetched.
    """
    from skilldeck.core.web import get

    answer = get(url, cap=INDEX_CAP)
    try:
        data = json.loads(answer.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(url, f"the index is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _bad(url, "the index is not a JSON object")
    schema = data.get("$schema")
    if schema != SCHEMA:
        said = "no $schema" if schema is None else f"$schema {str(schema)[:200]!r}"
        raise _bad(
            url,
            f"{said} is not a known index schema (this client reads {SCHEMA}); "
            "the index was not processed",
            "unknown_schema",
        )
    skills = data.get("skills")
    if not isinstance(skills, list):
        raise _bad(url, "the index has no skills list")
    index = Index(url, answer.url, internal=answer.internal)
    for position, row in enumerate(skills):
        entry = _entry(index, row, position)
        if entry is not None:
            index.entries[entry.name] = entry
    return index


def _entry(index: Index, row: Any, position: int) -> IndexEntry | None:
    """The usable entry ``row`` (None, with a warning, when it is skipped)."""
    from skilldeck.core.validate import name_problems

    label = f"entry {position + 1}"
    if not isinstance(row, dict):
        index.warnings.append(f"{label}: skipped: not an object")
        return None
    fields = {k: row.get(k) for k in ("name", "description", "type", "url", "digest")}
    missing = [k for k, v in fields.items() if not isinstance(v, str) or not v]
    if isinstance(fields["name"], str) and fields["name"]:
        label = f"{label} ({fields['name'][:80]})"
    if missing:
        index.warnings.append(f"{label}: skipped: no {', '.join(missing)}")
        return None
    name, kind = str(fields["name"]), str(fields["type"])
    problems = [message for _, message in name_problems(name)]
    if problems:
        index.warnings.append(f"{label}: skipped: name {name[:80]!r}: {problems[0]}")
        return None
    if kind not in TYPES:
        index.warnings.append(f"{label}: skipped: unknown type {kind[:40]!r}")
        return None
    if not _DIGEST.match(str(fields["digest"])):
        index.warnings.append(f"{label}: skipped: digest is not sha256:<64 lowercase hex>")
        return None
    if name in index.entries:
        index.warnings.append(f"{label}: skipped: {name} is listed twice")
        return None
    url = urllib.parse.urljoin(index.resolved, str(fields["url"]))
    if not index.internal and names_internal(urllib.parse.urlsplit(url).hostname or ""):
        index.warnings.append(f"{label}: skipped: a remote index may not point at this machine")
        return None
    digest = str(fields["digest"])
    return IndexEntry(name, str(fields["description"]), kind, url, digest, index.internal)


def digest_of(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def stage_entry(entry: IndexEntry, dest: Path, digest: str | None = None) -> None:
    """Fetch ``entry``'s artifact, verify it against ``digest`` (default the index's),
    and lay the skill out in the empty folder ``dest`` (``dest/SKILL.md``…).

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``digest_mismatch``) when the bytes do not
            match: nothing is unpacked or written; (reason ``unsafe_archive``) for an
            archive :func:`~skilldeck.core.install.archive.unpack` refuses; as
            :func:`skilldeck.core.web.get` when it cannot be fetched (reason
            ``internal_address`` for an entry of a public index that leads to this
            machine or a private network).
    """
    from skilldeck.core.web import get

    want = digest or entry.digest
    cap = FILE_CAP if entry.type == "skill-md" else TOTAL_CAP
    answer = get(entry.url, cap=cap, public_only=not entry.local_index)
    got = digest_of(answer.data)
    if got != want:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{entry.name}: digest mismatch: expected {want}, the artifact at {entry.url} "
            f"is {got}; it was not used",
            reason="digest_mismatch",
        )
    if entry.type == "skill-md":
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "SKILL.md").write_bytes(answer.data)
        return
    kind = archive_kind(answer.content_type, answer.url) or archive_kind("", entry.url)
    if kind is None:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{entry.name}: {entry.url} is neither .tar.gz nor .zip "
            f"(Content-Type {answer.content_type or 'absent'})",
            reason="unsafe_archive",
        )
    try:
        unpack(answer.data, kind, dest)
    except SkilldeckError as exc:
        raise SkilldeckError(
            exc.code, f"{entry.name}: {exc.message}", **{"reason": "unsafe_archive", **exc.details}
        ) from exc


def skill_version(folder: Path) -> str:
    """The ``metadata.version`` (or ``version``) of the skill in ``folder``, else ''."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file

    return parse_skill_file(folder / "SKILL.md").version or ""


@dataclass(slots=True)
class Listed:
    """A locked skill as its index lists it now.

    Attributes:
        entry: Its index entry (None when the index no longer lists it).
        resolved: The index URL that answered.
        folder: The fetched, verified and laid-out skill (None when not fetched).
        problem: Why it could not be fetched or used ('' when it could).
    """

    entry: IndexEntry | None
    resolved: str
    folder: Path | None = None
    problem: str = ""


def cached_index(source: str, cache: dict[str, Index]) -> Index:
    """The index at ``source``, read once per ``cache``."""
    if source not in cache:
        cache[source] = read_index(source)
    return cache[source]


def fetch_listed(
    source: str, name: str, dest: Path, cache: dict[str, Index], *, digest: str | None = None
) -> Listed:
    """Read the index at ``source`` (once per ``cache``) and stage its skill ``name`` into
    ``dest``, verified against ``digest`` (default: the digest the index lists now).

    Raises:
        SkilldeckError: as :func:`read_index` when the index cannot be read.
    """
    index = cached_index(source, cache)
    entry = index.entries.get(name)
    if entry is None:
        return Listed(None, index.resolved, problem=f"{name} is no longer listed in {source}")
    try:
        stage_entry(entry, dest, digest)
    except SkilldeckError as exc:
        return Listed(entry, index.resolved, problem=exc.message)
    return Listed(entry, index.resolved, dest)
