"""The validation rules (``SV``): does a skill's frontmatter follow a specification?

``SV1xx`` name, ``SV2xx`` description, ``SV3xx`` the other specification fields, ``SV4xx``
unknown fields and Claude Code / Skilldeck field types, ``SV5xx`` the shipped-skill contract
(the body, version, tags, links), ``SV6xx`` file names. The severity here is the default;
each profile of :mod:`.profiles` changes some (or turns them off).
:mod:`skilldeck.core.validate` reports them.
"""

from __future__ import annotations

from skilldeck.core.model import Severity
from skilldeck.core.rules.model import Rule

W, E = Severity.WARNING, Severity.ERROR

VALIDATION_RULES = (
    Rule("SV101", "name-missing", E, "The name field is missing."),
    Rule("SV102", "name-not-string", E, "The name is not a string."),
    Rule("SV103", "name-length", E, "The name is empty or longer than 64 characters."),
    Rule(
        "SV104",
        "name-charset",
        E,
        "The name has characters other than lowercase a-z, 0-9 and hyphens.",
    ),
    Rule(
        "SV105",
        "name-hyphens",
        E,
        "The name starts or ends with a hyphen or has two hyphens in a row.",
    ),
    Rule("SV106", "name-folder-mismatch", E, "The name differs from the skill folder name."),
    Rule("SV201", "description-missing", E, "The description field is missing."),
    Rule("SV202", "description-not-string", E, "The description is not a string."),
    Rule("SV203", "description-empty", E, "The description is empty."),
    Rule("SV204", "description-too-long", E, "The description is longer than 1024 characters."),
    Rule("SV301", "compatibility-invalid", E, "compatibility is not a string of 1-500 characters."),
    Rule(
        "SV302", "metadata-invalid", E, "metadata is not a mapping of string keys to string values."
    ),
    Rule(
        "SV303",
        "allowed-tools-invalid",
        E,
        "allowed-tools is not a space-separated string (or, outside the spec, a list).",
    ),
    Rule("SV304", "license-invalid", E, "license is not a string."),
    Rule("SV401", "unknown-field", E, "A top-level field the profile does not know."),
    Rule(
        "SV402",
        "field-type",
        E,
        "A known field has the wrong type (boolean, string, list, mapping, integer).",
    ),
    Rule(
        "SV403",
        "field-value",
        W,
        "A known field has a value outside its documented set (context, shell, effort).",
    ),
    Rule(
        "SV404",
        "script-missing",
        E,
        "A script declared in 'scripts' is missing or resolves outside the skill folder.",
    ),
    Rule("SV501", "body-empty", E, "The SKILL.md body is empty."),
    Rule(
        "SV502",
        "version-not-semver",
        E,
        "metadata.version is missing or not semantic versioning (MAJOR.MINOR.PATCH).",
    ),
    Rule(
        "SV503",
        "tags-missing",
        E,
        "metadata.tags is missing or neither a comma-separated string nor a list of tags.",
    ),
    Rule(
        "SV504",
        "dead-link",
        E,
        "A relative link or referenced file that does not exist in the skill folder.",
    ),
    Rule(
        "SV505",
        "not-loadable",
        E,
        "The skill's body cannot be read, so the skill cannot be loaded.",
    ),
    Rule(
        "SV506",
        "tags-list",
        W,
        "metadata.tags is a YAML list: accepted (the FrontMCP registry's form), but the "
        "Agent Skills specification wants string metadata values, so other hosts may not.",
    ),
    Rule(
        "SV601",
        "unsafe-file-name",
        E,
        "A file of the skill has a name holding a control character (newline, escape, "
        "DEL, C1), a line separator, a bidirectional control, a backslash, bytes that are "
        "not UTF-8 or a form other than Unicode NFKC (two names that look the same): the "
        "skill cannot be approved, allowed, run or installed.",
    ),
)
