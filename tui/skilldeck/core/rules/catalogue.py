"""The one catalogue of rules: every code Skilldeck reports about skills, by family.

Discovery (``SD``), validation (``SV``), lint (``SL``), tools (``ST``) and the install
review (``SI``) each list their rules in their own module of this package; this module
puts them in one table and finds rules by code, prefix or name.
"""

from __future__ import annotations

from collections.abc import Iterable

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.rules.discovery import DISCOVERY_RULES
from skilldeck.core.rules.install import INSTALL_RULES
from skilldeck.core.rules.lint import LINT_RULES
from skilldeck.core.rules.model import Rule
from skilldeck.core.rules.tools import TOOLS_RULES
from skilldeck.core.rules.validation import VALIDATION_RULES

CATALOGUE: dict[str, Rule] = {
    rule.code: rule
    for family in (DISCOVERY_RULES, VALIDATION_RULES, LINT_RULES, TOOLS_RULES, INSTALL_RULES)
    for rule in family
}
"""Every rule by code, family by family (discovery, validation, lint, tools, install)."""


def family_rules(prefix: str) -> dict[str, Rule]:
    """The rules whose code starts with ``prefix`` (``SL``: the lint rules), in order."""
    return {code: rule for code, rule in CATALOGUE.items() if code.startswith(prefix)}


def find_rules(words: Iterable[str]) -> list[Rule]:
    """The rules each of ``words`` selects, by code, code prefix (``SL3``, ``SV1``) or
    name (``pipe-to-shell``), in code order.

    Raises:
        SkilldeckError: INVALID_PARAM naming the first word that selects no rule.
    """
    chosen: dict[str, Rule] = {}
    for word in words:
        wanted, name = word.strip().upper(), word.strip().lower()
        found = [
            rule
            for code, rule in CATALOGUE.items()
            if wanted and (code.startswith(wanted) or rule.name == name)
        ]
        if not found:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"no rule or validation code matches {word!r} (try 'skilldeck rules')",
            )
        chosen.update((rule.code, rule) for rule in found)
    return [chosen[code] for code in sorted(chosen)]
