"""Which skill a name means, and whether a model may have it: one rule for every face.

:meth:`~skilldeck.core.workspace.Workspace.resolve` is the only door: the CLI, the terminal
UI and the MCP server all ask it. Errors carry a ``reason`` code; each face words its own
advice around them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def resolve(
    catalog: Catalog,
    winners: Mapping[str, Skill],
    visible: Sequence[Skill],
    name: str,
    *,
    for_model: bool = False,
) -> Skill:
    """The skill ``name`` means: the winning skill of that name, the skill with that
    :attr:`~skilldeck.core.model.Skill.id` (for a model, only a winner), or (for a person,
    not a model) the skill whose SKILL.md or folder the text is a path to.

    Args:
        catalog: Every discovered skill.
        winners: The winning skill of each name.
        visible: The skills a model may see (what its NOT_FOUND suggests).
        name: What the caller typed or sent.
        for_model: An agent asks: the skill must be one a model may load.

    Raises:
        SkilldeckError: INVALID_PARAM for a name no skill can have; NOT_FOUND with the
            nearest names (of the skills the caller may see); PERMISSION_DENIED with a
            ``reason`` (``disabled``, ``missing_required_tools``, ``invalid``,
            ``model_invocation_disabled``) when a model may not load it.
    """
    from skilldeck.core.loader import unknown_skill

    check_lookup(name)
    skill = winners.get(name) or by_id(catalog, name, winners_only=for_model)
    if skill is None and not for_model:
        skill = by_path(catalog, name)
    if skill is None:
        raise unknown_skill(name, [s.name for s in visible] if for_model else catalog.names())
    refusal = model_refusal(skill) if for_model else None
    if refusal is not None:
        raise refusal
    return skill


def by_path(catalog: Catalog, name: str) -> Skill | None:
    """The skill whose SKILL.md or folder ``name`` points at (a person may type a path)."""
    path = Path(name).expanduser()
    if not path.exists():
        return None
    return catalog.by_path(path.resolve()) or catalog.by_path(path.absolute())


def by_id(catalog: Catalog, name: str, *, winners_only: bool = False) -> Skill | None:
    """The skill whose :attr:`~skilldeck.core.model.Skill.id` is ``name``
    (``project:.claude/skills/pdf``): the one way to name a skill that lost its name to
    another; with ``winners_only`` (a model asks) only a skill that wins its name."""
    if ":" not in name:
        return None
    for skill in catalog.skills:
        if skill.id == name and not (winners_only and skill.shadowed):
            return skill
    return None


def model_refusal(skill: Skill) -> SkilldeckError | None:
    """Why a model may not load ``skill`` (PERMISSION_DENIED with a ``reason``), or None;
    a SKILL.md that did not parse or cannot be read gives the load's own error
    (:func:`~skilldeck.core.loader.load_failure`)."""
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
        from skilldeck.core.loader import load_failure

        failure = load_failure(skill)
        if failure is not None:
            return failure
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
