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
  comma-separated string (spec-valid) or a YAML list of strings (the FrontMCP registry's
  form; SV506 warns that the specification wants string values), no relative link or
  referenced file that is missing from the skill folder, and a body that can be loaded.
  Unlike the others it reads the body (``SV5xx`` codes).

Every problem is reported at once as a :class:`~skilldeck.core.model.Diagnostic` with a
stable ``SV`` code. The rules and how bad each is under each profile (a severity map) are
in :mod:`skilldeck.core.rules`; this module holds the checks, and the fields each profile
knows are in :mod:`skilldeck.core.fieldspec`. Validation never reads the file (except the
``shipped`` checks): it works on what the parser stored.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.fieldspec import FIELD_TYPES, FIELD_VALUES, KNOWN_FIELDS, SEMVER
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.rules import CHECKS as CHECKS
from skilldeck.core.rules import PROFILES as PROFILES
from skilldeck.core.rules import Profile
from skilldeck.core.rules import profile as built_in
from skilldeck.core.skillfolder import name_problem, shown

_SPEC_ONLY = frozenset({"agentskills", "shipped"})
"""Profiles that allow only the Agent Skills specification's fields and forms."""

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500

_NAME_CHARS = re.compile(r"[a-z0-9-]+")
_VALID_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


_TYPE_CODES = frozenset({"SV102", "SV202", "SV301", "SV302", "SV303", "SV304", "SV402"})
_QUOTED_KEY = re.compile(r"^'([^']+)'")
_NO_KEYS: frozenset[str] = frozenset()


class _Collector:
    """Accumulates diagnostics for one skill under one profile."""

    def __init__(self, skill: Skill, profile: Profile) -> None:
        self.skill = skill
        self.profile = profile
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
        severity = self.profile.severity(code)
        if severity is None:
            return
        if (
            self.profile.name == "default"
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


def validate_skill(skill: Skill, profile: str | Profile = "default") -> list[Diagnostic]:
    """Check a parsed skill against a profile; report every problem at once.

    Args:
        skill: A skill filled by the parser (``frontmatter``, ``field_lines``, …).
        profile: One of :data:`PROFILES`, or a :class:`~skilldeck.core.rules.Profile` of
            that name with its own severities: a check runs when the profile rates one of
            its codes, and reports at the severity the profile gives.

    Returns:
        The skill's own ``SD*`` parse diagnostics followed by the profile's ``SV*`` findings.
        The skill is not modified.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown profile.
    """
    if isinstance(profile, Profile):
        rated = profile
        if rated.name not in PROFILES:
            built_in(rated.name)  # INVALID_PARAM: the name says which fields it knows
    else:
        rated = built_in(profile)
    profile = rated.name
    parse_diags = [
        rerated
        for d in skill.diagnostics
        if d.code.startswith("SD") and (rerated := _under(d, rated)) is not None
    ]
    fm = skill.frontmatter if isinstance(skill.frontmatter, Mapping) else {}
    if not fm and any(d.severity is Severity.ERROR for d in parse_diags):
        # Nothing usable was parsed; the parse errors already say why.
        return parse_diags
    col = _Collector(skill, rated)
    _check_name(col, fm, profile)
    _check_description(col, fm)
    _check_spec_fields(col, fm, profile)
    _check_unknown(col, fm, profile)
    if rated.on("SV402", "SV403"):
        _check_types(col, fm, profile)
    if rated.on("SV404"):
        _check_scripts(col, skill, fm)
    if rated.on("SV501", "SV502", "SV503", "SV504", "SV505"):
        _check_shipped(col, skill, fm)
    _check_file_names(col, skill)
    return parse_diags + col.out


def _check_file_names(col: _Collector, skill: Skill) -> None:
    """SV601 for each listed resource whose path cannot be pinned (shown escaped)."""
    for rel in skill.resources:
        problem = name_problem(rel)
        if problem is not None:
            col.add("SV601", f"file name '{shown(rel)}' {problem}; rename it")


def _under(diag: Diagnostic, profile: Profile) -> Diagnostic | None:
    """A parse diagnostic as ``profile`` rates it (None: off), when the profile lists its
    code: a duplicate key (SD105) is an error under ``agentskills``, as YAML and the
    reference validator have it."""
    if diag.code not in profile.severities:
        return diag
    severity = profile.severities[diag.code]
    if severity is None or severity is diag.severity:
        return None if severity is None else diag
    message = diag.message
    if diag.code == "SD105" and severity is Severity.ERROR:
        message = message.replace("the last value wins", "YAML forbids duplicate keys")
    return dataclasses.replace(diag, severity=severity, message=message)


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
                str(k)
                for k, v in value.items()
                if not isinstance(k, str) or not isinstance(v, str)
                if not (profile == "shipped" and k == "tags" and _tag_list(v))
            ]
            if profile == "shipped" and _tag_list(value.get("tags")):
                col.add(
                    "SV506", "metadata.tags is a list; 'tag-one, tag-two' is spec-valid", "metadata"
                )
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


def _check_unknown(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    known = KNOWN_FIELDS.get(profile, KNOWN_FIELDS["default"])
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


def code_files() -> list[str]:
    """The source files whose code decides what :func:`validate_skill` reports: this
    module, the field tables, and the rule catalogue with its profiles (discovery keys its
    stored validation results by them, so a changed severity is never served stale)."""
    from skilldeck.core import fieldspec
    from skilldeck.core.rules import catalogue, discovery, model, profiles, validation

    modules = (fieldspec, catalogue, discovery, model, profiles, validation)
    return [__file__, *(m.__file__ or "" for m in modules)]


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


def validate_findings(skill: Skill, tool_findings: Sequence[Diagnostic] = ()) -> list[Diagnostic]:
    """What ``validate`` reports for one skill on every face (the CLI, MCP
    ``validate_skill``): its parse and profile findings, body encoding (SD106), then its
    tool findings (``tool_findings``: ST201 is a warning under ``tool-validation: warn``),
    each once."""
    found = [*skill.diagnostics, *body_encoding(skill)]
    found.extend(d for d in tool_findings if d not in found)
    return found


def report_entry(skill: Skill, found: Sequence[Diagnostic]) -> dict[str, Any]:
    """One skill's record in a ``validate`` or ``lint`` report, JSON-ready (the CLI's
    ``skills`` entries and MCP ``validate_skill`` / ``lint_skill``): a finding about the
    SKILL.md itself carries no ``path``."""
    return {
        "path": str(skill.path),
        "name": skill.name,
        "valid": not any(d.severity is Severity.ERROR for d in found),
        "diagnostics": [
            {k: v for k, v in d.to_dict().items() if k != "path"}
            | ({"path": str(d.path)} if d.path and d.path != skill.path else {})
            for d in found
        ],
    }


def lint_report(skill: Skill, lint_findings: Sequence[Diagnostic]) -> list[Diagnostic]:
    """What ``lint`` reports for one skill on every face (the CLI, MCP ``lint_skill``):
    its parse errors (SD), then the lint findings."""
    parse_errors = [
        d for d in skill.diagnostics if d.code.startswith("SD") and d.severity is Severity.ERROR
    ]
    return [*parse_errors, *lint_findings]


def _tag_list(value: Any) -> bool:
    """A YAML list of tags: non-empty strings, at least one."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, str) and t.strip() for t in value)
    )


def _check_shipped(col: _Collector, skill: Skill, fm: Mapping[str, Any]) -> None:
    """The shipped-skill contract: version, tags, a loadable non-empty body, no dead link."""
    raw = fm.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    version = meta.get("version")
    if not isinstance(version, str) or not SEMVER.fullmatch(version):
        shown = "is missing" if version is None else f"is {version!r}"
        col.add("SV502", f"metadata.version {shown}; write it as MAJOR.MINOR.PATCH", "metadata")
    tags = meta.get("tags")
    if not _tag_list(tags) and (
        not isinstance(tags, str) or not any(t.strip() for t in tags.split(","))
    ):
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


def _check_types(col: _Collector, fm: Mapping[str, Any], profile: str) -> None:
    types = FIELD_TYPES.get(profile) or FIELD_TYPES["claude-code"]
    if types.keys().isdisjoint(fm):
        return
    for key, (check, wanted) in types.items():
        if key not in fm:
            continue
        value = fm[key]
        if not check(value):
            col.add("SV402", f"'{key}' must be {wanted}, not {_type_name(value)}", key)
            continue
        allowed = FIELD_VALUES.get(key)
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
