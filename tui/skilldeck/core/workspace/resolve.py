"""Which skill a name means, and whether a model may have it: one rule for every face.

:meth:`~skilldeck.core.workspace.Workspace.resolve` is the only door: the CLI, the terminal
UI and the MCP server all ask it. Errors carry a ``reason`` code; each face words its own
advice around them.
"""

from __future__ import annotations

from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Skill
from skilldeck.core.safe_text import for_terminal, is_safe_name

NAME_MAX = 200
"""Longest name looked up (no skill has a longer one; longer input is refused early)."""


def check_lookup(name: str) -> None:
    """INVALID_PARAM for a name no skill can have (empty, control characters, too long),
    before any lookup, so it never reaches messages, logs or the audit."""
    if not name.strip():
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "skill name is empty")
    if len(name) > NAME_MAX or not is_safe_name(name, NAME_MAX):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"skill name must be at most {NAME_MAX} characters without control or "
            f"bidirectional characters: {for_terminal(repr(name[:60]))}",
        )


def by_path(catalog: Catalog, name: str) -> Skill | None:
    """The skill whose SKILL.md or folder ``name`` points at (a person may type a path)."""
    path = Path(name).expanduser()
    if not path.exists():
        return None
    return catalog.by_path(path.resolve()) or catalog.by_path(path.absolute())


def model_refusal(skill: Skill) -> SkilldeckError | None:
    """Why a model may not load ``skill`` (PERMISSION_DENIED with a ``reason``), or None."""
    name = skill.name
    if not skill.enabled:
        return _refused(name, "disabled", f"skill {name!r} is disabled by the governance registry")
    if skill.unavailable:
        return _refused(
            name,
            "missing_required_tools",
            f"skill {name!r} is {skill.unavailable}: a model may not load it",
            missing_tools=list(skill.missing_tools),
        )
    if not skill.valid:
        codes = sorted({d.code for d in skill.errors})
        return _refused(
            name,
            "invalid",
            f"skill {name!r} is invalid ({', '.join(codes)}): a model may not load it",
            diagnostics=codes,
        )
    if skill.frontmatter.get("disable-model-invocation") is True:
        return _refused(
            name,
            "model_invocation_disabled",
            f"skill {name!r} sets disable-model-invocation: only a person may load it",
        )
    return None


def _refused(name: str, reason: str, message: str, **details: object) -> SkilldeckError:
    return SkilldeckError(ErrorCode.PERMISSION_DENIED, message, name=name, reason=reason, **details)
