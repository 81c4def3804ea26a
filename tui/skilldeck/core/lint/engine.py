"""The lint engine: every rule's check, run over one skill or a whole catalog.

``lint_skill`` checks one skill (frontmatter, body, files, security; plus shadowing and
description overlap when a catalog is given); ``lint_catalog`` checks many at once with the
cross-skill rules computed in one pass. The frontmatter and description rules are here, the
body rules in :mod:`.body`, the folder rules in :mod:`.files`. Rules are defined in
:mod:`skilldeck.core.rules` (one catalogue with validation's). Validation (spec
conformance) lives in :mod:`skilldeck.core.validate`; lint is about quality and safety.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.fieldspec import SEMVER, metadata_version
from skilldeck.core.lint.body import BODY_CODES, body_rules, body_text
from skilldeck.core.lint.config import LintConfig
from skilldeck.core.lint.files import FILE_CODES, file_rules
from skilldeck.core.lint.findings import Findings
from skilldeck.core.lint.overlap import STOPWORDS, Overlap, find_overlaps, overlaps_with
from skilldeck.core.lint.patterns import INVISIBLE, MACHINE_PATH, harmless_joiner
from skilldeck.core.model import Catalog, Diagnostic, Skill

__all__ = ["lint_catalog", "lint_skill"]


def lint_skill(
    skill: Skill, catalog: Catalog | None = None, config: LintConfig | None = None
) -> list[Diagnostic]:
    """Lint one skill.

    Args:
        skill: A parsed skill.
        catalog: When given, also check shadowing details and description overlap against
            the catalog's active skills (a linear scan; use :func:`lint_catalog` for many).
        config: Rule selection and thresholds (default: every rule, default thresholds).

    Returns:
        ``SL`` diagnostics sorted by line, column and code. Never raises for bad input.
    """
    config = config or LintConfig()
    out = _lint_one(skill, catalog, config)
    if catalog is not None and config.enabled("SL202") and not skill.shadowed:
        found = overlaps_with(
            skill, [s for s in catalog.active() if s.path != skill.path], config.overlap_threshold
        )
        if found is not None:
            _overlap_finding(out, found)
    return _sorted(out.items)


def lint_catalog(
    skills: list[Skill], catalog: Catalog | None, config: LintConfig | None = None
) -> dict[Path, list[Diagnostic]]:
    """Lint many skills; cross-skill rules (overlap, shadowing) run once over the catalog.

    Args:
        skills: The skills to report on (every one gets a key, possibly with no findings).
        catalog: The catalog they belong to (its active skills are the overlap pool);
            ``None`` uses ``skills`` themselves.
        config: Rule selection and thresholds.

    Returns:
        Findings keyed by ``skill.path``.
    """
    config = config or LintConfig()
    pool = catalog.active() if catalog is not None else [s for s in skills if not s.shadowed]
    overlaps: dict[Path, Overlap] = {}
    if config.enabled("SL202"):
        overlaps = find_overlaps(pool, config.overlap_threshold, config.overlap_max_candidates)
    result: dict[Path, list[Diagnostic]] = {}
    for skill in skills:
        out = _lint_one(skill, catalog, config)
        found = overlaps.get(skill.path)
        if found is not None and not skill.shadowed:
            _overlap_finding(out, found)
        result[skill.path] = _sorted(out.items)
    return result


def _sorted(items: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(items, key=lambda d: (d.line or 0, d.column or 0, d.code))


def _overlap_finding(out: Findings, found: Overlap) -> None:
    more = f" (and {found.count - 1} more)" if found.count > 1 else ""
    out.add(
        "SL202",
        f"description overlaps {found.other.name!r} ({found.other.path}) with word-set "
        f"similarity {found.score:.2f}{more}; say what makes this skill different",
        out.field("description"),
        1,
    )


def _lint_one(skill: Skill, catalog: Catalog | None, config: LintConfig) -> Findings:
    out = Findings(skill, config)
    _guarded(out, _description_rules)
    _guarded(out, _name_rules)
    _guarded(out, _frontmatter_rules)
    _guarded(out, _version_rule)
    _guarded(out, lambda o: _shadow_rule(o, catalog))
    if any(out.on(c) for c in BODY_CODES):
        body = body_text(skill)
        if body is not None:
            _guarded(out, lambda o: body_rules(o, body))
    if out.on("SL106"):
        _guarded(out, _encoding_rule)
    if any(out.on(code) for code in FILE_CODES):
        _guarded(out, file_rules)
    return out


def _guarded(out: Findings, rule: Callable[[Findings], None]) -> None:
    """Run a group of rules; a crash becomes an SL000 finding instead of a traceback."""
    try:
        rule(out)
    except Exception as exc:  # a bug in one rule must not stop the run
        out.add("SL000", f"a lint rule crashed on this skill (please report): {exc!r}")


# -- description, name, frontmatter -----------------------------------------------------------

_GENERIC = frozenset(
    """help helps helping helper helpers helpful assist assists assistant stuff thing things
    utility utilities util utils tool tools toolkit misc miscellaneous various general generic
    useful handy task tasks work works working do does doing make makes lots many kind kinds
    sort sorts stuff everything anything something simple basic skill skills function
    functions functionality feature features support supports manage manages management
    handle handles handling""".split()  # noqa: SIM905
)

_CUE = re.compile(
    r"\bwhen(?:ever)?\b|\bif (?:the )?(?:user|you|asked)\b|\btrigger(?:s|ed)?\b"
    r"|\buse (?:it |this(?: skill)? )?(?:for|to|before|after|during|on|with)\b"
    r"|\b(?:before|after) (?:any|every|each|starting|writing|running|committing)\b",
    re.IGNORECASE,
)
_XML_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>\n]*)?/?>")
_RESERVED = ("anthropic", "claude")


def _description_rules(out: Findings) -> None:
    skill = out.skill
    desc = skill.description if isinstance(skill.description, str) else ""
    line = out.field("description")
    text = " ".join(desc.split())
    if not text:
        _missing_description(out, line)
        return
    if len(text) < out.config.min_description_chars:
        out.add(
            "SL001",
            f"description is {len(text)} characters; aim for at least "
            f"{out.config.min_description_chars} that say what the skill does and when",
            line,
            1,
        )
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1]
    meaningful = [w for w in words if w not in STOPWORDS and w not in _GENERIC]
    if len(meaningful) < 2:
        out.add(
            "SL002",
            "description is vague: only generic words; name the task, inputs and outcome",
            line,
            1,
        )
    when = skill.frontmatter.get("when_to_use") if isinstance(skill.frontmatter, dict) else None
    when_text = when if isinstance(when, str) else ""
    if not _CUE.search(text) and not when_text.strip():
        out.add(
            "SL003",
            "description has no 'Use when …' cue saying when a model should load the skill",
            line,
            1,
        )
    _listing_length_rules(out, text, when_text, line)
    tag = _XML_TAG.search(desc)
    if tag:
        out.add("SL006", f"description contains an XML-like tag {tag.group(0)!r}", line, 1)
    machine = MACHINE_PATH.search(desc)
    if machine:
        out.add(
            "SL105",
            f"description contains the machine-specific path {machine.group(0)!r}",
            line,
            1,
        )
    _invisible(out, desc, line, "description")


def _missing_description(out: Findings, line: int | None) -> None:
    """SL011 unless the parser already failed (its SD error says why)."""
    fm = out.skill.frontmatter if isinstance(out.skill.frontmatter, dict) else {}
    if not fm:
        return
    value = fm.get("description")
    if value is None:
        problem = "is missing"
    elif not isinstance(value, str):
        problem = f"is not a string ({type(value).__name__})"
    else:
        problem = "is empty"
    out.add(
        "SL011",
        f"description {problem}: a model cannot match the skill to any request",
        line or 1,
        1,
    )


def _version_rule(out: Findings) -> None:
    """SL012: a version that is set but is not semantic versioning."""
    fm = out.skill.frontmatter if isinstance(out.skill.frontmatter, dict) else {}
    found = metadata_version(fm)
    if found is None:
        return
    where, value = found
    text = str(value).strip() if not isinstance(value, bool) else ""
    if isinstance(value, str | int | float) and SEMVER.fullmatch(text):
        return
    hint = ""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        parts = [*text.split("."), "0", "0"][:3]
        hint = f" such as {'.'.join(str(int(p)) for p in parts)!r}"
    out.add(
        "SL012",
        f"{where} {text or type(value).__name__!r} is not semantic versioning; "
        f"write MAJOR.MINOR.PATCH{hint} as a quoted string",
        out.field(where.split(".")[0]),
        1,
    )


def _encoding_rule(out: Findings) -> None:
    """SL106: a UTF-8 BOM, or body bytes that are not UTF-8."""
    from skilldeck.core.discovery.frontmatter import MAX_BODY_READ, encoding_problems, read_raw

    if out.skill.body_offset <= 0:
        return  # no frontmatter: the parse error says why
    try:
        data = read_raw(out.skill)
    except (SkilldeckError, OSError, ValueError):
        return
    final = len(data) < MAX_BODY_READ
    for _code, message, line, column in encoding_problems(data, out.skill.body_offset, final=final):
        out.add("SL106", message, line, column)


def _listing_length_rules(out: Findings, text: str, when_text: str, line: int | None) -> None:
    """SL004 (the listing entry is cut) or SL005 (only its front survives a budget)."""
    listed = len(text) + (len(" ".join(when_text.split())) if when_text else 0)
    if listed > out.config.listing_max_chars:
        out.add(
            "SL004",
            f"description{' + when_to_use' if when_text else ''} is {listed} characters; "
            f"Claude Code cuts listing entries at {out.config.listing_max_chars}",
            line,
            1,
        )
    elif len(text) > out.config.listing_front_chars:
        out.add(
            "SL005",
            f"description is {len(text)} characters; budgeted listings keep about the first "
            f"{out.config.listing_front_chars}, so front-load the key use case",
            line,
            1,
        )


def _name_rules(out: Findings) -> None:
    skill = out.skill
    raw = skill.frontmatter.get("name") if isinstance(skill.frontmatter, dict) else None
    line = out.field("name")
    if not isinstance(raw, str) or not raw:
        return
    tag = _XML_TAG.search(raw)
    if tag:
        out.add("SL006", f"name contains an XML-like tag {tag.group(0)!r}", line, 1)
    low = raw.lower()
    for word in _RESERVED:
        if word in low:
            out.add("SL007", f"name {raw!r} contains the reserved word {word!r}", line, 1)
    folder = skill.base_dir.name
    if raw != folder:
        out.add("SL008", f"name {raw!r} does not match its folder name {folder!r}", line, 1)
    _invisible(out, raw, line, "name")


def _frontmatter_rules(out: Findings) -> None:
    skill = out.skill
    raw = skill.allowed_tools_raw
    if isinstance(raw, str) and _has_top_level_comma(raw):
        fixed = " ".join(p.strip() for p in _split_top_level(raw) if p.strip())
        out.add(
            "SL009",
            f"allowed-tools uses commas; the spec wants spaces: {fixed!r}",
            out.field("allowed-tools"),
            1,
        )
    for pattern in skill.triggers.patterns:
        try:
            re.compile(pattern)
        except (re.error, TypeError, ValueError, RecursionError) as exc:
            out.add(
                "SL010",
                f"trigger pattern {pattern!r} is not a valid regular expression: {exc}",
                out.field("triggers"),
                1,
            )
    fm = skill.frontmatter if isinstance(skill.frontmatter, dict) else {}
    if not skill.examples and "examples" not in fm:
        out.add(
            "SL013",
            "no examples: add a few requests this skill answers ('examples'); search "
            "matches new requests against them",
            out.field("description"),
            1,
        )
    for key in ("when_to_use", "argument-hint"):
        value = fm.get(key)
        if isinstance(value, str):
            _invisible(out, value, out.field(key), key)


def _has_top_level_comma(text: str) -> bool:
    return len(_split_top_level(text)) > 1


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _shadow_rule(out: Findings, catalog: Catalog | None) -> None:
    skill = out.skill
    if skill.shadowed_by is None:
        return
    winner = catalog.by_path(skill.shadowed_by) if catalog is not None else None
    who = (
        f"{winner.name!r} from {winner.source.value} ({winner.path})"
        if winner is not None
        else str(skill.shadowed_by)
    )
    # shadow_reason reads "shadowed by PATH (why)": only the "(why)" adds to the message
    why = skill.shadow_reason.removeprefix(f"shadowed by {skill.shadowed_by}").strip()
    reason = f" {why}" if why else ""
    out.add(
        "SL201",
        f"shadowed by {who}; this copy is never used{reason}",
        out.field("name"),
        1,
    )


def _invisible(out: Findings, text: str, line: int | None, where: str) -> None:
    if not out.on("SL301"):
        return
    for m in INVISIBLE.finditer(text):
        if harmless_joiner(text, m.start()):
            continue
        ch = m.group(0)
        out.add(
            "SL301",
            f"{where} contains invisible U+{ord(ch):04X} {unicodedata.name(ch, 'character')}",
            line,
            1,
        )
        return
