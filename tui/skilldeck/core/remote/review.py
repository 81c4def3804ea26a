"""Operator approvals of remote skills, bound to their manifests.

An approval is a line ``team:name skill://name/SKILL.md remote-sha256:HEX`` in
``SKILLDECK_HOME/remote-approvals.txt``: the remote's host-assigned label, the skill's URI
and the SHA-256 of its manifest (every file's path and digest). Any changed, added or
removed file changes HEX, so the skill is ``changed`` (with what changed, from the kept
manifest) until approved again.

An approval binds to what the operator was shown. ``skilldeck remote show`` records the
digest it printed (:func:`record_shown`, in ``SKILLDECK_HOME/remote-shown.json``);
:func:`approve` takes the digest the operator saw (that one, or ``--digest``) and refuses,
writing nothing, when the entry fetched to approve has another: a remote that shows one
SKILL.md and serves another when asked again gets nothing approved.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.config import home_dir
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.review import DIGEST_MIN
from skilldeck.core.linefile import append_line
from skilldeck.core.remote.entries import RemoteEntry
from skilldeck.core.safe_text import for_terminal

APPROVALS_NAME = "remote-approvals.txt"
SHOWN_NAME = "remote-shown.json"
DIGEST_PREFIX = "remote-sha256:"
"""How an approval line names a remote manifest's digest."""
_HEX = re.compile(r"[0-9a-f]+")


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


def approve(entry: RemoteEntry, shown: str) -> tuple[str, bool]:
    """Record the operator's approval of ``entry``, which must be what they were shown;
    the line and whether it was added (False: already approved). Its manifest is kept
    (``SKILLDECK_HOME/manifests``) so a later change can be shown file by file.

    Args:
        entry: The entry as fetched now.
        shown: The digest the operator was shown (hex, ``remote-sha256:`` optional; a
            prefix of at least :data:`DIGEST_MIN` digits only of the digest
            :func:`record_shown` kept here).

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``bad_digest``) for a malformed digest or a
            prefix of none shown here;
            PERMISSION_DENIED (reason ``changed_since_shown``) when ``entry`` is not what
            was shown; EXECUTION_ERROR when the file cannot be written. Nothing is written
            when refused.
    """
    given = shown.strip().lower().removeprefix(DIGEST_PREFIX)
    if not DIGEST_MIN <= len(given) <= 64 or not _HEX.fullmatch(given):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"a digest is {DIGEST_MIN} to 64 hex digits, got {for_terminal(repr(shown))}",
            reason="bad_digest",
        )
    given = _whole_digest(entry.qualified, given)
    if entry.digest != given:
        raise _changed_since_shown(entry, given)
    line = approval_line(entry)
    _remember_manifest(entry)
    if (entry.uri, entry.digest) in read_approvals().get(entry.qualified, set()):
        return line, False
    path = approvals_path()
    append_line(path, line)
    return line, True


def _whole_digest(qualified: str, given: str) -> str:
    """The whole digest ``given`` names: itself, or for a prefix the digest ``remote show``
    printed here (a hostile remote can make a second entry share a prefix: matching a
    prefix against what it serves now would approve that one).

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``bad_digest``) for a prefix of nothing
            shown here.
    """
    if len(given) == 64:
        return given
    shown = last_shown(qualified)
    if shown is None or not shown.startswith(given):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{DIGEST_PREFIX}{given} is a prefix of no digest remote show printed here for "
            f"{for_terminal(qualified)}: show it here, or pass all 64 digits",
            reason="bad_digest",
        )
    return shown


def _changed_since_shown(entry: RemoteEntry, shown: str) -> SkilldeckError:
    from skilldeck.core.execution.snapshot import manifest_changes, parse_manifest, recall_manifest

    old = recall_manifest(shown) if len(shown) == 64 else None
    changes = manifest_changes(old, parse_manifest(entry.manifest)) if old is not None else []
    listed = ", ".join(f"{c} {for_terminal(p)}" for c, p in changes[:5])
    return SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"remote skill {for_terminal(entry.qualified)} is not what was shown: "
        f"{DIGEST_PREFIX}{shown[:DIGEST_MIN]}… was shown, the remote now serves "
        f"{DIGEST_PREFIX}{entry.digest} ({listed or 'its files differ'}); nothing approved. "
        "Show it again and review what it serves now",
        reason="changed_since_shown",
        shown=shown,
        current=entry.digest,
        changes=[list(c) for c in changes],
    )


def shown_path() -> Path:
    """``SKILLDECK_HOME/remote-shown.json``: the digest last shown of each remote skill."""
    return home_dir() / SHOWN_NAME


def last_shown(qualified: str) -> str | None:
    """The digest ``remote show`` last printed for ``qualified``, or None."""
    try:
        shown = json.loads(shown_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = shown.get(qualified) if isinstance(shown, dict) else None
    return digest if isinstance(digest, str) else None


def record_shown(entry: RemoteEntry) -> None:
    """Remember that the operator was shown ``entry`` (its digest, and its manifest so a
    later change can be named file by file).

    Raises:
        SkilldeckError: EXECUTION_ERROR (reason ``io_error``) when it cannot be written.
    """
    path = shown_path()
    try:
        shown = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        shown = {}
    shown = {**(shown if isinstance(shown, dict) else {}), entry.qualified: entry.digest}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(shown, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"cannot write {path}: {exc}", reason="io_error"
        ) from exc
    _remember_manifest(entry)


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
