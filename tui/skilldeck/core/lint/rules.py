"""The lint rules: the ``SL`` family of the one catalogue (:mod:`skilldeck.core.rules`).

A lint rule is defined, with its bad and good example, in :mod:`skilldeck.core.rules.lint`;
its check lives in :mod:`.engine`. This module hands the lint view of the catalogue on.
"""

from __future__ import annotations

from skilldeck.core.rules.catalogue import family_rules
from skilldeck.core.rules.lint import LISTING_FRONT_CHARS, LISTING_MAX_CHARS
from skilldeck.core.rules.model import Rule
from skilldeck.core.rules.reference import rules_reference

__all__ = ["LISTING_FRONT_CHARS", "LISTING_MAX_CHARS", "RULES", "Rule", "rules_reference"]

RULES: dict[str, Rule] = family_rules("SL")
"""Every lint rule by code, in code order."""
