"""The validation profiles, each a severity map over the catalogue.

* ``default`` loads anything loadable: format, type and unknown-field problems are
  warnings, the folder-name rule and the shipped-skill contract are off.
* ``agentskills`` is the Agent Skills specification: its rules are errors (a duplicate key,
  SD105, too); Claude Code and Skilldeck field types and scripts are not checked.
* ``claude-code`` rates what Claude Code tolerates (a missing name or description, a folder
  mismatch, unknown fields) as warnings.
* ``shipped`` is ``agentskills`` plus the shipped-skill contract (``SV5xx``).

A profile only changes severities: a rule it maps to ``None`` is off, a rule it does not
list keeps the catalogue's default severity.
"""

from __future__ import annotations

from typing import NamedTuple

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Severity
from skilldeck.core.rules.catalogue import CATALOGUE, family_rules
from skilldeck.core.rules.model import Profile

PROFILES = ("default", "agentskills", "claude-code", "shipped")
"""The validation profiles' names, the default first."""

W, E = Severity.WARNING, Severity.ERROR
_SHIPPED_ONLY = dict.fromkeys(("SV501", "SV502", "SV503", "SV504", "SV505", "SV506"))
_SPEC_SEVERITIES = {"SD105": E, "SV402": None, "SV403": None, "SV404": None}
"""The specification forbids duplicate keys and knows no Claude Code or Skilldeck field."""

_SEVERITIES: dict[str, dict[str, Severity | None]] = {
    "default": {
        **dict.fromkeys(("SV102", "SV103", "SV104", "SV105", "SV204"), W),
        **dict.fromkeys(("SV301", "SV302", "SV303", "SV304", "SV401", "SV402"), W),
        "SV106": None,
        **_SHIPPED_ONLY,
    },
    "agentskills": {**_SPEC_SEVERITIES, **_SHIPPED_ONLY},
    "claude-code": {
        **dict.fromkeys(("SV101", "SV106", "SV201", "SV203", "SV302", "SV401"), W),
        "SV404": None,
        **_SHIPPED_ONLY,
    },
    "shipped": dict(_SPEC_SEVERITIES),
}

_DEFAULTS = {code: rule.severity for code, rule in CATALOGUE.items()}
_BUILT_IN = {name: Profile(name, _SEVERITIES[name], _DEFAULTS) for name in PROFILES}


def profile(name: str) -> Profile:
    """The built-in profile called ``name``.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown profile.
    """
    found = _BUILT_IN.get(name)
    if found is None:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown validation profile {name!r}; choose one of {', '.join(PROFILES)}",
            profiles=list(PROFILES),
        )
    return found


class Check(NamedTuple):
    """A validation rule as each profile rates it (the ``rules`` reference's table).

    Attributes:
        code: Stable ``SV`` code.
        name: Short kebab-case name.
        summary: What the check finds.
        severities: Severity per profile, in :data:`PROFILES` order (``None``: off).
    """

    code: str
    name: str
    summary: str
    severities: tuple[Severity | None, ...]


CHECKS: dict[str, Check] = {
    code: Check(code, rule.name, rule.summary, tuple(_BUILT_IN[p].severity(code) for p in PROFILES))
    for code, rule in family_rules("SV").items()
}
"""Every validation rule with its severity under each profile."""
