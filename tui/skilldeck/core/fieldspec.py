"""What each frontmatter field is: which profile knows it, its type, its documented
values, and the semantic-versioning form of a skill's version.

:mod:`skilldeck.core.validate` checks a skill against these tables (SV401-SV403) and
:mod:`skilldeck.core.lint` reads a skill's version with :func:`metadata_version` (SL012).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
"""Semantic Versioning 2.0.0 (https://semver.org), matched with ``fullmatch``."""

SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
CLAUDE_CODE_FIELDS = (
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
    "shell",
    "version",
)
SKILLDECK_FIELDS = (
    "triggers",
    "tools",
    "priority",
    "tags",
    "version",
    "author",
    "hide-from-discovery",
    "enabled",
    "toolsets",
    "scripts",
    "default_enabled",
    "brief_description",
    "tool-validation",
    "parameters",
    "examples",
    "instructions",
)

CONTEXT_VALUES = ("fork",)
SHELL_VALUES = ("bash", "powershell")
EFFORT_VALUES = ("low", "medium", "high", "xhigh", "max")


KNOWN_FIELDS = {
    "agentskills": frozenset(SPEC_FIELDS),
    "shipped": frozenset(SPEC_FIELDS),
    "claude-code": frozenset(SPEC_FIELDS + CLAUDE_CODE_FIELDS),
    "default": frozenset(SPEC_FIELDS + CLAUDE_CODE_FIELDS + SKILLDECK_FIELDS),
}
"""The top-level fields each validation profile knows (any other is SV401)."""


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_mapping(v: Any) -> bool:
    return isinstance(v, Mapping)


def _is_str_or_str_list(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))


def _is_version(v: Any) -> bool:
    return isinstance(v, str | int | float) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_triggers(v: Any) -> bool:
    if _is_str_or_str_list(v):
        return True
    if not isinstance(v, Mapping):
        return False
    return all(
        k in ("keywords", "verbs", "patterns") and _is_str_or_str_list(x) for k, x in v.items()
    )


def _is_tools(v: Any) -> bool:
    if _is_str_or_str_list(v):
        return True
    if not isinstance(v, list):
        return False
    return all(isinstance(x, str) or (isinstance(x, Mapping) and "name" in x) for x in v)


def _is_scripts(v: Any) -> bool:
    if not isinstance(v, list):
        return False
    return all(
        isinstance(x, str) or (isinstance(x, Mapping) and isinstance(x.get("path"), str)) for x in v
    )


def metadata_version(fm: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(where, value)`` of the skill's version: top-level ``version`` or
    ``metadata.version`` (the spec-valid place); None when neither is set."""
    if fm.get("version") is not None:
        return "version", fm["version"]
    meta = fm.get("metadata")
    if isinstance(meta, Mapping) and meta.get("version") is not None:
        return "metadata.version", meta["version"]
    return None


_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "when_to_use": (_is_str, "a string"),
    "argument-hint": (_is_str, "a string"),
    "arguments": (_is_str_or_str_list, "a string or a list of strings"),
    "disable-model-invocation": (_is_bool, "a boolean (true or false)"),
    "user-invocable": (_is_bool, "a boolean (true or false)"),
    "model": (_is_str, "a string"),
    "effort": (_is_str, "a string"),
    "context": (_is_str, "a string"),
    "agent": (_is_str, "a string"),
    "hooks": (_is_mapping, "a mapping"),
    "paths": (_is_str_or_str_list, "a string or a list of glob strings"),
    "shell": (_is_str, "a string"),
    "version": (_is_version, "a string or a number"),
}

_SKILLDECK_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "triggers": (_is_triggers, "a mapping of keywords/verbs/patterns lists (or a list)"),
    "tools": (_is_tools, "a list of tool names or {name, purpose, required} mappings"),
    "priority": (_is_int, "an integer"),
    "tags": (_is_str_or_str_list, "a list of strings (or one string)"),
    "author": (_is_str, "a string"),
    "hide-from-discovery": (_is_bool, "a boolean (true or false)"),
    "enabled": (_is_bool, "a boolean (true or false)"),
    "toolsets": (_is_tools, "a list of toolset names or {name, …} mappings"),
    "scripts": (_is_scripts, "a list of script paths or {path, description} mappings"),
    "default_enabled": (_is_bool, "a boolean (true or false)"),
    "brief_description": (_is_str, "a string"),
}

FIELD_VALUES: dict[str, tuple[str, ...]] = {
    "context": CONTEXT_VALUES,
    "shell": SHELL_VALUES,
    "effort": EFFORT_VALUES,
}
"""The fields whose string value must be one of a documented set (SV403)."""


FIELD_TYPES = {"default": {**_TYPES, **_SKILLDECK_TYPES}, "claude-code": dict(_TYPES)}
"""Per profile, each typed field's check and how its wanted type reads (SV402); a profile
not listed checks the ``claude-code`` fields."""
