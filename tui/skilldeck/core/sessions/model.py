"""Plain data of the session store and the tool-matching rule.

Tool matching (used for allowlists, approvals and denials alike):

- A tool call is ``Name`` or ``Name(specifier)``; ``Bash(git log:*)`` has the base name
  ``Bash`` and the specifier ``git log:*``. Claude Code's ``mcp__server__tool`` is the same
  tool as ``server.tool``.
- An entry matches a checked tool when their base names are equal (an entry base name may
  hold ``*`` wildcards, e.g. ``github.*``).
- Specifiers narrow a match only when both sides have one: an entry without a specifier
  matches every call of its tool; a bare check (``Bash``) matches any entry for that tool,
  with or without a specifier; ``Bash(git log --oneline)`` matches ``Bash(git log:*)``
  (``prefix:*`` is a prefix match, other specifiers are shell-style globs) but not
  ``Bash(rm:*)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

MODES = ("strict", "approval", "permissive")
REASONS = ("skill_allowlist", "approved", "denied", "not_in_allowlist", "permissive", "no_session")

_CALL = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def iso(stamp: float | None) -> str | None:
    """ISO-8601 UTC form of a Unix time, or None."""
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="milliseconds")


@lru_cache(maxsize=4096)
def split_tool(text: str) -> tuple[str, str | None]:
    """``Bash(git log:*)`` -> (``Bash``, ``git log:*``); ``mcp__gh__x`` -> (``gh.x``, None)."""
    found = _CALL.match(text)
    if not found:
        return text.strip(), None
    base, spec = found.group(1), found.group(2)
    if base.startswith("mcp__"):
        parts = base[5:].split("__", 1)
        base = ".".join(parts) if len(parts) == 2 else f"{parts[0]}.*"
    return base, spec.strip() if spec is not None else None


def base_tool_name(text: str) -> str:
    """The tool an allowlist entry or call refers to (``Bash(git log:*)`` -> ``Bash``)."""
    return split_tool(text)[0]


def _spec_matches(entry_spec: str, call_spec: str) -> bool:
    if entry_spec.endswith(":*"):
        return call_spec.startswith(entry_spec[:-2])
    if any(ch in entry_spec for ch in "*?["):
        return fnmatchcase(call_spec, entry_spec)
    return call_spec == entry_spec


def tool_matches(entry: str, tool: str) -> bool:
    """Whether allowlist/approval/denial ``entry`` covers ``tool`` (see module docstring)."""
    entry_base, entry_spec = split_tool(entry)
    tool_base, tool_spec = split_tool(tool)
    if entry_base != tool_base and not (
        any(ch in entry_base for ch in "*?[") and fnmatchcase(tool_base, entry_base)
    ):
        return False
    if entry_spec is None or tool_spec is None:
        return True
    return _spec_matches(entry_spec, tool_spec)


def first_match(entries: list[str], tool: str) -> str | None:
    """The first entry covering ``tool``, or None."""
    for entry in entries:
        if tool_matches(entry, tool):
            return entry
    return None


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to "may this session use this tool now?".

    Attributes:
        allowed: The tool may be used.
        requires_approval: Not allowed yet; an operator's approval was requested.
        reason: One of :data:`REASONS`.
        matched: The allowlist/approval/denial entry that decided, if any.
    """

    allowed: bool
    requires_approval: bool
    reason: str
    matched: str | None = None

    @property
    def decision(self) -> str:
        """``allowed``, ``requires_approval`` or ``denied``."""
        if self.allowed:
            return "allowed"
        return "requires_approval" if self.requires_approval else "denied"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"allowed", "requires_approval", "reason"}`` (+ ``matched``)."""
        return {
            "allowed": self.allowed,
            "requires_approval": self.requires_approval,
            "reason": self.reason,
            "matched": self.matched,
        }


@dataclass(frozen=True, slots=True)
class ActiveSkill:
    """A skill activated in a session (loaded by an agent or force-loaded by an operator)."""

    name: str
    allowed_tools: tuple[str, ...]
    arguments: str
    actor: str
    activated: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "allowed_tools": list(self.allowed_tools),
            "arguments": self.arguments,
            "actor": self.actor,
            "activated": iso(self.activated),
        }


@dataclass(slots=True)
class Session:
    """A snapshot of one session.

    Attributes:
        id: Session id.
        created: Unix time of creation.
        mode: Policy mode, one of :data:`MODES`.
        label: Free text set by the operator.
        created_by: Actor that created it.
        skills: Active skills with their allowed tools.
        approved: Tools an operator approved.
        denied: Tools an operator denied (deny wins over everything).
        pending: Tools waiting for an operator's decision, oldest first.
        ended: Unix time the session ended, or None while open.
    """

    id: str
    created: float
    mode: str
    label: str = ""
    created_by: str = ""
    skills: list[ActiveSkill] = field(default_factory=list)
    approved: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    ended: float | None = None

    @property
    def active_skills(self) -> list[str]:
        """Names of the active skills, in activation order."""
        return [s.name for s in self.skills]

    @property
    def allowed_tools(self) -> list[str]:
        """Union of the active skills' ``allowed-tools``, deduplicated, in order."""
        return list(dict.fromkeys(t for s in self.skills for t in s.allowed_tools))

    @property
    def is_open(self) -> bool:
        """True until the session is ended."""
        return self.ended is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "created": iso(self.created),
            "mode": self.mode,
            "label": self.label,
            "created_by": self.created_by,
            "active_skills": self.active_skills,
            "skills": [s.to_dict() for s in self.skills],
            "allowed_tools": self.allowed_tools,
            "approved": list(self.approved),
            "denied": list(self.denied),
            "pending": list(self.pending),
            "ended": iso(self.ended),
        }


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row of the append-only audit log."""

    id: int
    time: float
    session_id: str | None
    actor: str
    action: str
    subject: str
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "time": iso(self.time),
            "session": self.session_id,
            "actor": self.actor,
            "action": self.action,
            "subject": self.subject,
            "detail": self.detail,
        }


def run_outcome(detail: dict[str, Any]) -> tuple[str, bool]:
    """How a script run ended, from the detail of its ``script_exit`` audit row, in the
    words every face shows: ``exit 0``, ``exit 3``, ``timed out`` or ``failed (why)``; and
    whether it succeeded (exit 0).

    Args:
        detail: The row's detail (``exit_code``, ``timed_out``, ``error``).
    """
    if detail.get("timed_out"):
        return "timed out", False
    code = detail.get("exit_code")
    if code is None:
        return f"failed ({detail.get('error')})", False
    return f"exit {code}", code == 0


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What :meth:`SessionStore.prune` removed."""

    sessions: int
    audit: int

    def to_dict(self) -> dict[str, int]:
        """JSON-ready form."""
        return {"sessions": self.sessions, "audit": self.audit}
