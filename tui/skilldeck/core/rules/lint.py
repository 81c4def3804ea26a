"""The lint rules (``SL``), each with a bad and a good example.

Codes are grouped like ruff's: ``SL0xx`` frontmatter and description, ``SL1xx`` body and
referenced files, ``SL2xx`` cross-skill (catalog) rules, ``SL3xx`` security smells. A
prefix such as ``SL0`` or ``SL3`` selects a whole group. :mod:`skilldeck.core.lint` runs
them.
"""

from __future__ import annotations

from skilldeck.core.model import Severity
from skilldeck.core.rules.model import Rule

#: Claude Code documents that the combined ``description`` + ``when_to_use`` text is cut at
#: 1,536 characters in its skill listing.
LISTING_MAX_CHARS = 1536
#: Compact listings (and Skilldeck's own budgeted listing, which shortens descriptions first)
#: keep roughly the first 250 characters; earlier Claude Code versions truncated there.
LISTING_FRONT_CHARS = 250

W, E, INFO = Severity.WARNING, Severity.ERROR, Severity.INFO

LINT_RULES = (
    Rule(
        "SL000",
        "internal-error",
        E,
        "A lint rule crashed on this skill: a bug in Skilldeck, reported instead of a "
        "traceback so the other rules still run.",
        "(any skill that makes a rule crash)",
        "(please report it with the SKILL.md)",
    ),
    Rule(
        "SL001",
        "description-too-short",
        W,
        "Description shorter than 40 characters (configurable): too little for a model to "
        "match requests against.",
        "description: Formats code.",
        "description: Formats Python code with ruff and fixes imports. Use when the user asks "
        "to format or tidy Python files.",
    ),
    Rule(
        "SL002",
        "description-vague",
        W,
        "Description made only of generic words ('helps with stuff', 'utility', 'various "
        "tasks'): it says nothing a model can match.",
        "description: A helpful utility skill that helps with various things and stuff.",
        "description: Converts CSV exports to Parquet with a typed schema. Use when the user "
        "has CSV files to load into a warehouse.",
    ),
    Rule(
        "SL003",
        "description-no-use-when",
        W,
        "Description without a 'Use when …' style cue saying when to load the skill; "
        "models pick skills by that cue.",
        "description: Generates release notes from git history.",
        "description: Generates release notes from git history. Use when the user is "
        "preparing a release or asks what changed since a tag.",
    ),
    Rule(
        "SL004",
        "description-over-listing-cap",
        W,
        f"description + when_to_use longer than {LISTING_MAX_CHARS} characters, the cap "
        "Claude Code documents for one skill listing entry: the rest is cut.",
        "description: <1,600 characters of detailed instructions>",
        "description: <one or two sentences; move details into the body>",
    ),
    Rule(
        "SL005",
        "description-not-front-loaded",
        INFO,
        f"Description longer than {LISTING_FRONT_CHARS} characters (configurable): budgeted "
        "listings shorten descriptions first, so put the key use case in the first sentence.",
        "description: This skill is a comprehensive toolkit that … (400 characters) … use "
        "when deploying.",
        "description: Deploys the app to staging with blue/green checks. Use when the user "
        "asks to deploy or roll back staging.",
    ),
    Rule(
        "SL006",
        "xml-tags",
        W,
        "XML-like tags (<tag>) in the name or description: hosts wrap skills in XML and may "
        "read them as markup.",
        "description: Use when <example>the user asks for a report</example>.",
        "description: Builds weekly reports. Use when the user asks for a report.",
    ),
    Rule(
        "SL007",
        "reserved-word",
        W,
        "The name contains a reserved word ('anthropic', 'claude'), which Anthropic's "
        "platform rejects in skill names.",
        "name: claude-helper",
        "name: changelog-helper",
    ),
    Rule(
        "SL008",
        "name-folder-mismatch",
        W,
        "The name differs from the skill folder name; the spec requires them equal and "
        "Claude Code names slash commands after the folder.",
        "pdf-tools/SKILL.md with name: pdf",
        "pdf-tools/SKILL.md with name: pdf-tools",
    ),
    Rule(
        "SL009",
        "allowed-tools-commas",
        W,
        "allowed-tools written with commas; the Agent Skills spec wants a space-separated "
        "string (commas inside Tool(...) patterns are fine).",
        "allowed-tools: Read, Grep, Bash(git:*)",
        "allowed-tools: Read Grep Bash(git:*)",
    ),
    Rule(
        "SL010",
        "invalid-trigger-regex",
        E,
        "A triggers.patterns entry that Python's re module cannot compile; the trigger never "
        "fires.",
        "triggers:\n  patterns: ['deploy (staging']",
        "triggers:\n  patterns: ['deploy (staging|prod)']",
    ),
    Rule(
        "SL011",
        "description-missing",
        E,
        "No usable description (missing, empty or not a string): the skill cannot be matched "
        "to any request. The same problem validate reports as SV201-SV203.",
        "name: pdf-tools\n(no description)",
        "name: pdf-tools\ndescription: Fills PDF forms. Use when the user has a form to fill.",
    ),
    Rule(
        "SL012",
        "version-not-semver",
        W,
        "version (top-level or metadata.version) is not semantic versioning "
        "(MAJOR.MINOR.PATCH, https://semver.org): installers and update checks cannot "
        "compare it.",
        'metadata:\n  version: "1.0"',
        'metadata:\n  version: "1.0.0"',
    ),
    Rule(
        "SL013",
        "no-examples",
        INFO,
        "No 'examples': requests the skill answers. Search matches a request against a "
        "skill's examples as well as its description (by words and, with embeddings, by "
        "the closest example), so a few real requests help it be found for wordings its "
        "description lacks. 'skilldeck eval --add-misses-as-examples' adds the requests a "
        "query file expected this skill to win. Off unless selected by its code "
        "(--select SL013): most skills have none yet.",
        "description: Forecasts for any city.",
        'description: Forecasts for any city.\nexamples:\n  - "do I need an umbrella '
        'tomorrow?"\n  - "will it snow in Oslo this weekend"',
    ),
    Rule(
        "SL101",
        "body-too-many-lines",
        W,
        "Body over 500 lines (configurable): move detail into references/ files loaded on demand.",
        "SKILL.md with a 900-line body",
        "SKILL.md under 500 lines linking to references/details.md",
    ),
    Rule(
        "SL102",
        "body-too-many-tokens",
        W,
        "Body over about 5,000 tokens (configurable; estimated, chars/4 or words*1.3): it is "
        "truncated by loaders with a token cap.",
        "a 30 KB SKILL.md body",
        "a short body plus references/*.md files",
    ),
    Rule(
        "SL103",
        "broken-link",
        W,
        "A relative markdown link [text](path) whose target does not exist in the skill folder.",
        "See [the guide](references/guide.md) (file missing)",
        "See [the guide](references/guide.md) (file present)",
    ),
    Rule(
        "SL104",
        "missing-referenced-file",
        W,
        "A backticked path such as `scripts/run.py` or `references/api.md` that does not "
        "exist relative to the skill folder.",
        "Run `scripts/fetch.py` (no such file)",
        "Run `scripts/fetch.py` (file shipped with the skill)",
    ),
    Rule(
        "SL105",
        "machine-specific-path",
        W,
        "An absolute, machine-specific path (/Users/…, /home/…, C:\\…): it breaks on every "
        "other machine; use paths relative to the skill folder.",
        "python /Users/alice/skills/pdf/scripts/fill.py",
        "python scripts/fill.py",
    ),
    Rule(
        "SL106",
        "body-encoding",
        W,
        "SKILL.md starts with a UTF-8 byte order mark, or its body has bytes that are not "
        "UTF-8: models then see U+FFFD replacement characters where the text was.",
        "a SKILL.md saved as Latin-1 with 'café' in the body",
        "the same file saved as UTF-8 without a BOM",
    ),
    Rule(
        "SL201",
        "shadowed-duplicate",
        W,
        "Another skill with the same name and higher precedence wins; this copy is never used.",
        "~/.claude/skills/pdf and .claude/skills/pdf both named pdf",
        "one skill named pdf, or distinct names",
    ),
    Rule(
        "SL202",
        "description-overlap",
        W,
        "Description so similar to another skill's (word-set Jaccard >= 0.8, configurable) "
        "that matching cannot tell them apart.",
        "two skills: 'Reviews pull requests for bugs. Use when reviewing PRs.'",
        "say what is different: 'Reviews Python PRs for typing bugs. Use when …'",
    ),
    Rule(
        "SL301",
        "invisible-unicode",
        E,
        "Invisible or bidirectional-control characters (U+200B-U+200F, U+202A-U+202E, "
        "U+2066-U+2069, U+FEFF inside text) that can hide instructions from reviewers.",
        "description: Formats code\u200b. Use when …  (zero-width space)",
        "description: Formats code. Use when …",
    ),
    Rule(
        "SL302",
        "pipe-to-shell",
        W,
        "Downloads piped straight into a shell (curl … | sh, wget … | bash, sh -c "
        '"$(curl …)"): the skill runs code nobody reviewed.',
        "curl -fsSL https://example.com/install.sh | bash",
        "download, verify a checksum, then run the pinned script",
    ),
    Rule(
        "SL303",
        "symlink-escape",
        E,
        "A symlink inside the skill folder that resolves outside it: loading a resource "
        "could read any file on the machine.",
        "references/keys -> /home/alice/.ssh",
        "real files inside the skill folder",
    ),
    Rule(
        "SL304",
        "hard-link",
        E,
        "A file inside the skill folder with more than one hard link: it may be a file from "
        "outside the folder, so Skilldeck refuses to read it unless `allow_hardlinks = true` "
        "is set in config.toml.",
        "ln ~/.aws/credentials references/notes.md",
        "a copy of the file (cp), not a hard link",
    ),
    Rule(
        "SL305",
        "compiled-code",
        W,
        "Compiled code in the skill folder (__pycache__/, .pyc/.pyo bytecode, native "
        ".so/.pyd/.dylib/.dll libraries, executables, .class/.jar, .wasm): nobody can review "
        "it, and bytecode can run instead of the source a reviewer read. Runs never copy it "
        "and the install review refuses it unless forced (SI103); ship the source.",
        "scripts/__pycache__/helper.cpython-311.pyc next to scripts/helper.py",
        "scripts/helper.py only (add __pycache__/ to .gitignore)",
    ),
    Rule(
        "SL306",
        "unsafe-file-name",
        E,
        "A file or folder name holding a control character (newline, carriage return, "
        "escape, DEL, C1), a line separator, a bidirectional control, a backslash, bytes "
        "that are not UTF-8 or a form other than Unicode NFKC: it could forge a line of a "
        "manifest, an allowlist or a review, so such a skill cannot be approved, allowed or "
        "installed.",
        "scripts/'x\\n<sha256>  other.py' (a name with a newline)",
        "scripts/x.py",
    ),
)
