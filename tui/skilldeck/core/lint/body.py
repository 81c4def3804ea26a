"""Lint rules over a skill's body: length, links, referenced files, hidden characters,
downloads piped into a shell, machine-specific paths (SL101-SL105, SL301, SL302)."""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from urllib.parse import unquote

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.lint.findings import Findings
from skilldeck.core.lint.patterns import INVISIBLE, MACHINE_PATH, PIPE_SHELL, harmless_joiner
from skilldeck.core.model import Skill

MAX_BODY_BYTES = 4 * 1024 * 1024
"""Bodies are read up to this size; longer ones are flagged by SL101/SL102 anyway."""

BODY_CODES = ("SL101", "SL102", "SL103", "SL104", "SL105", "SL301", "SL302")

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
_SCHEME = re.compile(r"^[A-Za-z][\w+.-]*:")


def body_text(skill: Skill) -> str | None:
    """The skill's body (up to :data:`MAX_BODY_BYTES`), or None when it cannot be read."""
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


def body_rules(out: Findings, body: str) -> None:
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


def _whole_body_rules(out: Findings, body: str, where: Callable[[int], tuple[int, int]]) -> None:
    if out.on("SL301"):
        last = -1
        for m in INVISIBLE.finditer(body):
            if (m.start() == 0 and m.group(0) == "\ufeff") or harmless_joiner(body, m.start()):
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
        for m in MACHINE_PATH.finditer(body):
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


def _link_rules(out: Findings, lines: list[str]) -> None:
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
    out: Findings, target: str, line: int, column: int, exists: Callable[[str], bool]
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
