"""What an operator reads before approving a request to run a skill's file.

An agent's script run (or toolset mount) that waits for approval sits in the session's
pending queue as ``Script(skill/path@skill-sha256:HEX)`` (or ``Toolset(…)``): the file and
the digest of every file of the skill as the agent's run saw it (:mod:`.snapshot`).
:func:`parse_file_request` splits such an entry; :func:`review_file_request` pins the skill
folder now, through the same confinement rule and digest as a run
(:func:`~skilldeck.core.execution.resolve_script`), so the operator reads the text that
would run, learns whether the skill still has the requested digest and, when it does not,
which files changed since, file by file.

An approval binds to what the operator was shown: :func:`bind_approval` approves the
digest of the pending request (or the one the operator names), and only while the skill
on disk still has that digest, so the files read are the files approved. A skill changed
since the request is refused (reason ``changed_since_request``) and nothing is approved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal

SHOWN_CAP = 256 * 1024
"""Most bytes of a requested file shown to the operator (the hash covers the whole file)."""

_ENTRY = re.compile(
    r"(?P<kind>Script|Toolset)\((?P<skill>[^/()@\s]+)/(?P<path>[^()]+)"
    r"@skill-sha256:(?P<sha>[0-9a-fA-F]{64})\)"
)
KINDS = {"Script": "script", "Toolset": "toolset"}
DIGEST_MIN = 12
"""Fewest hex digits of a digest an operator may name (``--digest``)."""
_HEX = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True, slots=True)
class FileRequest:
    """One pending request naming a file of a skill and its hash.

    Attributes:
        entry: The pending entry exactly as stored (what approving or denying names).
        kind: ``script`` or ``toolset``.
        skill: The skill's name.
        path: The file's path relative to the skill folder (POSIX).
        digest: The skill content digest the request names (lower-case hex).
    """

    entry: str
    kind: str
    skill: str
    path: str
    digest: str

    @property
    def ref(self) -> str:
        """``skill-name/path``: how allowlists and messages name the file."""
        return f"{self.skill}/{self.path}"

    @property
    def key(self) -> str:
        """The session entry of this file at this digest (what approving names)."""
        kind = next(k for k, v in KINDS.items() if v == self.kind)
        return f"{kind}({self.ref}@skill-sha256:{self.digest})"


@dataclass(frozen=True, slots=True)
class FileReview:
    """The requested file as it is on disk now.

    Attributes:
        request: The request reviewed.
        text: The file's text, decoded as UTF-8 (bad bytes replaced), control and
            bidirectional characters shown escaped, at most :data:`SHOWN_CAP` bytes of it;
            '' when the file could not be read or is binary.
        size: The file's size in bytes (0 when unread).
        truncated: True when only the start of the file is in ``text``.
        binary: True when the file holds NUL bytes (its text is not shown).
        escaped: True when ``text`` had control or bidirectional characters, now shown
            escaped: they can make code read differently from what runs.
        disk_digest: The skill's content digest now, or None when it could not be pinned.
        changes: ``(change, path)`` for each file that differs from the requested digest
            (``added``, ``removed``, ``changed``); None when the requested manifest is not
            known on this machine.
        files: How many files the skill folder holds now (all pinned together).
        paths: Their paths, sorted (each can be reviewed the same way).
        error: Why the file could not be read (None when it was).
    """

    request: FileRequest
    text: str = ""
    size: int = 0
    truncated: bool = False
    binary: bool = False
    escaped: bool = False
    disk_digest: str | None = None
    changes: tuple[tuple[str, str], ...] | None = None
    files: int = 0
    paths: tuple[str, ...] = ()
    error: str | None = None

    @property
    def matches(self) -> bool:
        """True when the skill on disk still has the requested digest."""
        return self.disk_digest == self.request.digest

    @property
    def lines(self) -> int:
        """Lines in ``text``."""
        return len(self.text.splitlines())


def parse_file_request(entry: str) -> FileRequest | None:
    """The file request in a pending entry, or None for any other entry (a tool).

    >>> parse_file_request("Script(demo/scripts/a.py@skill-sha256:" + "0" * 64 + ")").ref
    'demo/scripts/a.py'
    """
    found = _ENTRY.fullmatch(entry.strip())
    if found is None:
        return None
    path = found.group("path")
    if PurePosixPath(path).is_absolute():
        return None
    return FileRequest(
        entry=entry,
        kind=KINDS[found.group("kind")],
        skill=found.group("skill"),
        path=path,
        digest=found.group("sha").lower(),
    )


def review_file_request(
    request: FileRequest, skill: Skill | None, cap: int = SHOWN_CAP
) -> FileReview:
    """Read the requested file of ``skill`` under the confinement rule and hash it.

    Never raises for a file problem: a missing skill, a path leaving the folder, a file
    that is gone or too large come back as ``error``.
    """
    from skilldeck.core.execution.policy import resolve_script
    from skilldeck.core.execution.snapshot import manifest_changes, parse_manifest, recall_manifest

    if skill is None:
        return FileReview(request, error=f"no skill named {request.skill!r} is known here")
    try:
        resolved = resolve_script(skill, request.path)
    except SkilldeckError as exc:
        return FileReview(request, error=exc.message)
    pinned = resolved.snapshot
    old = recall_manifest(request.digest)
    changes = None if old is None else tuple(manifest_changes(old, parse_manifest(pinned.manifest)))
    base = FileReview(
        request,
        size=len(resolved.data),
        disk_digest=pinned.digest,
        changes=changes,
        files=len(pinned.files),
        paths=tuple(f.rel for f in pinned.files),
    )
    data = resolved.data
    if b"\x00" in data:
        return replace(base, binary=True)
    raw = data[:cap].decode("utf-8", errors="replace")
    text = for_terminal(raw, multiline=True)
    return replace(base, text=text, truncated=len(data) > cap, escaped=text != raw)


def bind_approval(
    now: str, entries: list[str], digest: str | None = None, *, on_disk: bool = True
) -> str:
    """The entry an operator's decision on a file names: bound to what was shown.

    Args:
        now: The entry pinning the file's skill as it is on disk now
            (``Script(skill/path@skill-sha256:HEX)``).
        entries: The session's entries the decision may settle (for an approval or a
            denial: its pending queue; for a revocation: its approvals and denials).
        digest: The digest the operator was shown (``--digest``; hex, optionally with
            ``skill-sha256:``, at least :data:`DIGEST_MIN` digits, a prefix when unique).
            None: the one request for this file in ``entries`` (the skill on disk when
            there is none).
        on_disk: The chosen digest must still be the skill's on disk (approvals).

    Raises:
        SkilldeckError: INVALID_PARAM for a malformed digest (reason ``bad_digest``), one
            that names nothing (``unknown_digest``) or several (``ambiguous_digest``), or
            several requests and no digest (``ambiguous_request``); PERMISSION_DENIED
            (reason ``changed_since_request``) when the skill no longer has the chosen
            digest. Nothing is decided then.
    """
    pinned = parse_file_request(now)
    if pinned is None:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"not a file entry: {for_terminal(now)}")
    asked = [
        r.digest
        for r in map(parse_file_request, entries)
        if r is not None and (r.kind, r.ref) == (pinned.kind, pinned.ref)
    ]
    chosen = _chosen_digest(pinned, list(dict.fromkeys(asked)), digest)
    if on_disk and chosen != pinned.digest:
        raise _changed(pinned, chosen)
    return replace(pinned, digest=chosen).key


def approval_as_shown(request: FileRequest, skill: Skill | None) -> str:
    """The entry approving ``request`` as reviewed (its requested digest), checked
    against the skill on disk now (what the TUI's review dialog approves).

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``unreadable``) when the file cannot be
            pinned, or as :func:`bind_approval` (``changed_since_request``).
    """
    review = review_file_request(request, skill)
    if review.error is not None or review.disk_digest is None:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"{request.kind} {for_terminal(request.ref)} cannot be approved: {review.error}",
            reason="unreadable",
        )
    now = replace(request, digest=review.disk_digest).key
    return bind_approval(now, [request.entry], request.digest)


def _chosen_digest(pinned: FileRequest, asked: list[str], digest: str | None) -> str:
    ref = for_terminal(pinned.ref)
    if digest is None:
        if len(asked) > 1:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"{len(asked)} requests wait for {pinned.kind} {ref} at different digests "
                f"({', '.join(d[:DIGEST_MIN] for d in asked)}): name the one you reviewed "
                "with --digest",
                reason="ambiguous_request",
                digests=asked,
            )
        return asked[0] if asked else pinned.digest
    given = digest.strip().lower().removeprefix("skill-sha256:")
    if len(given) < DIGEST_MIN or len(given) > 64 or not _HEX.fullmatch(given):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"--digest must be {DIGEST_MIN} to 64 hex digits, got {for_terminal(repr(digest))}",
            reason="bad_digest",
        )
    found = [d for d in dict.fromkeys([*asked, pinned.digest]) if d.startswith(given)]
    if len(found) != 1:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"digest {given} names {'no' if not found else 'more than one'} request or "
            f"on-disk state of {pinned.kind} {ref} (on disk: {pinned.digest}; requested: "
            f"{', '.join(asked) or 'none'})",
            reason="ambiguous_digest" if found else "unknown_digest",
        )
    return found[0]


def _changed(pinned: FileRequest, chosen: str) -> SkilldeckError:
    from skilldeck.core.execution.snapshot import manifest_changes, recall_manifest

    old, new = recall_manifest(chosen), recall_manifest(pinned.digest)
    changes = manifest_changes(old, new) if old is not None and new is not None else []
    listed = ", ".join(f"{c} {for_terminal(p)}" for c, p in changes[:5])
    return SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"skill {for_terminal(pinned.skill)} changed since skill-sha256:{chosen[:DIGEST_MIN]}… "
        f"was shown ({listed or 'its files differ'}; now skill-sha256:{pinned.digest}): "
        "nothing approved. Deny the request and let the agent ask again, or review the "
        f"files as they are now and approve --digest {pinned.digest[:DIGEST_MIN]}",
        reason="changed_since_request",
        requested=chosen,
        on_disk=pinned.digest,
        changes=[list(c) for c in changes],
    )
