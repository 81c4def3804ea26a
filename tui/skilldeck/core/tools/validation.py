"""Judging a skill's tools: its validation mode and the findings it yields.

Diagnostic codes: ST201 missing required tool, ST202 required tool hidden, ST203 unknown
``tool-validation`` value, ST204 optional tool missing (info).
"""

from __future__ import annotations

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


def check_skill_tools(
    skill: Skill, registry: ToolRegistry
) -> tuple[ToolAvailability, list[Diagnostic]]:
    """Availability plus diagnostics under the skill's validation mode."""
    availability = registry.availability(skill)
    mode, diags = validation_mode(skill, registry.settings)
    return availability, diags + tool_diagnostics(skill, availability, mode)
