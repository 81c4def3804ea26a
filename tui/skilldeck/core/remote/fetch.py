"""Fetching remote skill files: the current entry, then only the files needed, each
verified against the entry's digest and size and cached.

The cache (``cache/remote/<label>/<skill-path>/<manifest digest>``) holds only verified
bytes, written to a new file and renamed into place, and every use hashes them again: a
cached file that no longer matches is fetched again. Nothing under the cache is a
discovery root.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.config import cache_dir
from skilldeck.core.discovery.frontmatter import SKILL_FILE
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.mcp_client import Client, McpError
from skilldeck.core.model import Skill
from skilldeck.core.remote.entries import SCHEME, RemoteEntry, RemoteFile, parse_entry
from skilldeck.core.remote.review import Review
from skilldeck.core.remote.spec import RemoteSpec


@dataclass(frozen=True, slots=True)
class RemoteSkill:
    """A remote skill being acted on: its current entry and its verified SKILL.md.

    Attributes:
        entry: The entry it was loaded under (from ``skills/get``): reads of its files
            resolve only to what this lists.
        skill: A Skill parsed from the verified SKILL.md, named ``label:<skill-path>``,
            its folder the cache folder, its ``resources`` the manifest's other files and
            its ``allowed_tools`` empty unless an operator approved it as it is now.
        data: The verified bytes of SKILL.md.
        review: Its review state.
    """

    entry: RemoteEntry
    skill: Skill
    data: bytes
    review: Review


def get_entry(client: Client, spec: RemoteSpec, skill_path: str) -> RemoteEntry:
    """The current entry of ``skill_path`` (``skills/get``).

    Raises:
        McpError: the remote could not be asked (a ``-32602``: no such skill).
        SkilldeckError: PERMISSION_DENIED (``bad_entry``) for an unusable entry.
    """
    got = client.request("skills/get", {"uri": f"{SCHEME}{skill_path}/{SKILL_FILE}"})
    try:
        entry = parse_entry(spec.label, got.get("skill"))
    except ValueError as exc:
        raise _refused("bad_entry", f"remote {spec.label} sent a bad entry: {exc}") from exc
    if entry.skill_path != skill_path:
        raise _refused("bad_entry", f"remote {spec.label} answered for another skill")
    return entry


def fetch_file(client: Client, entry: RemoteEntry, item: RemoteFile) -> bytes:
    """The bytes of one listed file: from the cache when they still match the entry's
    digest and size (recomputed on every access), else ``resources/read``, verified, then
    cached.

    Raises:
        SkilldeckError: PERMISSION_DENIED (``digest_mismatch``) when what came back is not
            what the entry says.
    """
    cached = cached_file(entry, item)
    if cached is not None:
        return cached
    data = _read_verified(client, entry.label, item)
    store_file(entry, item, data)
    return data


def _read_verified(client: Client, label: str, item: RemoteFile) -> bytes:
    import base64
    import binascii

    result = client.request("resources/read", {"uri": item.uri})
    contents = result.get("contents")
    if not isinstance(contents, list) or len(contents) != 1 or not isinstance(contents[0], dict):
        raise _refused("digest_mismatch", f"remote {label}: {item.rel} came back malformed")
    content = contents[0]
    if isinstance(content.get("text"), str):
        data = str(content["text"]).encode("utf-8")
    elif isinstance(content.get("blob"), str):
        try:
            data = base64.b64decode(str(content["blob"]), validate=True)
        except (binascii.Error, ValueError):
            data = b""
    else:
        data = b""
    if len(data) != item.size or hashlib.sha256(data).hexdigest() != item.sha256:
        raise _refused(
            "digest_mismatch",
            f"remote {label}: {item.rel} does not match its digest sha256:{item.sha256[:12]}… "
            f"({len(data)} bytes, {item.size} stated); not used",
            path=item.rel,
        )
    return data


def cache_folder(entry: RemoteEntry) -> Path:
    """Where verified files of ``entry`` are kept:
    ``cache/remote/<label>/<skill-path>/<manifest digest>`` (the origin server's label and
    the skill's URI are both in the path; no discovery root is under the cache)."""
    return cache_dir().joinpath("remote", entry.label, *entry.skill_path.split("/"), entry.digest)


def cached_file(entry: RemoteEntry, item: RemoteFile) -> bytes | None:
    """The cached bytes of ``item`` when they still match its digest and size, else None."""
    path = cache_folder(entry).joinpath(*item.rel.split("/"))
    try:
        if path.is_symlink():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) != item.size or hashlib.sha256(data).hexdigest() != item.sha256:
        return None
    return data


def store_file(entry: RemoteEntry, item: RemoteFile, data: bytes) -> None:
    """Cache verified bytes (a new file renamed into place, never edited in place; best
    effort: a cache that cannot be written only costs a fetch next time)."""
    path = cache_folder(entry).joinpath(*item.rel.split("/"))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def check_frontmatter(entry: RemoteEntry, skill: Skill) -> None:
    """The SKILL.md's parsed frontmatter must equal the entry's, field by field.

    Raises:
        SkilldeckError: PERMISSION_DENIED (``frontmatter_mismatch``).
    """
    from skilldeck.core.loader.manifest import json_value

    parsed = json_value(skill.frontmatter)
    if parsed != entry.frontmatter:
        fields = sorted(
            k
            for k in set(parsed) | set(entry.frontmatter)
            if parsed.get(k) != entry.frontmatter.get(k)
        )
        raise _refused(
            "frontmatter_mismatch",
            f"remote {entry.label}: the frontmatter of {entry.uri} differs from its entry "
            f"({', '.join(fields[:5])}); not used",
        )


def _unavailable(spec: RemoteSpec, skill_path: str, exc: McpError) -> SkilldeckError:
    if exc.kind == "refused" and exc.code == -32602:
        return SkilldeckError(
            ErrorCode.NOT_FOUND,
            f"remote {spec.label} does not serve {skill_path!r}",
            remote=spec.label,
        )
    return SkilldeckError(
        ErrorCode.EXECUTION_ERROR,
        f"remote {spec.label} is unavailable ({exc.kind}: {exc.message})",
        remote=spec.label,
        reason="remote_unavailable",
    )


def _refused(reason: str, message: str, **details: object) -> SkilldeckError:
    return SkilldeckError(ErrorCode.PERMISSION_DENIED, message, reason=reason, **details)
