"""What a rule is, and what a profile is: a severity map over the rules.

A :class:`Rule` is one stable code (``SD112``, ``SV401``, ``SL302``, ``ST201``, ``SI103``)
with its family, its default severity and the text ``skilldeck rules CODE`` prints. A
:class:`Profile` changes severities and nothing else: a code it maps to ``None`` is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from skilldeck.core.model import Severity

FAMILIES = {
    "SD": "discovery",
    "SV": "validation",
    "SL": "lint",
    "ST": "tools",
    "SI": "install",
}
"""Each code prefix and the family it names (the ``kind`` of a ``rules`` entry)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the catalogue.

    Attributes:
        code: Stable code such as ``SL001``; its first two letters name the family.
        name: Short kebab-case name.
        severity: Default severity of its findings (a profile may change it).
        summary: What it finds and why it matters.
        bad_example: A snippet that triggers it (lint rules), else empty.
        good_example: The same snippet fixed (lint rules), else empty.
        explanation: What to do about it, printed under the summary when set.
    """

    code: str
    name: str
    severity: Severity
    summary: str
    bad_example: str = ""
    good_example: str = ""
    explanation: str = ""

    @property
    def family(self) -> str:
        """The family the code belongs to (``discovery``, ``validation``, ``lint``, …)."""
        return FAMILIES[self.code[:2]]


@dataclass(frozen=True, slots=True)
class Profile:
    """A validation profile: its name and the severities it gives, over the catalogue.

    The name also says which fields the profile knows (:mod:`skilldeck.core.fieldspec`);
    everything about how bad a finding is lives in ``severities``.

    Attributes:
        name: ``default``, ``agentskills``, ``claude-code`` or ``shipped``.
        severities: Code to severity, ``None`` for off; a code not listed keeps the
            catalogue's default severity.
        defaults: The catalogue's default severity of every code.
    """

    name: str
    severities: Mapping[str, Severity | None]
    defaults: Mapping[str, Severity] = field(repr=False, compare=False)
    _rated: dict[str, Severity | None] = field(init=False, repr=False, compare=False)
    _on: dict[tuple[str, ...], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # discovery validates every new or changed skill: one dict lookup per question
        object.__setattr__(self, "_rated", {**self.defaults, **self.severities})
        object.__setattr__(self, "_on", {})

    def severity(self, code: str) -> Severity | None:
        """The severity of ``code`` under this profile (``None``: the rule is off)."""
        return self._rated[code]

    def on(self, *codes: str) -> bool:
        """Whether any of ``codes`` reports under this profile."""
        hit = self._on.get(codes)
        if hit is None:
            hit = self._on[codes] = any(self._rated[code] is not None for code in codes)
        return hit
