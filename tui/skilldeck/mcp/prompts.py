"""Skills offered as MCP prompts, so clients can show them as slash commands.

Every enabled, model-visible skill is one prompt named after it. Its arguments are the
skill's declared ``parameters`` (their values, in declared order, make the arguments
string: ``$0``, ``$1`` …), or one optional ``arguments`` (the ``$ARGUMENTS`` string) when
it declares none. ``prompts/get`` is a load of the skill
(:meth:`~skilldeck.mcp.service.SkillService.load_skill`: the same checks, ``$ARGUMENTS``
substitution, session activation and telemetry as the ``load_skill`` tool). With the
``skills_v1`` flag off there are no prompts, and getting one answers why.

The functions here are synchronous and raise
:class:`~skilldeck.core.errors.SkilldeckError`; :mod:`skilldeck.mcp.server` runs them in a
worker thread and turns errors into protocol errors.
"""

from __future__ import annotations

import mcp_types as types

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import arguments_from_parameters
from skilldeck.core.model import Skill
from skilldeck.mcp.schemas import ARGUMENTS_MAX
from skilldeck.mcp.service import SkillService

ARGUMENT = "arguments"
"""The one prompt argument: the skill's ``$ARGUMENTS``."""


def list_prompts(service: SkillService, cursor: str | None) -> types.ListPromptsResult:
    """One page of prompts: the visible skills (paged like ``resources/list``)."""
    skills, following = service.resource_page(cursor)
    prompts = [
        types.Prompt(
            name=skill.name,
            title=skill.name,
            description=skill.brief or skill.description[:200],
            arguments=prompt_arguments(skill),
        )
        for skill in skills
    ]
    return types.ListPromptsResult(prompts=prompts, next_cursor=following)


def prompt_arguments(skill: Skill) -> list[types.PromptArgument]:
    """The skill's declared ``parameters`` as prompt arguments, or the one ``arguments``
    string when it declares none."""
    if skill.parameters:
        return [
            types.PromptArgument(
                name=p.name, description=p.description or None, required=p.required
            )
            for p in skill.parameters
        ]
    return [
        types.PromptArgument(
            name=ARGUMENT,
            description="Arguments for the skill ($ARGUMENTS), as one string.",
            required=False,
        )
    ]


def get_prompt(
    service: SkillService, name: str, arguments: dict[str, str] | None, client_key: str
) -> types.GetPromptResult:
    """The skill's instructions with ``$ARGUMENTS`` applied, as one user message. For a
    skill declaring ``parameters`` the arguments are its parameters (see
    :func:`~skilldeck.core.loader.arguments_from_parameters`); ``arguments`` alone is still
    taken as the whole string.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown argument or one too long; the
            errors of :meth:`SkillService.load_skill` (NOT_FOUND for an unknown prompt,
            PERMISSION_DENIED with ``skills_v1`` off or for a disabled skill).
    """
    given = dict(arguments or {})
    skill = service.workspace.by_name(name)
    if (
        skill is not None
        and skill.visible_to_models
        and skill.parameters
        and set(given) != {ARGUMENT}
    ):
        _check_lengths(given)
        value = arguments_from_parameters(skill, given)
        return _prompt_result(service, name, value, client_key)
    unknown = sorted(key for key in given if key != ARGUMENT)
    if unknown:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown prompt argument(s) {', '.join(map(repr, unknown))} "
            f"(the only one is {ARGUMENT!r})",
        )
    value = given.get(ARGUMENT) or ""
    if not isinstance(value, str) or len(value) > ARGUMENTS_MAX:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{ARGUMENT!r} must be a string of at most {ARGUMENTS_MAX} characters",
        )
    return _prompt_result(service, name, value, client_key)


def _check_lengths(given: dict[str, str]) -> None:
    """INVALID_PARAM when a prompt argument is not a string or too long."""
    for key, value in given.items():
        if not isinstance(value, str) or len(value) > ARGUMENTS_MAX:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"{key!r} must be a string of at most {ARGUMENTS_MAX} characters",
            )


def _prompt_result(
    service: SkillService, name: str, value: str, client_key: str
) -> types.GetPromptResult:
    """A load of the skill as one user message."""
    output = service.load_skill(name, value, client_key=client_key)
    skill = service.workspace.by_name(name)
    description = (skill.brief or skill.description[:200]) if skill is not None else None
    return types.GetPromptResult(
        description=description,
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=output.text))],
    )
