"""Validation profiles: does a skill's frontmatter follow a given specification?

Four profiles:

* ``agentskills`` is the open Agent Skills specification exactly: only ``name``,
  ``description``, ``license``, ``compatibility``, ``metadata`` and ``allowed-tools``;
  name and description rules are errors; the name must equal the folder name.
* ``claude-code`` adds the fields Claude Code documents (``when_to_use``, ``argument-hint``,
  ``disable-model-invocation``, ``user-invocable``, ``model``, ``effort``, ``context``,
  ``agent``, ``hooks``, ``paths``, ``shell``, …) with their types; unknown fields are
  warnings; name format rules are errors. Claude Code itself falls back to the folder name
  and the body when ``name`` or ``description`` is missing, so those are warnings there.
* ``default`` loads anything loadable: a missing name or description is an error (the skill
  cannot be matched), format problems, type problems and unknown fields are warnings, and
  Skilldeck's own extension fields (``triggers``, ``tools``, ``priority``, ``tags``, …) are
  accepted.
* ``shipped`` is the contract of the skills Skilldeck ships: ``agentskills`` exactly, plus
  a non-empty body, ``metadata.version`` in semantic versioning, ``metadata.tags`` as a
  comma-separated string (so the frontmatter stays spec-valid), no relative link or
  referenced file that is missing from the skill folder, and a body that can be loaded.
  Unlike the others it reads the body (``SV5xx`` codes).

Every problem is reported at once as a :class:`~skilldeck.core.model.Diagnostic` with a
stable ``SV`` code. Validation never reads the file (except the ``shipped`` checks): it
works on what the parser stored.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Diagnostic, Severity, Skill

PROFILES = ("default", "agentskills", "claude-code", "shipped")
_SPEC_ONLY = frozenset({"agentskills", "shipped"})
"""Profiles that allow only the Agent Skills specification's fields and forms."""

SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
"""Semantic Versioning 2.0.0 (https://semver.org), matched with ``fullmatch``."""

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500

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

_NAME_CHARS = re.compile(r"[a-z0-9-]+")
_VALID_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class Check:
    """Documentation of one validation code.

    Attributes:
        code: Stable ``SV`` code.
        name: Short kebab-case name.
        summary: What the check finds.
        severities: Severity per profile, in :data:`PROFILES` order.
    """

    code: str
    name: str
    summary: str
    severities: tuple[Severity | None, Severity | None, Severity | None, Severity | None]


E, W = Severity.ERROR, Severity.WARNING

CHECKS: dict[str, Check] = {
    c.code: c
    for c in (
        Check("SV101", "name-missing", "The name field is missing.", (E, E, W, E)),
        Check("SV102", "name-not-string", "The name is not a string.", (W, E, E, E)),
        Check(
            "SV103", "name-length", "The name is empty or longer than 64 characters.", (W, E, E, E)
        ),
        Check(
            "SV104",
            "name-charset",
            "The name has characters other than lowercase a-z, 0-9 and hyphens.",
            (W, E, E, E),
        ),
        Check(
            "SV105",
            "name-hyphens",
            "The name starts or ends with a hyphen or has two hyphens in a row.",
            (W, E, E, E),
        ),
        Check(
            "SV106",
            "name-folder-mismatch",
            "The name differs from the skill folder name.",
            (None, E, W, E),
        ),
        Check("SV201", "description-missing", "The description field is missing.", (E, E, W, E)),
        Check("SV202", "description-not-string", "The description is not a string.", (E, E, E, E)),
        Check("SV203", "description-empty", "The description is empty.", (E, E, W, E)),
        Check(
            "SV204",
            "description-too-long",
            "The description is longer than 1024 characters.",
            (W, E, E, E),
        ),
        Check(
            "SV301",
            "compatibility-invalid",
            "compatibility is not a string of 1-500 characters.",
            (W, E, E, E),
        ),
        Check(
            "SV302",
            "metadata-invalid",
            "metadata is not a mapping of string keys to string values.",
            (W, E, W, E),
        ),
        Check(
            "SV303",
            "allowed-tools-invalid",
            "allowed-tools is not a space-separated string (or, outside the spec, a list).",
            (W, E, E, E),
        ),
        Check("SV304", "license-invalid", "license is not a string.", (W, E, E, E)),
        Check(
            "SV401",
            "unknown-field",
            "A top-level field the profile does not know.",
            (W, E, W, E),
        ),
        Check(
            "SV402",
            "field-type",
            "A known field has the wrong type (boolean, string, list, mapping, integer).",
            (W, None, E, None),
        ),
        Check(
            "SV403",
            "field-value",
            "A known field has a value outside its documented set (context, shell, effort).",
            (W, None, W, None),
        ),
        Check(
            "SV404",
            "script-missing",
            "A script declared in 'scripts' is missing or resolves outside the skill folder.",
            (E, None, None, None),
        ),
        Check("SV501", "body-empty", "The SKILL.md body is empty.", (None, None, None, E)),
        Check(
            "SV502",
            "version-not-semver",
            "metadata.version is missing or not semantic versioning (MAJOR.MINOR.PATCH).",
            (None, None, None, E),
        ),
        Check(
            "SV503",
            "tags-missing",
            "metadata.tags is missing or not a comma-separated string of tags.",
            (None, None, None, E),
        ),
        Check(
            "SV504",
            "dead-link",
            "A relative link or referenced file that does not exist in the skill folder.",
            (None, None, None, E),
        ),
        Check(
            "SV505",
            "not-loadable",
            "The skill's body cannot be read, so the skill cannot be loaded.",
            (None, None, None, E),
        ),
    )
}

_PROFILE_INDEX = {p: i for i, p in enumerate(PROFILES)}
_TYPE_CODES = frozenset({"SV102", "SV202", "SV301", "SV302", "SV303", "SV304", "SV402"})
_QUOTED_KEY = re.compile(r"^'([^']+)'")
_NO_KEYS: frozenset[str] = frozenset()


class _Collector:
    """Accumulates diagnostics for one skill under one profile."""

    def __init__(self, skill: Skill, profile: str) -> None:
        self.skill = skill
        self.index = _PROFILE_INDEX[profile]
        self.out: list[Diagnostic] = []
        self.coerced = (
            {
                m.group(1)
                for d in skill.diagnostics
                if d.code == "SD112" and (m := _QUOTED_KEY.match(d.message))
            }
            if skill.diagnostics
            else _NO_KEYS
        )

    def add(self, code: str, message: str, key: str | None = None, line: int | None = None) -> None:
        severity = CHECKS[code].severities[self.index]
        if severity is None:
            return
        if (
            self.index == 0
            and severity is Severity.WARNING
            and key in self.coerced
            and code in _TYPE_CODES
        ):
            return  # the parser already reported this type problem (SD112)
        if line is None:
            line = self.skill.field_lines.get(key, 1) if key else 1
        self.out.append(
            Diagnostic(
                code=code,
                severity=severity,
                message=message,
                path=self.skill.path,
                line=line,
                column=1,
            )
        )


def validate_skill(skill: Skill, profile: str = "default") -> list[Diagnostic]:
    """Check a parsed skill against a profile; report every problem at once.

    Args:
        skill: A skill filled by the parser (``frontmatter``, ``field_lines``, …).
        profile: One of :data:`PROFILES`.

    Returns:
        The skill's own ``SD*`` parse diagnostics followed by the profile's ``SV*`` findings.
        The skill is not modified.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown profile.
    """
    if profile not in _PROFILE_INDEX:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown validation profile {profile!r}; choose one of {', '.join(PROFILES)}",
            profiles=list(PROFILES),
        )
    parse_diags = [_under(d, profile) for d in skill.diagnostics if d.code.startswith("SD")]
    fm = skill.frontmatter if isinstance(skill.frontmatter, Mapping) else {}
    if not fm and any(d.severity is Severity.ERROR for d in parse_diags):
        # Nothing usable was parsed; the parse errors already say why.
        return parse_diags
    col = _Collector(skill, profile)
    _check_name(col, fm, profile)
    _check_description(col, fm)
    _check_spec_fields(col, fm, profile)
    _check_unknown(col, fm, profile)
    if profile not in _SPEC_ONLY:
        _check_types(col, fm, profile)
    if profile == "default":
        _check_scripts(col, skill, fm)
    if profile == "shipped":
        _check_shipped(col, skill, fm)
    return parse_diags + col.out


def _under(diag: Diagnostic, profile: str) -> Diagnostic:
    """A parse diagnostic as ``profile`` rates it: a duplicate key (SD105) is an error
    under ``agentskills``, as YAML and the reference validator have it."""
    if diag.code == "SD105" and profile in _SPEC_ONLY and diag.severity is not Severity.ERROR:
        message = diag.message.replace("the last value wins", "YAML forbids duplicate keys")
        return dataclasses.replace(diag, severity=Severity.ERROR, message=message)
    return diag


def _check_name(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    if "name" not in fm or fm["name"] is None:
        hint = " (Claude Code falls back to the folder name)" if profile == "claude-code" else ""
        col.add("SV101", f"required field 'name' is missing{hint}", "name")
        return
    name = fm["name"]
    if not isinstance(name, str):
        col.add("SV102", f"'name' must be a string, not {_type_name(name)}", "name")
        return
    for code, message in name_problems(name):
        col.add(code, message, "name")
    folder = col.skill.base_dir.name
    if name and name != folder:
        col.add("SV106", f"name {name!r} does not match its folder name {folder!r}", "name")


def name_problems(name: str) -> list[tuple[str, str]]:
    """Spec problems of a skill name as ``(code, message)`` pairs (empty when valid)."""
    if len(name) <= NAME_MAX and _VALID_NAME.fullmatch(name):
        return []
    problems: list[tuple[str, str]] = []
    if not name:
        return [("SV103", "'name' is empty")]
    if len(name) > NAME_MAX:
        problems.append(("SV103", f"'name' is {len(name)} characters; the limit is {NAME_MAX}"))
    if not _NAME_CHARS.fullmatch(name):
        problems.append(
            (
                "SV104",
                "'name' may only contain lowercase a-z, 0-9 and hyphens; found " + _bad_chars(name),
            )
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append(("SV105", "'name' must not start or end with a hyphen"))
    if "--" in name:
        problems.append(("SV105", "'name' must not contain consecutive hyphens"))
    return problems


def _bad_chars(name: str) -> str:
    """The characters of ``name`` outside a-z, 0-9 and hyphen, named readably with their
    position: ``U+200B ZERO WIDTH SPACE at character 5, 'A' at character 1``."""
    import unicodedata

    shown: list[str] = []
    seen: set[str] = set()
    for i, c in enumerate(name, 1):
        if "a" <= c <= "z" or "0" <= c <= "9" or c == "-" or c in seen:
            continue
        seen.add(c)
        if c.isprintable() and not c.isspace() and c.isascii():
            label = repr(c)
        else:
            label = f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed character')}"
        shown.append(f"{label} at character {i}")
        if len(shown) == 5:
            break
    return ", ".join(shown)


def _check_description(col: _Collector, fm: Mapping[str, Any]) -> None:
    if "description" not in fm or fm["description"] is None:
        col.add("SV201", "required field 'description' is missing", "description")
        return
    desc = fm["description"]
    if not isinstance(desc, str):
        col.add("SV202", f"'description' must be a string, not {_type_name(desc)}", "description")
        return
    if not desc.strip():
        col.add("SV203", "'description' is empty", "description")
    elif len(desc) > DESCRIPTION_MAX:
        col.add(
            "SV204",
            f"'description' is {len(desc)} characters; the limit is {DESCRIPTION_MAX}",
            "description",
        )


def _check_spec_fields(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    if "compatibility" in fm:
        value = fm["compatibility"]
        if not isinstance(value, str):
            col.add(
                "SV301",
                f"'compatibility' must be a string, not {_type_name(value)}",
                "compatibility",
            )
        elif not value.strip() or len(value) > COMPATIBILITY_MAX:
            col.add(
                "SV301",
                f"'compatibility' must be 1-{COMPATIBILITY_MAX} characters; it is {len(value)}",
                "compatibility",
            )
    if "metadata" in fm:
        value = fm["metadata"]
        if not isinstance(value, Mapping):
            col.add("SV302", f"'metadata' must be a mapping, not {_type_name(value)}", "metadata")
        else:
            bad = [
                str(k) for k, v in value.items() if not isinstance(k, str) or not isinstance(v, str)
            ]
            if bad:
                col.add(
                    "SV302",
                    "'metadata' must map strings to strings; non-string entries: "
                    + ", ".join(bad[:5]),
                    "metadata",
                )
    if "allowed-tools" in fm:
        value = fm["allowed-tools"]
        ok = isinstance(value, str)
        if profile not in _SPEC_ONLY and isinstance(value, list):
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            wanted = (
                "a space-separated string"
                if profile in _SPEC_ONLY
                else "a space-separated string or a list of strings"
            )
            col.add(
                "SV303",
                f"'allowed-tools' must be {wanted}, not {_type_name(value)}",
                "allowed-tools",
            )
    if "license" in fm and not isinstance(fm["license"], str):
        col.add("SV304", f"'license' must be a string, not {_type_name(fm['license'])}", "license")


_KNOWN_FIELDS = {
    "agentskills": frozenset(SPEC_FIELDS),
    "shipped": frozenset(SPEC_FIELDS),
    "claude-code": frozenset(SPEC_FIELDS + CLAUDE_CODE_FIELDS),
    "default": frozenset(SPEC_FIELDS + CLAUDE_CODE_FIELDS + SKILLDECK_FIELDS),
}


def _known_fields(profile: str) -> frozenset[str]:
    return _KNOWN_FIELDS.get(profile, _KNOWN_FIELDS["default"])


def _check_unknown(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    known = _known_fields(profile)
    if known.issuperset(fm):
        return
    for key in fm:
        if key in known:
            continue
        label = {
            "agentskills": "is not allowed by the Agent Skills specification",
            "shipped": "is not allowed by the Agent Skills specification (use metadata)",
            "claude-code": "is not a documented Claude Code or Agent Skills field",
            "default": "is not a known field (spec, Claude Code or Skilldeck); it is ignored",
        }[profile]
        col.add("SV401", f"field {str(key)!r} {label}", key if isinstance(key, str) else None)


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


def declared_scripts(fm: Mapping[str, Any]) -> list[str]:
    """The script paths a frontmatter declares in ``scripts`` (bad entries skipped)."""
    value = fm.get("scripts")
    if not isinstance(value, list):
        return []
    paths = [
        x if isinstance(x, str) else x.get("path") for x in value if isinstance(x, str | Mapping)
    ]
    return [p for p in paths if isinstance(p, str) and p.strip()]


def _check_scripts(col: _Collector, skill: Skill, fm: Mapping[str, Any]) -> None:
    """SV404 for each declared script that is missing or leaves the skill folder."""
    from skilldeck.core.confined import refusal

    for rel in declared_scripts(fm):
        pure = PurePosixPath(rel)
        path = skill.base_dir / Path(*pure.parts) if pure.parts else skill.base_dir
        if pure.is_absolute() or ".." in pure.parts:
            problem: str | None = "is not a relative path inside the skill folder"
        else:
            problem = refusal(path, skill.base_dir)
        if problem is None and not path.is_file():
            problem = "does not exist"
        if problem is not None:
            col.add("SV404", f"declared script {rel!r} {problem}", "scripts")


def metadata_version(fm: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(where, value)`` of the skill's version: top-level ``version`` or
    ``metadata.version`` (the spec-valid place); None when neither is set."""
    if fm.get("version") is not None:
        return "version", fm["version"]
    meta = fm.get("metadata")
    if isinstance(meta, Mapping) and meta.get("version") is not None:
        return "metadata.version", meta["version"]
    return None


def body_encoding(skill: Skill) -> list[Diagnostic]:
    """SD106 warnings for body bytes that are not UTF-8. Reads the SKILL.md, so discovery
    never calls it; ``skilldeck validate`` does (the BOM is the parser's SD119)."""
    from skilldeck.core.discovery.frontmatter import MAX_BODY_READ, encoding_problems, read_raw

    if skill.body_offset <= 0:
        return []
    try:
        data = read_raw(skill)
    except (SkilldeckError, OSError, ValueError):
        return []
    final = len(data) < MAX_BODY_READ
    return [
        Diagnostic(code, Severity.WARNING, message, skill.path, line, column)
        for code, message, line, column in encoding_problems(data, skill.body_offset, final=final)
        if code == "SD106"
    ]


def _check_shipped(col: _Collector, skill: Skill, fm: Mapping[str, Any]) -> None:
    """The shipped-skill contract: version, tags, a loadable non-empty body, no dead link."""
    raw = fm.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    version = meta.get("version")
    if not isinstance(version, str) or not SEMVER.fullmatch(version):
        shown = "is missing" if version is None else f"is {version!r}"
        col.add("SV502", f"metadata.version {shown}; write it as MAJOR.MINOR.PATCH", "metadata")
    tags = meta.get("tags")
    if not isinstance(tags, str) or not any(t.strip() for t in tags.split(",")):
        shown = "is missing" if tags is None else f"is {_type_name(tags)}"
        col.add("SV503", f"metadata.tags {shown}; write 'tag-one, tag-two'", "metadata")
    body = _shipped_body(col, skill)
    if body is None:
        return
    if not body.strip():
        col.add("SV501", "the body is empty: write the instructions", line=skill.body_line)
    for d in _dead_links(skill):
        col.add("SV504", d.message, line=d.line)


def _shipped_body(col: _Collector, skill: Skill) -> str | None:
    """The skill's body, or None (SV505) when it cannot be read."""
    from skilldeck.core.discovery.frontmatter import read_body

    if skill.body_offset <= 0:
        return None  # no frontmatter: the parse errors already say why
    try:
        return read_body(skill)
    except (SkilldeckError, OSError, ValueError) as exc:
        col.add("SV505", f"the body cannot be read: {exc}", line=skill.body_line)
        return None


def _dead_links(skill: Skill) -> list[Diagnostic]:
    """Lint's broken-link and missing-referenced-file findings (SL103, SL104)."""
    from skilldeck.core.lint import LintConfig, lint_skill

    return lint_skill(skill, config=LintConfig(select=["SL103", "SL104"]))


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

_VALUES: dict[str, tuple[str, ...]] = {
    "context": CONTEXT_VALUES,
    "shell": SHELL_VALUES,
    "effort": EFFORT_VALUES,
}


_PROFILE_TYPES = {"default": {**_TYPES, **_SKILLDECK_TYPES}, "claude-code": dict(_TYPES)}


def _check_types(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    types = _PROFILE_TYPES.get(profile) or _PROFILE_TYPES["claude-code"]
    if types.keys().isdisjoint(fm):
        return
    for key, (check, wanted) in types.items():
        if key not in fm:
            continue
        value = fm[key]
        if not check(value):
            col.add("SV402", f"'{key}' must be {wanted}, not {_type_name(value)}", key)
            continue
        allowed = _VALUES.get(key)
        if allowed and isinstance(value, str) and value not in allowed:
            col.add(
                "SV403",
                f"'{key}' is {value!r}; documented values: {', '.join(allowed)}",
                key,
            )


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__
