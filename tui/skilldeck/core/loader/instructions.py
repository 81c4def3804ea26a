"""Tier 2 of progressive disclosure: one skill's instructions, loaded for a model.

:func:`load_skill` gives the SKILL.md body with ``$ARGUMENTS``-style placeholders
substituted (:func:`substitute`), within a token cap.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.discovery.frontmatter import read_body
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Severity, Skill
from skilldeck.core.tokens import estimate_tokens

DEFAULT_TOKEN_CAP = 5000


@dataclass(slots=True)
class LoadResult:
    """What a model receives when it loads a skill (tier 2).

    Attributes:
        name: The skill's name.
        base_dir: The skill folder.
        text: ``Base directory for this skill: …`` then the substituted body.
        tokens: Estimated tokens of ``text``.
        truncated: True when the body was cut to respect the token cap.
        arguments: The arguments string as given.
        warnings: Problems a caller should show (error diagnostics, missing arguments, …).
        path: The SKILL.md file.
        body_tokens: Estimated tokens of the whole substituted body before any cut.
    """

    name: str
    base_dir: Path
    text: str
    tokens: int
    truncated: bool
    arguments: str
    warnings: list[str] = field(default_factory=list)
    path: Path | None = None
    body_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "base_dir": str(self.base_dir),
            "path": str(self.path) if self.path else None,
            "text": self.text,
            "tokens": self.tokens,
            "body_tokens": self.body_tokens,
            "truncated": self.truncated,
            "arguments": self.arguments,
            "warnings": list(self.warnings),
        }


_PLACEHOLDER = re.compile(
    r"\$\{(?:CLAUDE_)?SKILL_DIR\}"
    r"|\$ARGUMENTS\[(?P<index>\d+)\]"
    r"|\$ARGUMENTS(?![A-Za-z0-9_\[])"
    r"|\$(?P<short>\d+)(?![0-9])"
)


def split_arguments(arguments: str) -> list[str]:
    """Split an arguments string like a shell would; plain whitespace split on bad quoting."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def substitute(body: str, arguments: str, base_dir: Path) -> tuple[str, bool, list[int]]:
    """Replace argument and folder placeholders in ``body``.

    Returns:
        The new text, whether any argument placeholder was present, and the positional
        indexes that referred to missing arguments.
    """
    positional = split_arguments(arguments)
    used = False
    missing: list[int] = []

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        token = match.group(0)
        if token.startswith("${"):
            return str(base_dir)
        used = True
        index_text = match.group("index") or match.group("short")
        if index_text is None:
            return arguments
        index = int(index_text)
        if index < len(positional):
            return positional[index]
        missing.append(index)
        return ""

    return _PLACEHOLDER.sub(replace, body), used, sorted(set(missing))


def _truncate_lines(body: str, cap: int) -> tuple[str, int, int]:
    """Longest prefix of whole lines within ``cap`` estimated tokens.

    Returns:
        The kept text, the number of kept lines and the number of lines in ``body``.
    """
    lines = body.splitlines(keepends=True)
    chars = words = 0
    kept = 0
    for line in lines:
        line_chars, line_words = chars + len(line), words + len(line.split())
        if max(line_chars / 4, line_words * 1.3) > cap:
            break
        chars, words, kept = line_chars, line_words, kept + 1
    text = "".join(lines[:kept])
    if kept == 0 and lines:
        text = lines[0][: max(0, cap * 4)]
    return text, kept, len(lines)


def load_skill(skill: Skill, arguments: str = "", token_cap: int = DEFAULT_TOKEN_CAP) -> LoadResult:
    """Load a skill's instructions for a model (tier 2).

    The text is ``Base directory for this skill: <base_dir>`` and a blank line, then the
    body with ``$ARGUMENTS``, ``$ARGUMENTS[N]``, ``$N`` (0-based positional, shell-like
    splitting) and ``${SKILL_DIR}`` / ``${CLAUDE_SKILL_DIR}`` replaced. When the body has
    no argument placeholder and ``arguments`` is not empty, ``ARGUMENTS: <args>`` is
    appended. A body over ``token_cap`` estimated tokens is cut at a line boundary and a
    marker line says how much was cut and how to read the rest.

    Args:
        skill: The skill to load.
        arguments: The arguments string.
        token_cap: Cap on the body in estimated tokens (0 or less: no cap).

    Returns:
        The loaded text and facts about it.

    Raises:
        SkilldeckError: PERMISSION_DENIED for a disabled skill; NOT_FOUND or
            PERMISSION_DENIED when the file cannot be read.
    """
    if not skill.enabled:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} is disabled by the governance registry",
            name=skill.name,
        )
    warnings = _skill_warnings(skill)
    raw = read_body(skill)
    leading = len(raw) - len(raw.lstrip("\n"))
    body, used, missing = substitute(raw[leading:], arguments, skill.base_dir)
    if missing:
        given = len(split_arguments(arguments))
        warnings.append(
            f"body refers to argument(s) {', '.join(map(str, missing))} "
            f"but {given} argument(s) were given"
        )
    body_tokens = estimate_tokens(body)
    truncated = token_cap > 0 and body_tokens > token_cap
    if truncated:
        body, cut_tokens = _cap_body(skill, body, body_tokens, token_cap, leading)
        warnings.append(f"body truncated: about {cut_tokens} tokens cut")
    if arguments and not used:
        body = body.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    text = f"Base directory for this skill: {skill.base_dir}\n\n{body}"
    return LoadResult(
        name=skill.name,
        base_dir=skill.base_dir,
        text=text,
        tokens=estimate_tokens(text),
        truncated=truncated,
        arguments=arguments,
        warnings=warnings,
        path=skill.path,
        body_tokens=body_tokens,
    )


def _skill_warnings(skill: Skill) -> list[str]:
    """Warnings a load carries whatever the body: error diagnostics, shadowing."""
    warnings = [f"{d.code}: {d.message}" for d in skill.diagnostics if d.severity is Severity.ERROR]
    if skill.shadowed:
        warnings.append(f"skill is shadowed by {skill.shadowed_by}")
    return warnings


def _cap_body(
    skill: Skill, body: str, body_tokens: int, token_cap: int, leading: int
) -> tuple[str, int]:
    """``body`` cut to ``token_cap`` at a line boundary, with a marker saying how to read
    the rest (``leading``: blank lines dropped before the body), and the tokens cut."""
    kept_text, kept, total_lines = _truncate_lines(body, token_cap)
    cut_tokens = body_tokens - estimate_tokens(kept_text)
    body = kept_text if kept_text.endswith("\n") or not kept_text else kept_text + "\n"
    resume = skill.body_line + leading + kept
    body += (
        f"\n[skilldeck: body truncated to about {token_cap} tokens: {total_lines - kept} of "
        f"{total_lines} lines (about {cut_tokens} tokens) were cut. To read the rest, read "
        f"the resource {skill.path.name} of this skill (tier 3, e.g. `skilldeck read "
        f"{skill.name} {skill.path.name}`) from line {resume}.]\n"
    )
    return body, cut_tokens
