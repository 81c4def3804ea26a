"""Who may run a skill's script (or toolset module).

A run is allowed only when the ``skills_exec`` flag is on **and** the script is allowed:
listed as ``skill-name/path/to/script`` in an allowlist file (``SKILLDECK_HOME/ALLOWLIST.txt``
or ``ALLOWLIST.txt`` in the ``skills`` folder of the skill's root), or approved for the
session by an operator. An approval names the script's SHA-256
(``Script(skill/path@sha256:HEX)``): an edited script needs a new approval. In ``approval``
mode an unapproved run joins the session's pending queue. A denial wins over everything.

Toolset modules (:mod:`.toolsets`) follow the same rules with entries
``Toolset(skill/path.py@sha256:HEX)`` and allowlist lines ``skill-name/path.py``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from skilldeck.core.config import Settings, home_dir
from skilldeck.core.confined import read_confined, refusal
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore
from skilldeck.core.sessions.model import first_match

ALLOWLIST_NAME = "ALLOWLIST.txt"
SCRIPT_CAP = 4 * 1024 * 1024
"""Largest script file hashed and run (bytes)."""


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """One script a caller asks to run.

    Attributes:
        skill: The skill.
        script: The script's path relative to the skill folder (POSIX).
        path: The script's absolute path.
        sha256: Hex SHA-256 of the script's bytes when checked.
        data: Those very bytes: what runs is a private copy of them, so a script edited
            after the check cannot run under the old approval.
    """

    skill: Skill
    script: str
    path: Path
    sha256: str
    data: bytes = b""

    @property
    def ref(self) -> str:
        """``skill-name/path/to/script``: the allowlist line of this script."""
        return f"{self.skill.name}/{self.script}"


def approval_key(ref: str, sha256: str) -> str:
    """The session approval entry of script ``ref`` (``skill/path``) with this hash."""
    return f"Script({ref}@sha256:{sha256})"


def resolve_script(skill: Skill, script: str) -> ExecRequest:
    """Check that ``script`` is a regular file inside the skill folder and hash it.

    Raises:
        SkilldeckError: INVALID_PARAM for an absolute or ``..`` path; PERMISSION_DENIED
            when it leaves the folder or is not a regular file; NOT_FOUND when missing.
    """
    rel = PurePosixPath(script.replace("\\", "/"))
    if not script or rel.is_absolute() or ".." in rel.parts or str(rel) in (".", ""):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"script {script!r} must be a relative path inside the skill folder",
            reason="bad_path",
        )
    path = skill.base_dir / Path(*rel.parts)
    problem = refusal(path, skill.base_dir)
    if problem is not None:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED, f"script {rel} {problem}", reason="confinement"
        )
    if not path.is_file():
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"skill {skill.name!r} has no script {str(rel)!r}"
        )
    data = read_confined(path, skill.base_dir, cap=SCRIPT_CAP, label=str(rel))
    if data.truncated:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"script {rel} is larger than {SCRIPT_CAP} bytes",
            reason="too_large",
        )
    digest = hashlib.sha256(data.data).hexdigest()
    return ExecRequest(skill, str(rel), path, digest, data.data)


def allowlist_files(skill: Skill) -> list[Path]:
    """The allowlist files that apply to ``skill`` (existing or not)."""
    files = [home_dir() / ALLOWLIST_NAME]
    if skill.root is not None:
        files.append(skill.root / "skills" / ALLOWLIST_NAME)
        if skill.root.name == "skills":
            files.append(skill.root / ALLOWLIST_NAME)
    return files


def read_allowlist(path: Path) -> set[str]:
    """The ``skill/path`` lines of one allowlist file (``#`` comments, blanks skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return {line.replace("\\", "/") for line in lines if line}


KINDS = ("script", "toolset")
"""What may be run: a script, or a toolset module (:mod:`.toolsets`)."""


def toolset_approval_key(ref: str, sha256: str) -> str:
    """The session approval entry of toolset module ``ref`` (``skill/path.py``)."""
    return f"Toolset({ref}@sha256:{sha256})"


def key_for(kind: str, ref: str, sha256: str) -> str:
    """The approval entry of ``ref`` with this hash, for a ``script`` or a ``toolset``."""
    return toolset_approval_key(ref, sha256) if kind == "toolset" else approval_key(ref, sha256)


def decide(
    settings: Settings,
    request: ExecRequest,
    store: SessionStore | None = None,
    session_id: str | None = None,
    kind: str = "script",
) -> str:
    """The state of ``request`` for a session, changing nothing.

    Returns:
        ``exec off``, ``denied``, ``allowlist``, ``approved``, ``pending`` (an approval was
        requested and not decided yet) or ``not approved``. Only ``allowlist`` and
        ``approved`` allow a run.
    """
    if not settings.skills_exec:
        return "exec off"
    key = key_for(kind, request.ref, request.sha256)
    session = store.find(session_id) if store is not None and session_id else None
    if session is not None and first_match(session.denied, key) is not None:
        return "denied"
    if any(request.ref in read_allowlist(f) for f in allowlist_files(request.skill)):
        return "allowlist"
    if session is not None and session.is_open and key in session.approved:
        return "approved"
    if session is not None and session.is_open and key in session.pending:
        return "pending"
    return "not approved"


def authorize(
    settings: Settings,
    request: ExecRequest,
    store: SessionStore | None = None,
    session_id: str | None = None,
    actor: str = "agent",
    kind: str = "script",
) -> str:
    """Why the run is allowed (``allowlist`` or ``approved``), else an error.

    Args:
        kind: ``script`` (entries ``Script(...)``) or ``toolset`` (``Toolset(...)``).

    Raises:
        SkilldeckError: PERMISSION_DENIED with ``reason`` ``exec_disabled``, ``denied``,
            ``requires_approval`` (the run was queued) or ``not_allowed``.
    """
    state = decide(settings, request, store, session_id, kind)
    if state in ("allowlist", "approved"):
        return state
    if state == "exec off":
        raise _refused(
            "exec_disabled",
            f"{kind} execution is off (set skills_exec = true in config.toml or "
            "SKILLDECK_SKILLS_EXEC=1)",
        )
    if state == "denied":
        raise _refused("denied", f"{kind} {request.ref} is denied for this session")
    key = key_for(kind, request.ref, request.sha256)
    session = store.find(session_id) if store is not None and session_id else None
    if store is not None and session is not None and session.is_open and session.mode == "approval":
        store.request_approval(session.id, key, actor)
        raise _refused(
            "requires_approval",
            f"{kind} {request.ref} waits for approval (skilldeck session approve "
            f"{session.id} --{kind} {request.ref})",
            requires_approval=True,
            approval=key,
        )
    raise _refused(
        "not_allowed",
        f"{kind} {request.ref} is not in an allowlist and not approved for this session"
        f" (an approval names the {kind}'s hash: an edited {kind} needs a new one)",
    )


def _refused(reason: str, message: str, **details: object) -> SkilldeckError:
    return SkilldeckError(ErrorCode.PERMISSION_DENIED, message, reason=reason, **details)
