"""Tier 2 of progressive disclosure: one skill's instructions, loaded for a model.

:func:`load_skill` gives the SKILL.md body with ``$ARGUMENTS``-style placeholders
substituted (:func:`substitute`), within a token cap.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader.failures import load_failure, read_skill_body
from skilldeck.core.loader.remote import (
    Instructions,
    fetch_url_instructions,
    read_file_instructions,
)
from skilldeck.core.model import Severity, Skill
from skilldeck.core.tokens import estimate_tokens

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.store import LocalStore

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
        id: The skill's stable id (:attr:`~skilldeck.core.model.Skill.id`).
        parameters: The inputs it declares (``parameters``), JSON-ready.
        examples: Its examples (``examples``), JSON-ready.
        origin: Where the instructions came from: ``body``, ``file``, ``url`` or
            ``cache``; ``source`` names the file or URL and ``digest`` a URL text's sha256.
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
    id: str = ""
    parameters: list[dict[str, Any]] = field(default_factory=list)
    examples: list[dict[str, str]] = field(default_factory=list)
    origin: str = "body"
    source: str = ""
    digest: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "name": self.name,
            "base_dir": str(self.base_dir),
            "path": str(self.path) if self.path else None,
            "text": self.text,
            "tokens": self.tokens,
            "body_tokens": self.body_tokens,
            "truncated": self.truncated,
            "arguments": self.arguments,
            "warnings": list(self.warnings),
            "parameters": list(self.parameters),
            "examples": list(self.examples),
            "instructions": {"origin": self.origin, "source": self.source, "digest": self.digest},
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


def load_skill(
    skill: Skill,
    arguments: str = "",
    token_cap: int = DEFAULT_TOKEN_CAP,
    *,
    settings: Settings | None = None,
    store: LocalStore | None = None,
) -> LoadResult:
    """Load a skill's instructions for a model (tier 2).

    The text is ``Base directory for this skill: <base_dir>`` and a blank line, then the
    body with ``$ARGUMENTS``, ``$ARGUMENTS[N]``, ``$N`` (0-based positional, shell-like
    splitting) and ``${SKILL_DIR}`` / ``${CLAUDE_SKILL_DIR}`` replaced. When the body has
    no argument placeholder and ``arguments`` is not empty, ``ARGUMENTS: <args>`` is
    appended. A body over ``token_cap`` estimated tokens is cut at a line boundary and a
    marker line says how much was cut and how to read the rest.

    When the skill declares ``instructions: {file: ...}`` or ``{url: ...}`` those replace
    the body (:mod:`.remote`; a URL is fetched now, from an allowed host, or served from
    the store's cache with a warning).

    Args:
        skill: The skill to load.
        arguments: The arguments string.
        token_cap: Cap on the body in estimated tokens (0 or less: no cap).
        settings: Settings for instructions from a file or URL (default: loaded).
        store: The local store caching fetched instructions (default: opened).

    Returns:
        The loaded text and facts about it.

    Raises:
        SkilldeckError: PERMISSION_DENIED for a disabled skill; INTERNAL_ERROR
            (``reason: parse_failed``) for a SKILL.md that did not parse; NOT_FOUND,
            PERMISSION_DENIED (the system refuses the read) or INTERNAL_ERROR (any other
            I/O error) when the file cannot be read (:mod:`.failures`); the errors of
            :func:`~.remote.fetch_url_instructions` and
            :func:`~.remote.read_file_instructions`.
    """
    if not skill.enabled:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.name!r} is disabled by the governance registry",
            name=skill.name,
        )
    failure = load_failure(skill)
    if failure is not None:
        raise failure
    warnings = _skill_warnings(skill)
    source = _instructions(skill, settings, store)
    if source.notice:
        warnings.append(source.notice)
    body, body_tokens, truncated = _body(skill, source, arguments, token_cap, warnings)
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
        id=skill.id,
        parameters=[p.to_dict() for p in skill.parameters],
        examples=[e.to_dict() for e in skill.examples],
        origin=source.origin,
        source=source.source,
        digest=source.digest,
    )


def _body(
    skill: Skill, source: Instructions, arguments: str, token_cap: int, warnings: list[str]
) -> tuple[str, int, bool]:
    """The instructions with the arguments applied and cut at ``token_cap``: (body, its
    estimated tokens before the cut, whether it was cut); problems go to ``warnings``."""
    raw = source.text
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
        body, cut_tokens = _cap_body(skill, body, body_tokens, token_cap, leading, source)
        warnings.append(f"body truncated: about {cut_tokens} tokens cut")
    if arguments and not used:
        body = body.rstrip("\n") + f"\n\nARGUMENTS: {arguments}"
    return body, body_tokens, truncated


def _instructions(
    skill: Skill, settings: Settings | None, store: LocalStore | None
) -> Instructions:
    """The body, or the file or URL the ``instructions`` field names."""
    if skill.instructions is None:
        return Instructions(read_skill_body(skill), "body")
    from skilldeck.core.config import load_settings

    settings = settings or load_settings()
    kind, target = skill.instructions
    if kind == "file":
        return read_file_instructions(skill, target, settings.resource_byte_cap)
    if store is None:
        from skilldeck.core.store import LocalStore

        store = LocalStore.open()
    return fetch_url_instructions(target, settings, store)


def arguments_from_parameters(skill: Skill, values: Mapping[str, str]) -> str:
    """The arguments string for named parameter values: the declared ``parameters`` in
    order, shell-quoted (so ``$0``, ``$1`` … are the parameters), defaults filling in.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown name or a missing required one.
    """
    known = {p.name for p in skill.parameters}
    unknown = sorted(k for k in values if k not in known)
    if unknown:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown parameter(s) {', '.join(map(repr, unknown))} of skill {skill.name!r} "
            f"(it takes: {', '.join(sorted(known)) or 'none'})",
        )
    missing = [p.name for p in skill.parameters if p.required and not values.get(p.name)]
    if missing:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"skill {skill.name!r} needs parameter(s) {', '.join(map(repr, missing))}",
            missing=missing,
        )
    given = [values.get(p.name) or _default_text(p.default) for p in skill.parameters]
    while given and not given[-1]:
        given.pop()
    return shlex.join(given)


def _default_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _skill_warnings(skill: Skill) -> list[str]:
    """Warnings a load carries whatever the body: error diagnostics, shadowing."""
    warnings = [f"{d.code}: {d.message}" for d in skill.diagnostics if d.severity is Severity.ERROR]
    if skill.shadowed:
        warnings.append(f"skill is shadowed by {skill.shadowed_by}")
    return warnings


def _cap_body(
    skill: Skill,
    body: str,
    body_tokens: int,
    token_cap: int,
    leading: int,
    source: Instructions,
) -> tuple[str, int]:
    """``body`` cut to ``token_cap`` at a line boundary, with a marker saying how to read
    the rest (``leading``: blank lines dropped before the body), and the tokens cut."""
    kept_text, kept, total_lines = _truncate_lines(body, token_cap)
    cut_tokens = body_tokens - estimate_tokens(kept_text)
    body = kept_text if kept_text.endswith("\n") or not kept_text else kept_text + "\n"
    body += (
        f"\n[skilldeck: body truncated to about {token_cap} tokens: {total_lines - kept} of "
        f"{total_lines} lines (about {cut_tokens} tokens) were cut. {_rest(skill, source)}"
        f"{_resume_line(skill, source, leading + kept)}.]\n"
    )
    return body, cut_tokens


def _rest(skill: Skill, source: Instructions) -> str:
    """How to read the rest of cut instructions (a URL's rest cannot be read)."""
    if source.origin in ("url", "cache"):
        return f"The rest is at {source.source}, not readable through this skill"
    rel = source.source if source.origin == "file" else skill.path.name
    return (
        f"To read the rest, read the resource {rel} of this skill (tier 3, e.g. "
        f"`skilldeck read {skill.name} {rel}`)"
    )


def _resume_line(skill: Skill, source: Instructions, skipped: int) -> str:
    if source.origin in ("url", "cache"):
        return ""
    first = skill.body_line if source.origin == "body" else 1
    return f" from line {first + skipped}"
