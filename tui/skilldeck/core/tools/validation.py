"""Judging a skill's tools: its validation mode and the findings it yields.

Diagnostic codes: ST201 missing required tool, ST202 required tool hidden, ST203 unknown
``tool-validation`` value, ST204 optional tool missing (info).

:func:`gate_strict` is the one place ``strict`` takes effect: the workspace applies it at
every discovery, so the CLI, the terminal UI and the MCP server agree on which skills are
unavailable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.tools.model import ToolAvailability

if TYPE_CHECKING:
    from skilldeck.core.tools.registry import ToolRegistry

VALIDATION_MODES = ("strict", "warn", "ignore")


def validation_mode(skill: Skill, settings: Settings | None = None) -> tuple[str, list[Diagnostic]]:
    """The validation mode for a skill's tools, first found of: a governance-registry
    override (a ``tool_validation`` attribute on the skill, when the registry sets one), the
    frontmatter ``tool-validation`` (or under ``metadata``), ``settings.tool_validation``.
    An unknown value is reported (ST203) and ignored."""
    default = (settings or load_settings()).tool_validation
    if default not in VALIDATION_MODES:
        default = "warn"
    fm = skill.frontmatter
    meta = fm.get("metadata")
    value: Any = getattr(skill, "tool_validation", None)
    if value is None:
        value = fm.get("tool-validation", fm.get("tool_validation"))
    if value is None and isinstance(meta, dict):
        value = meta.get("tool-validation", meta.get("tool_validation"))
    if value is None:
        return default, []
    if isinstance(value, str) and value.strip().lower() in VALIDATION_MODES:
        return value.strip().lower(), []
    line = skill.field_lines.get("tool-validation") or skill.field_lines.get("tool_validation")
    return default, [
        Diagnostic(
            "ST203",
            Severity.WARNING,
            f"tool-validation {value!r} is not one of {', '.join(VALIDATION_MODES)}; "
            f"using {default!r}",
            path=skill.path,
            line=line,
        )
    ]


def tool_diagnostics(
    skill: Skill, availability: ToolAvailability, mode: str = "warn"
) -> list[Diagnostic]:
    """Findings about a skill's tools: in ``strict`` mode a missing or hidden required tool
    is an error (the skill is invalid), in ``warn`` a warning, in ``ignore`` nothing."""
    if mode == "ignore":
        return []
    severity = Severity.ERROR if mode == "strict" else Severity.WARNING
    diags: list[Diagnostic] = []
    for entry in availability.entries:
        field_name = "tools" if "tools" in entry.origins else "allowed-tools"
        line = skill.field_lines.get(field_name)
        if entry.status == "available":
            continue
        if not entry.required:
            diags.append(
                Diagnostic(
                    "ST204",
                    Severity.INFO,
                    f"optional tool {entry.name!r} is {entry.status}",
                    path=skill.path,
                    line=line,
                )
            )
        elif entry.status == "hidden":
            diags.append(
                Diagnostic(
                    "ST202",
                    severity,
                    f"required tool {entry.name!r} is hidden by the tools file",
                    path=skill.path,
                    line=line,
                )
            )
        else:
            diags.append(
                Diagnostic(
                    "ST201",
                    severity,
                    f"required tool {entry.name!r} is not available",
                    path=skill.path,
                    line=line,
                )
            )
    return diags


def gate_strict(
    skills: Iterable[Skill], registry: Callable[[], ToolRegistry], settings: Settings
) -> None:
    """The one rule for ``tool-validation: strict``: a strict skill missing a required tool
    gets the error findings (ST201/ST202) on its own diagnostics and the names in
    :attr:`~skilldeck.core.model.Skill.missing_tools`, so it is invalid for every face (not
    listed, searched or loaded for agents; ``validate`` fails). ``warn`` and ``ignore`` skills
    are left alone. ``registry`` is called only when some skill is strict."""
    loaded: ToolRegistry | None = None
    for skill in skills:
        if not any(t.required for t in skill.tools):
            continue
        if validation_mode(skill, settings)[0] != "strict":
            continue
        loaded = loaded or registry()
        availability = loaded.availability(skill)
        errors = [
            d
            for d in tool_diagnostics(skill, availability, "strict")
            if d.severity is Severity.ERROR and d not in skill.diagnostics
        ]
        skill.diagnostics.extend(errors)
        skill.missing_tools = tuple(availability.missing_required)


def invalid_problem(skills: Iterable[Skill], settings: Settings) -> str | None:
    """With ``fail_on_invalid_skills`` on, one sentence naming the invalid skills (the ones
    that win their name), else None."""
    if not settings.fail_on_invalid_skills:
        return None
    bad = sorted({s.name for s in skills if not s.shadowed and not s.valid})
    if not bad:
        return None
    shown = ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
    return f"{len(bad)} invalid skill(s) and fail_on_invalid_skills is on: {shown}"


def check_skill_tools(
    skill: Skill, registry: ToolRegistry
) -> tuple[ToolAvailability, list[Diagnostic]]:
    """Availability plus diagnostics under the skill's validation mode."""
    availability = registry.availability(skill)
    mode, diags = validation_mode(skill, registry.settings)
    return availability, diags + tool_diagnostics(skill, availability, mode)
