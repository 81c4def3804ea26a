"""The one rules engine: every code Skilldeck reports about skills, in one catalogue.

:mod:`.model` says what a :class:`Rule` and a :class:`Profile` are; :mod:`.discovery`,
:mod:`.validation`, :mod:`.lint`, :mod:`.tools` and :mod:`.install` list each family's
rules; :mod:`.catalogue` puts them in one table; :mod:`.profiles` holds the validation
profiles as severity maps over it; :mod:`.reference` documents them (``skilldeck rules``).
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.rules.catalogue import CATALOGUE, family_rules, find_rules
    from skilldeck.core.rules.model import FAMILIES, Profile, Rule
    from skilldeck.core.rules.profiles import CHECKS, PROFILES, Check, profile
    from skilldeck.core.rules.reference import rule_entry, rules_reference

__all__ = [
    "CATALOGUE",
    "CHECKS",
    "FAMILIES",
    "PROFILES",
    "Check",
    "Profile",
    "Rule",
    "family_rules",
    "find_rules",
    "profile",
    "rule_entry",
    "rules_reference",
]

_NAMES = {
    "CATALOGUE": "catalogue",
    "family_rules": "catalogue",
    "find_rules": "catalogue",
    "FAMILIES": "model",
    "Profile": "model",
    "Rule": "model",
    "CHECKS": "profiles",
    "PROFILES": "profiles",
    "Check": "profiles",
    "profile": "profiles",
    "rule_entry": "reference",
    "rules_reference": "reference",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
