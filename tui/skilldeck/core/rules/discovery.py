"""The discovery rules (``SD``): what reading a skills root and a SKILL.md can find.

``SD1xx`` are about one SKILL.md (its bytes, its frontmatter, its fields), ``SD2xx`` about
a root, the local store and a root's registry file. :mod:`skilldeck.core.discovery` and
:mod:`skilldeck.core.registry` report them; a skill with an ``SD`` error is invalid.
"""

from __future__ import annotations

from skilldeck.core.model import Severity
from skilldeck.core.rules.model import Rule

W, E, INFO = Severity.WARNING, Severity.ERROR, Severity.INFO

_SAVE_UTF8 = "Save the file as UTF-8 without a byte order mark."

DISCOVERY_RULES = (
    Rule(
        "SD101",
        "no-frontmatter",
        E,
        "The SKILL.md does not start with a '---' line, so it has no frontmatter.",
        explanation="Start the file with '---', then name and description, then '---'.",
    ),
    Rule(
        "SD102",
        "frontmatter-not-closed",
        E,
        "The frontmatter's opening '---' is never closed by a second '---' line.",
        explanation="Add a line that is exactly '---' after the last frontmatter field.",
    ),
    Rule(
        "SD103",
        "yaml-syntax",
        E,
        "The frontmatter is not valid YAML (the finding gives the line and column).",
        explanation="Quote values holding ': ' or starting with a special character.",
    ),
    Rule(
        "SD104",
        "frontmatter-not-mapping",
        E,
        "The frontmatter is empty or is not a mapping of fields.",
        explanation="Write 'name: …' and 'description: …' lines between the fences.",
    ),
    Rule(
        "SD105",
        "duplicate-key",
        W,
        "A key appears twice in the frontmatter: the last value wins. YAML forbids it, so "
        "the agentskills and shipped profiles rate it an error.",
        explanation="Keep one of the two values.",
    ),
    Rule(
        "SD106",
        "not-utf8",
        W,
        "Bytes that are not UTF-8: they are decoded as U+FFFD replacement characters (the "
        "body is checked by validate and lint's SL106).",
        explanation=_SAVE_UTF8,
    ),
    Rule(
        "SD107",
        "nul-bytes",
        E,
        "The file contains NUL bytes: it is binary or mis-encoded.",
        explanation=_SAVE_UTF8,
    ),
    Rule(
        "SD108",
        "file-too-large",
        W,
        "The SKILL.md is larger than the size limit: only its frontmatter was read.",
        explanation="Move detail into reference files the skill links to.",
    ),
    Rule(
        "SD109",
        "file-name-case",
        W,
        "The file is named skill.md (or another case) instead of SKILL.md.",
        explanation="Rename it SKILL.md: other hosts look for that name only.",
    ),
    Rule(
        "SD110",
        "unreadable",
        E,
        "The SKILL.md cannot be read (permissions, a vanished file, an I/O error).",
    ),
    Rule(
        "SD111",
        "name-unusable",
        W,
        "No usable name (missing, blank or not a scalar): the folder name is used instead.",
        explanation="Write 'name: <folder-name>'.",
    ),
    Rule(
        "SD112",
        "field-type-coerced",
        W,
        "A field Skilldeck reads has the wrong type and was ignored or coerced.",
        explanation="Give the field the type the finding names.",
    ),
    Rule(
        "SD114",
        "frontmatter-too-large",
        E,
        "No closing '---' within the frontmatter size limit.",
        explanation="Keep the frontmatter short; long text belongs in the body.",
    ),
    Rule(
        "SD115",
        "frontmatter-too-complex",
        E,
        "The frontmatter expands too much (aliases or recursion) or nests too deeply: ignored.",
    ),
    Rule("SD116", "crlf", INFO, "CRLF line endings (accepted)."),
    Rule(
        "SD117",
        "wide-encoding",
        E,
        "The file starts with a UTF-16 or UTF-32 byte order mark: it is not UTF-8.",
        explanation=_SAVE_UTF8,
    ),
    Rule(
        "SD118",
        "not-confined",
        E,
        "The SKILL.md breaks the confinement rule (resolves outside the skill folder, is a "
        "device, FIFO or socket, or has several hard links): it is not read.",
        explanation="Make the SKILL.md a regular file inside its skill folder.",
    ),
    Rule(
        "SD119",
        "utf8-bom",
        W,
        "The file starts with a UTF-8 byte order mark: accepted here, other hosts may not.",
        explanation=_SAVE_UTF8,
    ),
    Rule(
        "SD120",
        "parameters-invalid",
        W,
        "A 'parameters' entry is not a mapping with a valid name and type: it is ignored.",
    ),
    Rule(
        "SD121",
        "examples-invalid",
        W,
        "An 'examples' entry is neither a string nor a mapping with a 'request' string and "
        "a 'does' (or 'response') string: it is ignored.",
    ),
    Rule(
        "SD122",
        "instructions-invalid",
        W,
        "'instructions' is not one mapping naming where the instructions are: the body is used.",
    ),
    Rule(
        "SD199",
        "parser-error",
        E,
        "The parser failed unexpectedly on this file: a bug in Skilldeck; the skill still shows.",
        explanation="Please report it with the SKILL.md.",
    ),
    Rule("SD201", "root-missing", W, "A root folder given explicitly does not exist."),
    Rule("SD202", "folder-unreadable", W, "A folder under a root cannot be read."),
    Rule(
        "SD203",
        "symlink-loop",
        W,
        "A symlink points back to a folder above it: it is not followed.",
    ),
    Rule(
        "SD204",
        "too-deep",
        W,
        "Scanning stopped at the depth limit: skills deeper down are not found.",
    ),
    Rule(
        "SD205",
        "validation-crashed",
        E,
        "Validation failed unexpectedly for a skill: a bug in Skilldeck; the skill still shows.",
        explanation="Please report it with the SKILL.md.",
    ),
    Rule(
        "SD206",
        "store-not-updated",
        W,
        "The local store could not be updated (disk full, busy, unusable): skills were read "
        "from their files.",
    ),
    Rule(
        "SD210",
        "registry-ignored",
        W,
        "A root's registry file cannot be read or is not a JSON object: it is ignored.",
    ),
    Rule(
        "SD211",
        "registry-entry-invalid",
        W,
        "A registry entry has a field of the wrong type (enabled, owner, tags, "
        "tool-validation): that field is ignored.",
    ),
)
