"""What the command line advises for a refusal the core explains by a ``reason`` code.

The core says what happened and why (a code in the error's details); only this face knows
its own commands and flags, so the advice is worded here (the terminal UI and the MCP
server word theirs).
"""

from __future__ import annotations

from typing import Any

from skilldeck.core.errors import SkilldeckError

_ADVICE = {
    "exec_disabled": "set skills_exec = true in config.toml or SKILLDECK_SKILLS_EXEC=1",
    "requires_approval": "skilldeck session approve {session} --{kind} {ref}",
    "not_allowed": "review it, then 'skilldeck allow {skill} {path}' pins it as it is now",
    "sandbox_required": "install bubblewrap, or see skilldeck doctor",
    "review_required": "review it, then skilldeck remote approve {name}",
    "changed_since_review": "review it again, then skilldeck remote approve {name}",
    "invalid": "skilldeck validate says why",
    "invalid_skills": "skilldeck validate says why",
}
_DIAGNOSTIC_ADVICE = {"ST106": "run 'skilldeck tools --refresh'"}


def advice(error: SkilldeckError) -> str:
    """The CLI's advice for ``error`` ('' when it has none or a detail it needs is missing)."""
    template = _ADVICE.get(str(error.details.get("reason", "")))
    if template is None:
        return ""
    try:
        return template.format(**_fields(error.details))
    except (KeyError, IndexError):
        return ""


def _fields(details: dict[str, Any]) -> dict[str, str]:
    ref = str(details.get("ref", ""))
    skill, _, path = ref.partition("/")
    return {**{k: str(v) for k, v in details.items()}, "skill": skill, "path": path}


def with_advice(error: SkilldeckError) -> str:
    """The error's message followed by the CLI's advice in parentheses."""
    said = advice(error)
    return f"{error.message} ({said})" if said else error.message


def diagnostic_advice(code: str, message: str) -> str:
    """A diagnostic's message with the CLI's advice for its code, if any."""
    said = _DIAGNOSTIC_ADVICE.get(code)
    return f"{message} ({said})" if said else message
