"""Skills offered as MCP prompts, so clients can show them as slash commands.

Every enabled, model-visible skill is one prompt named after it, with one optional
argument ``arguments`` (the ``$ARGUMENTS`` string). ``prompts/get`` is a load of the skill
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
            arguments=[
                types.PromptArgument(
                    name=ARGUMENT,
                    description="Arguments for the skill ($ARGUMENTS), as one string.",
                    required=False,
                )
            ],
        )
        for skill in skills
    ]
    return types.ListPromptsResult(prompts=prompts, next_cursor=following)


def get_prompt(
    service: SkillService, name: str, arguments: dict[str, str] | None, client_key: str
) -> types.GetPromptResult:
    """The skill's instructions with ``$ARGUMENTS`` applied, as one user message.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown argument or one too long; the
            errors of :meth:`SkillService.load_skill` (NOT_FOUND for an unknown prompt,
            PERMISSION_DENIED with ``skills_v1`` off or for a disabled skill).
    """
    given = dict(arguments or {})
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
    output = service.load_skill(name, value, client_key=client_key)
    skill = service.workspace.by_name(name)
    description = (skill.brief or skill.description[:200]) if skill is not None else None
    return types.GetPromptResult(
        description=description,
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=output.text))],
    )
