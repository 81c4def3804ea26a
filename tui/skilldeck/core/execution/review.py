"""What an operator reads before approving a request to run a skill's file.

An agent's script run (or toolset mount) that waits for approval sits in the session's
pending queue as ``Script(skill/path@sha256:HEX)`` (or ``Toolset(skill/path@sha256:HEX)``):
the file and the SHA-256 of the bytes the agent's run saw. :func:`parse_file_request`
splits such an entry; :func:`review_file_request` reads the file now, through the same
confinement rule and hash as a run (:func:`~skilldeck.core.execution.resolve_script`), so
the operator reads the text that would run and learns whether it still has the requested
hash. Approving pins the requested hash: when the file changed since, the approval no
longer matches the file and a run stays refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal

SHOWN_CAP = 256 * 1024
"""Most bytes of a requested file shown to the operator (the hash covers the whole file)."""

_ENTRY = re.compile(
    r"(?P<kind>Script|Toolset)\((?P<skill>[^/()@\s]+)/(?P<path>[^()]+)"
    r"@sha256:(?P<sha>[0-9a-fA-F]{64})\)"
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
        sha256: The hex SHA-256 the request names (lower case).
    """

    entry: str
    kind: str
    skill: str
    path: str
    sha256: str

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
        disk_sha256: SHA-256 of the whole file now, or None when it could not be read.
        error: Why the file could not be read (None when it was).
    """

    request: FileRequest
    text: str = ""
    size: int = 0
    truncated: bool = False
    binary: bool = False
    escaped: bool = False
    disk_sha256: str | None = None
    error: str | None = None

    @property
    def matches(self) -> bool:
        """True when the file on disk still has the requested hash."""
        return self.disk_sha256 == self.request.sha256

    @property
    def lines(self) -> int:
        """Lines in ``text``."""
        return len(self.text.splitlines())


def parse_file_request(entry: str) -> FileRequest | None:
    """The file request in a pending entry, or None for any other entry (a tool).

    >>> parse_file_request("Script(demo/scripts/a.py@sha256:" + "0" * 64 + ")").ref
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
        sha256=found.group("sha").lower(),
    )


def review_file_request(
    request: FileRequest, skill: Skill | None, cap: int = SHOWN_CAP
) -> FileReview:
    """Read the requested file of ``skill`` under the confinement rule and hash it.

    Never raises for a file problem: a missing skill, a path leaving the folder, a file
    that is gone or too large come back as ``error``.
    """
    from skilldeck.core.execution import resolve_script

    if skill is None:
        return FileReview(request, error=f"no skill named {request.skill!r} is known here")
    try:
        resolved = resolve_script(skill, request.path)
    except SkilldeckError as exc:
        return FileReview(request, error=exc.message)
    data = resolved.data
    if b"\x00" in data:
        return FileReview(request, size=len(data), binary=True, disk_sha256=resolved.sha256)
    raw = data[:cap].decode("utf-8", errors="replace")
    text = for_terminal(raw, multiline=True)
    return FileReview(
        request,
        text=text,
        size=len(data),
        truncated=len(data) > cap,
        escaped=text != raw,
        disk_sha256=resolved.sha256,
    )
