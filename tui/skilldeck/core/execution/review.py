"""What an operator reads before approving a request to run a skill's file.

An agent's script run (or toolset mount) that waits for approval sits in the session's
pending queue as ``Script(skill/path@skill-sha256:HEX)`` (or ``Toolset(…)``): the file and
the digest of every file of the skill as the agent's run saw it (:mod:`.snapshot`).
:func:`parse_file_request` splits such an entry; :func:`review_file_request` pins the skill
folder now, through the same confinement rule and digest as a run
(:func:`~skilldeck.core.execution.resolve_script`), so the operator reads the text that
would run, learns whether the skill still has the requested digest and, when it does not,
which files changed since, file by file. Approving pins the requested digest: when any file
changed since, the approval no longer matches and a run stays refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal

SHOWN_CAP = 256 * 1024
"""Most bytes of a requested file shown to the operator (the hash covers the whole file)."""

_ENTRY = re.compile(
    r"(?P<kind>Script|Toolset)\((?P<skill>[^/()@\s]+)/(?P<path>[^()]+)"
    r"@skill-sha256:(?P<sha>[0-9a-fA-F]{64})\)"
)
KINDS = {"Script": "script", "Toolset": "toolset"}


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
