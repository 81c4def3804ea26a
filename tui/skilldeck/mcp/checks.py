"""MCP ``validate_skill`` and ``lint_skill``: an agent checks one skill and gets the
findings and codes ``skilldeck validate`` and ``skilldeck lint`` give for it (the same
core functions shape both), read-only."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.core import lint
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Diagnostic, Skill
from skilldeck.core.tools import check_skill_tools
from skilldeck.core.validate import lint_report, report_entry, validate_findings

if TYPE_CHECKING:
    from skilldeck.mcp.service import SkillService, ToolOutput


def validate_skill(service: SkillService, name: str) -> ToolOutput:
    """``validate`` for one skill: parse, profile, body encoding and tool findings (ST201
    a warning under ``tool-validation: warn``)."""
    skill = service.skill_to_check(name)
    notes: list[str] = []
    try:
        tools = check_skill_tools(skill, service.workspace.registry())[1]
    except SkilldeckError as exc:
        tools = []
        notes.append(f"tools not checked: {exc.message}")
    found = validate_findings(skill, tools)
    return _answer(skill, found, "validate", service.workspace.profile, notes)


def lint_skill(service: SkillService, name: str) -> ToolOutput:
    """``lint`` for one skill: its parse errors and lint findings (cross-skill rules
    included), with the lint configuration found from the server's folder."""
    skill = service.skill_to_check(name)
    workspace = service.workspace
    config = lint.load_lint_config((workspace.cwd or Path.cwd()).absolute())
    findings = workspace.lint(config)
    return _answer(skill, lint_report(skill, findings.get(skill.path, [])), "lint", "", [])


def _answer(
    skill: Skill, found: list[Diagnostic], check: str, profile: str, notes: list[str]
) -> ToolOutput:
    from skilldeck.mcp.service import ToolOutput

    data = report_entry(skill, found)
    counts = {
        s: sum(1 for d in found if d.severity.value == s) for s in ("error", "warning", "info")
    }
    data["summary"] = {
        "errors": counts["error"],
        "warnings": counts["warning"],
        "info": counts["info"],
    }
    if profile:
        data["profile"] = profile
    lines = [f"{check} {skill.name}: {counts['error']} error(s), {counts['warning']} warning(s)"]
    for d in found:
        where = f"line {d.line}: " if d.line else ""
        lines.append(f"{where}{d.code} {d.severity.value} {d.message}")
    lines.extend(notes)
    return ToolOutput(data, "\n".join(lines))
