"""The lint engine: every rule's check, run over one skill or a whole catalog.

``lint_skill`` checks one skill (frontmatter, body, files, security; plus shadowing and
description overlap when a catalog is given); ``lint_catalog`` checks many at once with the
cross-skill rules computed in one pass. Rules are listed in :data:`RULES` and documented by
:func:`rules_reference`. Validation (spec conformance) lives in
:mod:`skilldeck.core.validate`; lint is about quality and safety.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from skilldeck.core.config import hardlinks_allowed
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.lint.config import LintConfig
from skilldeck.core.lint.overlap import STOPWORDS, Overlap, find_overlaps, overlaps_with
from skilldeck.core.lint.rules import RULES
from skilldeck.core.model import Catalog, Diagnostic, Skill
from skilldeck.core.validate import SEMVER, metadata_version

__all__ = ["INVISIBLE", "PIPE_SHELL", "lint_catalog", "lint_skill", "suppressed_codes"]

MAX_FINDINGS_PER_RULE = 50
MAX_BODY_BYTES = 4 * 1024 * 1024
"""Bodies are read up to this size; longer ones are flagged by SL101/SL102 anyway."""
MAX_WALK_ENTRIES = 5000
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})


class _Out:
    """Collects findings for one skill, honouring the configuration."""

    def __init__(self, skill: Skill, config: LintConfig) -> None:
        self.skill = skill
        self.config = config
        self.items: list[Diagnostic] = []
        self._per_rule: dict[str, int] = {}
        self.suppressed = suppressed_codes(skill)

    def on(self, code: str) -> bool:
        return self.config.enabled(code)

    def add(
        self, code: str, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        if not self.config.enabled(code) or code.startswith(self.suppressed):
            return
        n = self._per_rule.get(code, 0)
        if n >= MAX_FINDINGS_PER_RULE:
            return
        self._per_rule[code] = n + 1
        self.items.append(
            Diagnostic(code, RULES[code].severity, message, self.skill.path, line, column)
        )

    def field(self, key: str) -> int | None:
        return self.skill.field_lines.get(key)


SUPPRESS_KEY = "skilldeck-lint-ignore"


def suppressed_codes(skill: Skill) -> tuple[str, ...]:
    """Codes or prefixes a skill silences for itself.

    Written as ``metadata: {skilldeck-lint-ignore: "SL104 SL005"}`` (space- or
    comma-separated), which keeps the frontmatter valid under the Agent Skills spec.
    """
    meta = skill.frontmatter.get("metadata") if isinstance(skill.frontmatter, dict) else None
    raw = meta.get(SUPPRESS_KEY) if isinstance(meta, dict) else None
    if not isinstance(raw, str):
        return ()
    return tuple(c.upper() for c in re.split(r"[\s,]+", raw) if c.strip())


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


def _overlap_finding(out: _Out, found: Overlap) -> None:
    more = f" (and {found.count - 1} more)" if found.count > 1 else ""
    out.add(
        "SL202",
        f"description overlaps {found.other.name!r} ({found.other.path}) with word-set "
        f"similarity {found.score:.2f}{more}; say what makes this skill different",
        out.field("description"),
        1,
    )


def _lint_one(skill: Skill, catalog: Catalog | None, config: LintConfig) -> _Out:
    out = _Out(skill, config)
    _guarded(out, _description_rules)
    _guarded(out, _name_rules)
    _guarded(out, _frontmatter_rules)
    _guarded(out, _version_rule)
    _guarded(out, lambda o: _shadow_rule(o, catalog))
    if any(out.on(c) for c in _BODY_CODES):
        body = _read_body(skill)
        if body is not None:
            _guarded(out, lambda o: _body_rules(o, body))
    if out.on("SL106"):
        _guarded(out, _encoding_rule)
    if out.on("SL303") or out.on("SL304"):
        _guarded(out, _symlink_rule)
    return out


def _guarded(out: _Out, rule: Callable[[_Out], None]) -> None:
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
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Invisible and bidirectional-control characters (SL301); also used on any text file."""
_JOINERS = frozenset("\u200c\u200d")


def _description_rules(out: _Out) -> None:
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
    machine = _MACHINE_PATH.search(desc)
    if machine:
        out.add(
            "SL105",
            f"description contains the machine-specific path {machine.group(0)!r}",
            line,
            1,
        )
    _invisible(out, desc, line, "description")


def _missing_description(out: _Out, line: int | None) -> None:
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


def _version_rule(out: _Out) -> None:
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


def _encoding_rule(out: _Out) -> None:
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


def _listing_length_rules(out: _Out, text: str, when_text: str, line: int | None) -> None:
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


def _name_rules(out: _Out) -> None:
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


def _frontmatter_rules(out: _Out) -> None:
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


def _shadow_rule(out: _Out, catalog: Catalog | None) -> None:
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


def _invisible(out: _Out, text: str, line: int | None, where: str) -> None:
    if not out.on("SL301"):
        return
    for m in INVISIBLE.finditer(text):
        if _harmless_joiner(text, m.start()):
            continue
        ch = m.group(0)
        out.add(
            "SL301",
            f"{where} contains invisible U+{ord(ch):04X} {unicodedata.name(ch, 'character')}",
            line,
            1,
        )
        return


def _harmless_joiner(text: str, i: int) -> bool:
    """ZWJ/ZWNJ between non-ASCII characters (emoji sequences, Indic and Persian text)."""
    if text[i] not in _JOINERS:
        return False
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    return bool(before) and bool(after) and (ord(before) > 127 and ord(after) > 127)


# -- body ------------------------------------------------------------------------------------

_BODY_CODES = ("SL101", "SL102", "SL103", "SL104", "SL105", "SL301", "SL302")

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"!?\[(?:[^\]\n]|\][^(\n])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)\n]*)?\)")
_REF_DEF = re.compile(r"^\s{0,3}\[(?!\^)[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_SKILL_DIR_PREFIX = re.compile(
    r"^(?:\./)?(?:\$\{?\w*(?:SKILL_DIR|SKILL_ROOT|BASE_DIR|baseDir|skill_dir)\}?/"
    r"|\{\w*(?:baseDir|SKILL_DIR|skill_dir)\}/)"
)
_RESOURCE_PATH = re.compile(
    r"^(?:\./)?(?:scripts|references|reference|assets|templates|examples|resources)/"
    r"[\w@%+=:,.-]+(?:/[\w@%+=:,.-]+)*\.[A-Za-z0-9]{1,8}$"
)
_MACHINE_PATH = re.compile(
    r"(?<![\w.~$/-])(/Users/[^/\s'\"`)<>]+|/home/[^/\s'\"`)<>]+|[A-Za-z]:\\{1,2}[\w$.-][^\s'\"`)<>]*)"
)
PIPE_SHELL = re.compile(
    r"\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:ba|z|da|k|fi)?sh\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"
    r"|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*iex\b",
    re.IGNORECASE,
)
"""A download piped straight into a shell (SL302); also used on scripts and resources."""
_SCHEME = re.compile(r"^[A-Za-z][\w+.-]*:")


def _read_body(skill: Skill) -> str | None:
    try:
        from skilldeck.core.discovery.frontmatter import read_body
    except ImportError:  # the parser is not installed yet
        return None
    try:
        return read_body(skill, MAX_BODY_BYTES)
    except SkilldeckError:
        return None
    except (OSError, ValueError):
        return None


def _body_rules(out: _Out, body: str) -> None:
    skill = out.skill
    config = out.config
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > config.max_body_lines:
        out.add(
            "SL101",
            f"body is {len(lines)} lines; keep it under {config.max_body_lines} and move "
            "detail into reference files",
            skill.body_line + config.max_body_lines,
            1,
        )
    if out.on("SL102"):
        tokens = _estimate_tokens(body)
        if tokens > config.max_body_tokens:
            out.add(
                "SL102",
                f"body is about {tokens} tokens; keep it under {config.max_body_tokens}",
                skill.body_line,
                1,
            )
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text) + 1)

    def where(offset: int) -> tuple[int, int]:
        i = bisect_right(starts, offset) - 1
        return skill.body_line + i, offset - starts[i] + 1

    _whole_body_rules(out, body, where)
    if out.on("SL103") or out.on("SL104"):
        _link_rules(out, lines)


def _whole_body_rules(out: _Out, body: str, where: Callable[[int], tuple[int, int]]) -> None:
    if out.on("SL301"):
        last = -1
        for m in INVISIBLE.finditer(body):
            if (m.start() == 0 and m.group(0) == "\ufeff") or _harmless_joiner(body, m.start()):
                continue
            line, column = where(m.start())
            if line == last:
                continue
            last = line
            ch = m.group(0)
            out.add(
                "SL301",
                f"body contains invisible U+{ord(ch):04X} {unicodedata.name(ch, 'character')}",
                line,
                column,
            )
    low = body.lower()
    if out.on("SL302") and any(w in low for w in ("curl", "wget", "iwr", "irm", "invoke-")):
        for m in PIPE_SHELL.finditer(body):
            line, column = where(m.start())
            out.add(
                "SL302",
                f"download piped into a shell: {m.group(0).strip()[:80]!r}",
                line,
                column,
            )
    if out.on("SL105") and ("/users/" in low or "/home/" in low or ":\\" in body):
        last = -1
        for m in _MACHINE_PATH.finditer(body):
            line, column = where(m.start())
            if line == last:
                continue
            last = line
            out.add(
                "SL105",
                f"machine-specific absolute path {m.group(0)!r}; use a path relative "
                "to the skill folder",
                line,
                column,
            )


def _link_rules(out: _Out, lines: list[str]) -> None:
    skill = out.skill
    base = str(skill.base_dir)
    known = set(skill.resources)
    exists_cache: dict[str, bool] = {}

    def exists(rel: str) -> bool:
        hit = exists_cache.get(rel)
        if hit is None:
            clean = posixpath.normpath(rel)
            try:
                hit = clean in known or os.path.exists(os.path.join(base, rel))
            except (OSError, ValueError):
                hit = True
            exists_cache[rel] = hit
        return hit

    in_fence = False
    fence_mark = ""
    for i, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped[:3] in ("```", "~~~"):
            fence = _FENCE.match(text)
            if fence:
                mark = fence.group(1)
                if not in_fence:
                    in_fence, fence_mark = True, mark[0] * 3
                elif mark.startswith(fence_mark) and not stripped[len(mark) :].strip():
                    in_fence = False
                continue
        if in_fence or ("](" not in text and "`" not in text and "]:" not in text):
            continue
        lineno = skill.body_line + i
        for m in _LINK.finditer(text):
            _check_link(out, m.group(1), lineno, m.start(1) + 1, exists)
        ref = _REF_DEF.match(text)
        if ref:
            _check_link(out, ref.group(1), lineno, ref.start(1) + 1, exists)
        if out.on("SL104"):
            for m in _CODE_SPAN.finditer(text):
                for token in m.group(1).split():
                    rel = _SKILL_DIR_PREFIX.sub("", token.strip("'\"()[],;:"))
                    if _RESOURCE_PATH.match(rel) and not exists(rel):
                        out.add(
                            "SL104",
                            f"referenced file {rel!r} does not exist in the skill folder",
                            lineno,
                            m.start(1) + 1,
                        )


def _check_link(
    out: _Out, target: str, line: int, column: int, exists: Callable[[str], bool]
) -> None:
    if target.startswith(("#", "/", "~", "$", "{", "<", "%")) or _SCHEME.match(target):
        return
    rel = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not rel or any(c in rel for c in "{}*<>|"):
        return
    if not exists(rel):
        out.add("SL103", f"link target {rel!r} does not exist", line, column)


def _estimate_tokens(text: str) -> int:
    try:
        from skilldeck.core.tokens import estimate_tokens
    except ImportError:
        return (len(text) + 3) // 4
    return estimate_tokens(text)


# -- files -----------------------------------------------------------------------------------


def _hard_link_rule(out: _Out, entry: os.DirEntry[str], real_base: Path) -> None:
    links = entry.stat(follow_symlinks=False).st_nlink
    if links > 1 and out.on("SL304") and not hardlinks_allowed():
        rel = Path(entry.path).relative_to(real_base).as_posix()
        out.add("SL304", f"{rel!r} has {links} hard links; it will not be read")


def _symlink_rule(out: _Out) -> None:
    try:
        real_base = out.skill.base_dir.resolve()
    except (OSError, RuntimeError):
        return
    seen = 0
    stack = [real_base]
    while stack and seen < MAX_WALK_ENTRIES:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                break
            try:
                if entry.is_symlink():
                    target = Path(entry.path).resolve()
                    if not target.is_relative_to(real_base):
                        rel = Path(entry.path).relative_to(real_base).as_posix()
                        out.add(
                            "SL303",
                            f"symlink {rel!r} resolves outside the skill folder to {target}",
                        )
                elif entry.is_dir(follow_symlinks=False) and entry.name not in _SKIP_DIRS:
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    _hard_link_rule(out, entry, real_base)
            except (OSError, RuntimeError, ValueError):
                continue
