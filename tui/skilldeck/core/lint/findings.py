"""The findings of one lint run over one skill: what is enabled, silenced and capped."""

from __future__ import annotations

import re

from skilldeck.core.lint.config import LintConfig
from skilldeck.core.lint.rules import RULES
from skilldeck.core.model import Diagnostic, Skill

MAX_FINDINGS_PER_RULE = 50


class Findings:
    """Collects the findings for one skill, honouring the configuration, the skill's own
    silenced codes and the cap per rule."""

    def __init__(self, skill: Skill, config: LintConfig) -> None:
        self.skill = skill
        self.config = config
        self.items: list[Diagnostic] = []
        self._per_rule: dict[str, int] = {}
        self.suppressed = suppressed_codes(skill)

    def on(self, code: str) -> bool:
        """Whether rule ``code`` runs (cheap checks skip work for rules that do not)."""
        return self.config.enabled(code)

    def add(
        self, code: str, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        """Record a finding of rule ``code`` unless it is off, silenced or over its cap."""
        if not self.config.enabled(code) or code.startswith(self.suppressed):
            return
        n = self._per_rule.get(code, 0)
        if n >= MAX_FINDINGS_PER_RULE:
            return
        self._per_rule[code] = n + 1
        self.items.append(
            Diagnostic(code, RULES[code].severity, message, self.skill.path, line, column)
        )

    def field(self, key: str) -> int | None:
        """The line of frontmatter field ``key``, if it was seen."""
        return self.skill.field_lines.get(key)


SUPPRESS_KEY = "skilldeck-lint-ignore"


def suppressed_codes(skill: Skill) -> tuple[str, ...]:
    """Codes or prefixes a skill silences for itself.

    Written as ``metadata: {skilldeck-lint-ignore: "SL104 SL005"}`` (space- or
    comma-separated), which keeps the frontmatter valid under the Agent Skills spec.
    """
    meta = skill.frontmatter.get("metadata") if isinstance(skill.frontmatter, dict) else None
    raw = meta.get(SUPPRESS_KEY) if isinstance(meta, dict) else None
    if not isinstance(raw, str):
        return ()
    return tuple(c.upper() for c in re.split(r"[\s,]+", raw) if c.strip())
