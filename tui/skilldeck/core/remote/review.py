"""Operator approvals of remote skills, bound to their manifests.

An approval is a line ``team:name skill://name/SKILL.md remote-sha256:HEX`` in
``SKILLDECK_HOME/remote-approvals.txt``: the remote's host-assigned label, the skill's URI
and the SHA-256 of its manifest (every file's path and digest). Any changed, added or
removed file changes HEX, so the skill is ``changed`` (with what changed, from the kept
manifest) until approved again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.config import home_dir
from skilldeck.core.linefile import append_line
from skilldeck.core.remote.entries import RemoteEntry

APPROVALS_NAME = "remote-approvals.txt"
DIGEST_PREFIX = "remote-sha256:"
"""How an approval line names a remote manifest's digest."""


def approvals_path() -> Path:
    """``SKILLDECK_HOME/remote-approvals.txt``."""
    return home_dir() / APPROVALS_NAME


def approval_line(entry: RemoteEntry) -> str:
    """The approval line of ``entry`` as it is now."""
    return f"{entry.qualified} {entry.uri} {DIGEST_PREFIX}{entry.digest}"


def read_approvals() -> dict[str, set[tuple[str, str]]]:
    """``qualified name -> {(uri, digest)}`` from the approvals file (bad lines skipped)."""
    found: dict[str, set[tuple[str, str]]] = {}
    try:
        text = approvals_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return found
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        if len(parts) == 3 and parts[2].startswith(DIGEST_PREFIX):
            found.setdefault(parts[0], set()).add((parts[1], parts[2][len(DIGEST_PREFIX) :]))
    return found


@dataclass(frozen=True, slots=True)
class Review:
    """Whether an operator approved a remote skill as it is now.

    Attributes:
        state: ``approved``, ``changed`` (approved at another digest) or ``unreviewed``.
        changes: For ``changed``: ``(added|removed|changed, path)`` since the approved
            manifest, when that manifest is known here.
    """

    state: str
    changes: tuple[tuple[str, str], ...] = ()


def review_of(
    entry: RemoteEntry, approvals: dict[str, set[tuple[str, str]]] | None = None
) -> Review:
    """The review state of ``entry``."""
    from skilldeck.core.execution.snapshot import manifest_changes, parse_manifest, recall_manifest

    approved = (read_approvals() if approvals is None else approvals).get(entry.qualified, set())
    if (entry.uri, entry.digest) in approved:
        return Review("approved")
    if not approved:
        return Review("unreviewed")
    changes: list[tuple[str, str]] = []
    new = parse_manifest(entry.manifest)
    for _uri, digest in sorted(approved):
        old = recall_manifest(digest)
        if old is not None:
            changes = manifest_changes(old, new)
            break
    return Review("changed", tuple(changes))


def approve(entry: RemoteEntry) -> tuple[str, bool]:
    """Record the operator's approval of ``entry`` as it is now; the line and whether it
    was added (False: already approved). Its manifest is kept (``SKILLDECK_HOME/manifests``)
    so a later change can be shown file by file.

    Raises:
        SkilldeckError: EXECUTION_ERROR when the file cannot be written.
    """
    line = approval_line(entry)
    _remember_manifest(entry)
    if (entry.uri, entry.digest) in read_approvals().get(entry.qualified, set()):
        return line, False
    path = approvals_path()
    append_line(path, line)
    return line, True


def _remember_manifest(entry: RemoteEntry) -> None:
    from skilldeck.core.execution.snapshot import manifests_dir

    path = manifests_dir() / f"{entry.digest}.txt"
    if path.is_file():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(entry.manifest, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return
