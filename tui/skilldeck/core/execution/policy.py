"""Who may run a skill's script (or toolset module).

A run is allowed only when the ``skills_exec`` flag is on **and** the operator allowed
this skill *as it is now*: every permission names the skill and the digest of **all** its
files (:mod:`.snapshot`), never a name or one file, so an edited helper, a new ``.pth`` or
a same-named skill from elsewhere is not covered. Two things allow:

* a line ``skill-name/path/to/script skill-sha256:HEX`` in ``SKILLDECK_HOME/ALLOWLIST.txt``
  (written by ``skilldeck allow``); lines without a digest, and ``ALLOWLIST.txt`` files in
  skill roots or repositories, are ignored with a notice: nothing inside a skill folder or
  a repository can grant itself permission;
* a session approval ``Script(skill/path@skill-sha256:HEX)``.

In ``approval`` mode an unapproved run joins the session's pending queue. A denial wins
over everything. Toolset modules (:mod:`.toolsets`) follow the same rules with entries
``Toolset(skill/path.py@skill-sha256:HEX)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from skilldeck.core.config import Settings, home_dir
from skilldeck.core.confined import refusal
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import Snapshot, remember_manifest, snapshot_skill
from skilldeck.core.linefile import append_line
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore
from skilldeck.core.sessions.model import first_match
from skilldeck.core.skillfolder import name_problem, shown

ALLOWLIST_NAME = "ALLOWLIST.txt"
SCRIPT_CAP = 4 * 1024 * 1024
"""Largest script file run (bytes)."""
DIGEST_PREFIX = "skill-sha256:"
"""How approvals and allowlist lines name a skill's digest."""


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """One script a caller asks to run, with the skill pinned as it is now.

    Attributes:
        skill: The skill.
        script: The script's path relative to the skill folder (POSIX).
        path: The script's absolute path.
        sha256: Hex SHA-256 of the script's own bytes (shown; not what approvals pin).
        snapshot: Every file of the skill folder as read and hashed: what an approval
            covers and, copied privately, what runs.
    """

    skill: Skill
    script: str
    path: Path
    sha256: str
    snapshot: Snapshot

    @property
    def ref(self) -> str:
        """``skill-name/path/to/script``."""
        return f"{self.skill.name}/{self.script}"

    @property
    def digest(self) -> str:
        """The skill's content digest (:attr:`Snapshot.digest`): what permissions pin."""
        return self.snapshot.digest

    @property
    def data(self) -> bytes:
        """The script's bytes as hashed."""
        entry = self.snapshot.file(self.script)
        return entry.data if entry is not None else b""


def approval_key(ref: str, digest: str) -> str:
    """The session approval entry of script ``ref`` (``skill/path``) in the skill whose
    content digest is ``digest``."""
    return f"Script({ref}@{DIGEST_PREFIX}{digest})"


def resolve_script(skill: Skill, script: str) -> ExecRequest:
    """Check that ``script`` is a regular file inside the skill folder and pin the folder.

    Raises:
        SkilldeckError: INVALID_PARAM for an absolute or ``..`` path; PERMISSION_DENIED
            when it leaves the folder, is not a regular file, is too large or a file of the
            folder breaks the confinement rule; NOT_FOUND when missing.
    """
    rel = PurePosixPath(script.replace("\\", "/"))
    bad = "\x00" in script or rel.is_absolute() or ".." in rel.parts
    if not script or bad or str(rel) in (".", ""):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"script {script!r} must be a relative path inside the skill folder",
            reason="bad_path",
        )
    problem = name_problem(str(rel))
    if problem is not None:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"script '{shown(str(rel))}' {problem}: it cannot be pinned or allowed",
            reason="unsafe_name",
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
    snapshot = snapshot_skill(skill.base_dir)
    entry = snapshot.file(str(rel))
    if entry is None:
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"skill {skill.name!r} has no script {str(rel)!r}"
        )
    if len(entry.data) > SCRIPT_CAP:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"script {rel} is larger than {SCRIPT_CAP} bytes",
            reason="too_large",
        )
    return ExecRequest(skill, str(rel), path, entry.sha256, snapshot)


def allowlist_path() -> Path:
    """The one allowlist file that can allow: ``SKILLDECK_HOME/ALLOWLIST.txt``."""
    return home_dir() / ALLOWLIST_NAME


def allowlist_line(ref: str, digest: str) -> str:
    """The allowlist line allowing ``ref`` in the skill with content digest ``digest``.

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``unsafe_name``) when ``ref`` holds a space,
            a control character or anything else that would make the line say something
            else (a newline would forge a second line allowing another skill).
    """
    problem = name_problem(ref) or ("holds a space" if any(c.isspace() for c in ref) else None)
    if problem is not None or not ref or len(digest) != 64:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"cannot allow '{shown(ref)}': it {problem or 'is not a skill/script pair'}; "
            "an allowlist line names one skill/script without spaces or control characters",
            reason="unsafe_name",
        )
    return f"{ref} {DIGEST_PREFIX}{digest}"


def add_to_allowlist(request: ExecRequest, expected: str | None = None) -> tuple[str, bool]:
    """Append the line allowing ``request`` (its skill as pinned now) to the home
    allowlist; returns the line and whether it was added (False: already there).

    Args:
        request: The script and the skill as pinned now.
        expected: The whole digest the operator reviewed (``allow --dry-run`` prints it):
            when given, the skill must still have it, so a swap between the review and the
            ``allow`` allows nothing.

    Raises:
        SkilldeckError: EXECUTION_ERROR (reason ``io_error``) when it cannot be written;
            PERMISSION_DENIED (reason ``changed_since_shown``) when the skill no longer has
            ``expected``; INVALID_PARAM (reason ``bad_digest``) when ``expected`` is not
            64 hex digits.
    """
    if expected is not None:
        _check_expected(request, expected)
    line = allowlist_line(request.ref, request.digest)
    path = allowlist_path()
    if (request.ref, request.digest) in read_allowlist(path):
        return line, False
    append_line(path, line)
    remember_manifest(request.snapshot)
    return line, True


def _check_expected(request: ExecRequest, expected: str) -> None:
    wanted = expected.strip().lower().removeprefix(DIGEST_PREFIX)
    if len(wanted) != 64 or any(c not in "0123456789abcdef" for c in wanted):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            "--digest takes the whole skill digest (64 hex digits) that the review showed",
            reason="bad_digest",
        )
    if wanted != request.digest:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"{request.skill.name} changed since it was shown: its digest is now "
            f"{request.digest}, not {wanted}; review it again",
            reason="changed_since_shown",
        )


def read_allowlist(path: Path) -> set[tuple[str, str]]:
    """The ``(skill/path, digest)`` pairs of an allowlist file (``#`` comments, blanks and
    lines without a digest skipped; :func:`allowlist_notices` names the last)."""
    pairs: set[tuple[str, str]] = set()
    for line in _lines(path):
        parts = line.split()
        if len(parts) == 2 and parts[1].startswith(DIGEST_PREFIX):
            pairs.add((parts[0].replace("\\", "/"), parts[1][len(DIGEST_PREFIX) :].lower()))
    return pairs


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def ignored_allowlists(skill: Skill) -> list[Path]:
    """``ALLOWLIST.txt`` files beside ``skill`` that older versions honoured and that are
    ignored now (a skill root or repository cannot allow itself)."""
    found: list[Path] = []
    places = [skill.base_dir, skill.base_dir.parent]
    if skill.root is not None:
        places += [skill.root, skill.root / "skills"]
    for folder in dict.fromkeys(places):
        candidate = folder / ALLOWLIST_NAME
        if candidate.is_file() and candidate != allowlist_path():
            found.append(candidate)
    return found


def allowlist_notices(skill: Skill | None = None) -> list[str]:
    """Why allowlist lines or files are ignored: lines of the home allowlist without a
    digest, and ``ALLOWLIST.txt`` files beside ``skill``."""
    notices = [
        f"{allowlist_path()}: ignored line {line!r}: a line names a skill and its digest"
        for line in _lines(allowlist_path())
        if len(line.split()) != 2 or not line.split()[1].startswith(DIGEST_PREFIX)
    ]
    if skill is not None:
        notices += [
            f"{path}: ignored: only {allowlist_path()} can allow"
            for path in ignored_allowlists(skill)
        ]
    return notices


KINDS = ("script", "toolset")
"""What may be run: a script, or a toolset module (:mod:`.toolsets`)."""


def toolset_approval_key(ref: str, digest: str) -> str:
    """The session approval entry of toolset module ``ref`` (``skill/path.py``) in the
    skill with content digest ``digest``."""
    return f"Toolset({ref}@{DIGEST_PREFIX}{digest})"


def key_for(kind: str, ref: str, digest: str) -> str:
    """The approval entry of ``ref`` in the skill with ``digest``, for a ``script`` or a
    ``toolset``."""
    return toolset_approval_key(ref, digest) if kind == "toolset" else approval_key(ref, digest)


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
    key = key_for(kind, request.ref, request.digest)
    session = store.find(session_id) if store is not None and session_id else None
    if session is not None and first_match(session.denied, key) is not None:
        return "denied"
    if (request.ref, request.digest) in read_allowlist(allowlist_path()):
        return "allowlist"
    if session is not None and session.is_open and key in session.approved:
        return "approved"
    if session is not None and session.is_open and key in session.pending:
        return "pending"
    return "not approved"


AllowedBy = Literal["allowlist", "approved"]
"""Why a run was allowed: the home allowlist, or an approval in the caller's session."""


def authorize(
    settings: Settings,
    request: ExecRequest,
    store: SessionStore | None = None,
    session_id: str | None = None,
    actor: str = "agent",
    kind: str = "script",
) -> AllowedBy:
    """Why the run is allowed (``allowlist`` or ``approved``), else an error.

    Args:
        kind: ``script`` (entries ``Script(...)``) or ``toolset`` (``Toolset(...)``).

    Raises:
        SkilldeckError: PERMISSION_DENIED with ``reason`` ``exec_disabled``, ``denied``,
            ``requires_approval`` (the run was queued) or ``not_allowed``.
    """
    remember_manifest(request.snapshot)
    state = decide(settings, request, store, session_id, kind)
    if state == "allowlist":
        return "allowlist"
    if state == "approved":
        return "approved"
    if state == "exec off":
        raise _refused("exec_disabled", f"{kind} execution is off", kind=kind, ref=request.ref)
    if state == "denied":
        raise _refused("denied", f"{kind} {request.ref} is denied for this session")
    key = key_for(kind, request.ref, request.digest)
    session = store.find(session_id) if store is not None and session_id else None
    if store is not None and session is not None and session.is_open and session.mode == "approval":
        store.request_approval(session.id, key, actor)
        raise _refused(
            "requires_approval",
            f"{kind} {request.ref} waits for the operator's approval in session {session.id}",
            requires_approval=True,
            approval=key,
            session=session.id,
            kind=kind,
            ref=request.ref,
        )
    notices = allowlist_notices(request.skill)
    raise _refused(
        "not_allowed",
        f"{kind} {request.ref} is not allowed for skill digest {request.digest[:12]}…: "
        "not in the allowlist and not approved for this session (a permission pins every "
        f"file of the skill: any edit needs a new one)"
        + "".join(f"; {notice}" for notice in notices),
        digest=request.digest,
        notices=notices,
        kind=kind,
        ref=request.ref,
    )


def check_runnable(settings: Settings, skill: Skill) -> None:
    """Refuse a skill the registry disabled, an invalid one, and any run when the operator
    requires the ``bwrap`` sandbox and this machine has not got it.

    Raises:
        SkilldeckError: PERMISSION_DENIED with ``reason`` ``disabled``, ``invalid`` or
            ``sandbox_required``.
    """
    from skilldeck.core.execution.sandbox import BWRAP, probe

    if not skill.enabled:
        raise _refused("disabled", f"skill {skill.name!r} is disabled by the governance registry")
    if not skill.valid:
        codes = ", ".join(sorted({d.code for d in skill.errors}))
        raise _refused("invalid", f"skill {skill.name!r} is invalid ({codes})")
    level = probe().level
    if settings.require_sandbox and level != BWRAP:
        raise _refused(
            "sandbox_required",
            f"require_sandbox is on and this machine's sandbox level is {level}",
        )


def _refused(reason: str, message: str, **details: object) -> SkilldeckError:
    return SkilldeckError(ErrorCode.PERMISSION_DENIED, message, reason=reason, **details)
