"""Lint skills: stable ``SL`` codes, ruff-style selection, one finding per problem.

:mod:`.engine` runs the checks (:func:`lint_skill` for one skill, :func:`lint_catalog` for
many with the cross-skill rules in one pass; the body's in :mod:`.body`, the folder's in
:mod:`.files`, the shared text patterns in :mod:`.patterns`), :mod:`.rules` hands on the
``SL`` family of the one rule catalogue (:mod:`skilldeck.core.rules`), :mod:`.config` reads
the ``[lint]`` selection and :mod:`.overlap` finds descriptions that overlap. Validation
(spec conformance) lives in :mod:`skilldeck.core.validate`; lint is about quality and
safety.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.lint.config import LintConfig, load_lint_config
    from skilldeck.core.lint.engine import lint_catalog, lint_skill
    from skilldeck.core.lint.patterns import INVISIBLE, PIPE_SHELL
    from skilldeck.core.lint.rules import RULES, Rule, rules_reference

__all__ = [
    "INVISIBLE",
    "PIPE_SHELL",
    "RULES",
    "LintConfig",
    "Rule",
    "lint_catalog",
    "lint_skill",
    "load_lint_config",
    "rules_reference",
]

_NAMES = {
    "LintConfig": "config",
    "load_lint_config": "config",
    "lint_catalog": "engine",
    "lint_skill": "engine",
    "INVISIBLE": "patterns",
    "PIPE_SHELL": "patterns",
    "RULES": "rules",
    "Rule": "rules",
    "rules_reference": "rules",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
