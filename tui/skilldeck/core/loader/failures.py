"""What a load says when a skill's SKILL.md cannot be used, the same on every face:
``INTERNAL_ERROR`` with the SD code and reason when it did not parse, ``PERMISSION_DENIED``
when the operating system refuses the read, ``NOT_FOUND`` when it is gone and
``INTERNAL_ERROR`` for any other I/O error (the Skill tool MVP's error codes)."""

from __future__ import annotations

import errno

from skilldeck.core.discovery.frontmatter import read_body
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill

_REREAD = frozenset({"SD110", "SD118"})
"""Parse codes of a SKILL.md that could not be read at discovery (unreadable, or outside
the confinement rule): the load reads it again and says why it cannot."""

_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.ELOOP})
"""Errors of a read the system (or the confinement rule) refuses: PERMISSION_DENIED."""


def load_failure(skill: Skill) -> SkilldeckError | None:
    """Why ``skill`` cannot be loaded because its SKILL.md did not parse, or None.

    A file that could not be read at discovery (SD110, SD118) is read again, so the answer says
    what the system says now; one that did not parse gives ``INTERNAL_ERROR`` with
    ``reason: parse_failed`` and its SD codes.
    """
    parse = [d for d in skill.errors if d.code.startswith("SD")]
    if not parse:
        return None
    if any(d.code in _REREAD for d in parse):
        try:
            read_skill_body(skill, 1)
        except SkilldeckError as exc:
            return exc
    codes = sorted({d.code for d in parse})
    return SkilldeckError(
        ErrorCode.INTERNAL_ERROR,
        f"skill {skill.name!r} could not be parsed ({', '.join(codes)}: {parse[0].message})",
        name=skill.name,
        reason="parse_failed",
        diagnostics=codes,
    )


def read_skill_body(skill: Skill, max_bytes: int | None = None) -> str:
    """:func:`~skilldeck.core.discovery.frontmatter.read_body` with the load's error codes:
    PERMISSION_DENIED for a read the system refuses (or a path the confinement rule
    refuses), NOT_FOUND for a file that is gone, INTERNAL_ERROR for any other I/O error."""
    try:
        return read_body(skill, max_bytes)
    except SkilldeckError as exc:
        cause = exc.__cause__
        if not isinstance(cause, OSError) or isinstance(cause, FileNotFoundError):
            raise
        if cause.errno in _REFUSED:
            raise SkilldeckError(
                exc.code, exc.message, **exc.details, reason="os_refused"
            ) from cause
        raise SkilldeckError(
            ErrorCode.INTERNAL_ERROR, exc.message, **exc.details, reason="io_error"
        ) from cause
