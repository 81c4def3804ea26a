"""Progressive disclosure: what a model sees of a skill, tier by tier.

* Tier 1, :func:`render_listing`: names, descriptions and locations of the skills a model
  may use, for its system prompt, within a character budget.
* Tier 2, :func:`load_skill`: one skill's instructions (its SKILL.md body) with the
  arguments substituted, within a token cap.
* Tier 3, :func:`read_resource`: one file from inside a skill's folder, on demand.

Budget rule for tier 1 (deterministic):

1. Render every visible skill, sorted by name, with its full description.
2. If that is over budget, cap all descriptions at the largest common length ``L`` that
   fits (never below :data:`DESCRIPTION_FLOOR`). A description longer than ``L`` becomes
   its first sentence, and a first sentence still longer than ``L`` is cut at a word
   boundary and ends with "…". Short descriptions are never touched.
3. If even the floor does not fit, leave skills out: lowest ``priority`` first, and among
   equal priorities the last by name first. A closing note says how many were left out and
   names them (the names list itself is bounded). Descriptions of the skills that remain
   are then re-expanded as far as the budget allows.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from xml.sax.saxutils import escape

from skilldeck.core.confined import read_confined
from skilldeck.core.discovery.frontmatter import read_body
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Severity, Skill, brief_of
from skilldeck.core.tokens import estimate_tokens

DEFAULT_BUDGET = 12000
DEFAULT_TOKEN_CAP = 5000
DEFAULT_BYTE_CAP = 262144
DESCRIPTION_FLOOR = 60
BINARY_SNIFF_BYTES = 8192
FORMATS = ("xml", "markdown")

_XML_ENTITIES = {'"': "&quot;", "'": "&apos;"}
_XML_OPEN = "<available_skills>\n"
_XML_CLOSE = "</available_skills>"
_SUGGEST_CUTOFF = 70.0
_SUGGEST_SPREAD = 15.0


# ------------------------------------------------------------------------------- tier 1


@dataclass(slots=True)
class Listing:
    """A rendered tier-1 listing.

    Attributes:
        text: The listing as it goes into a system prompt.
        included: Names listed, in listing order.
        omitted: Names left out to respect the budget, sorted.
        shortened: Names whose description was shortened, sorted.
        budget: The character budget that applied.
        fmt: ``xml`` or ``markdown``.
    """

    text: str
    included: list[str]
    omitted: list[str]
    shortened: list[str]
    budget: int
    fmt: str = "xml"

    @property
    def chars(self) -> int:
        """Length of :attr:`text` in characters."""
        return len(self.text)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "text": self.text,
            "format": self.fmt,
            "budget": self.budget,
            "chars": self.chars,
            "included": list(self.included),
            "omitted": list(self.omitted),
            "shortened": list(self.shortened),
        }


def _xml(text: str) -> str:
    return escape(text, _XML_ENTITIES)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary, ending in "…"."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:-") + "…"


@dataclass(slots=True)
class _Entry:
    skill: Skill
    full: str
    brief: str

    def description(self, cap: int | None) -> str:
        if cap is None or len(self.full) <= cap:
            return self.full
        if len(self.brief) <= cap:
            return self.brief
        return _cut(self.brief, cap)


def _render_entry(skill: Skill, description: str, fmt: str) -> str:
    if fmt == "xml":
        return (
            f"<skill>\n<name>\n{_xml(skill.name)}\n</name>\n"
            f"<description>\n{_xml(description)}\n</description>\n"
            f"<location>\n{_xml(str(skill.path))}\n</location>\n</skill>\n"
        )
    return f"- **{skill.name}**: {description} (`{skill.path}`)\n"


def _omission_note(omitted: list[str], name_chars: int) -> str:
    """The closing line naming the skills left out (names bounded to ``name_chars``)."""
    if not omitted:
        return ""
    names: list[str] = []
    used = 0
    for name in sorted(omitted):
        cost = len(name) + 2
        if used + cost > name_chars:
            break
        names.append(name)
        used += cost
    rest = len(omitted) - len(names)
    noun = "skill" if len(omitted) == 1 else "skills"
    if not names:
        return f"({len(omitted)} {noun} left out to fit the listing budget.)"
    listed = ", ".join(names) + (f" and {rest} more" if rest else "")
    return f"({len(omitted)} {noun} left out to fit the listing budget: {listed}.)"


def render_listing(skills: list[Skill], budget: int = DEFAULT_BUDGET, fmt: str = "xml") -> Listing:
    """Render the tier-1 listing of the skills a model may use.

    Only skills with :attr:`Skill.visible_to_models` are listed, sorted by name. The
    budget rule is described in the module docstring; the text stays within ``budget``
    characters whenever that is possible at all (a budget too small even for the empty
    frame and the omission note yields that frame and note).

    Args:
        skills: Candidate skills (callers may prefilter).
        budget: Maximum length of the text in characters.
        fmt: ``xml`` (the Agent Skills ``<available_skills>`` form) or ``markdown``.

    Returns:
        The listing with the names included, omitted and shortened.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown format or a negative budget.
    """
    if fmt not in FORMATS:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"unknown listing format {fmt!r}; use xml or markdown"
        )
    if budget < 0:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "the listing budget must be 0 or more")
    visible = sorted(
        (s for s in skills if s.visible_to_models), key=lambda s: (s.name, str(s.path))
    )
    entries = [
        _Entry(s, _one_line(s.description), brief_of(s.description, limit=10**9)) for s in visible
    ]
    sizer = _Sizer(entries, fmt, name_chars=max(0, min(2000, budget // 5)))
    kept, omitted, cap = _fit(entries, budget, sizer)
    text, shortened = _assemble(kept, omitted, cap, fmt, budget, sizer.name_chars)
    return Listing(
        text=text,
        included=[e.skill.name for e in kept],
        omitted=sorted(omitted),
        shortened=sorted(shortened),
        budget=budget,
        fmt=fmt,
    )


class _Sizer:
    """Lengths of listings made of some entries with descriptions cut at some cap."""

    def __init__(self, entries: list[_Entry], fmt: str, name_chars: int) -> None:
        self.fmt = fmt
        self.name_chars = name_chars
        self.frame = len(_XML_OPEN) + len(_XML_CLOSE) if fmt == "xml" else 0
        self.fixed = {id(e): len(_render_entry(e.skill, "", fmt)) for e in entries}
        self.lengths: dict[tuple[int, int | None], int] = {}

    def entry_len(self, entry: _Entry, cap: int | None) -> int:
        key = (id(entry), cap)
        if key not in self.lengths:
            text = entry.description(cap)
            shown = _xml(text) if self.fmt == "xml" else text
            self.lengths[key] = self.fixed[id(entry)] + len(shown)
        return self.lengths[key]

    def total(self, kept: list[_Entry], cap: int | None, omitted: list[str]) -> int:
        note = _omission_note(omitted, self.name_chars)
        body = sum(self.entry_len(e, cap) for e in kept)
        return self.frame + body + (len(note) + 1 if note else 0)


def _fit(
    entries: list[_Entry], budget: int, sizer: _Sizer
) -> tuple[list[_Entry], list[str], int | None]:
    """Which entries to keep, which names to leave out, and the description cap."""
    kept, omitted = entries, list[str]()
    if sizer.total(kept, None, omitted) <= budget:
        return kept, omitted, None
    cap = _largest_cap(kept, lambda c: sizer.total(kept, c, omitted) <= budget)
    if cap is not None:
        return kept, omitted, cap
    kept, omitted = _omit(entries, lambda k, o: sizer.total(k, DESCRIPTION_FLOOR, o) <= budget)
    if sizer.total(kept, None, omitted) <= budget:
        return kept, omitted, None
    cap = _largest_cap(kept, lambda c: sizer.total(kept, c, omitted) <= budget)
    return kept, omitted, DESCRIPTION_FLOOR if cap is None else cap


def _assemble(
    kept: list[_Entry],
    omitted: list[str],
    cap: int | None,
    fmt: str,
    budget: int,
    name_chars: int,
) -> tuple[str, list[str]]:
    """The listing text and the names whose description was shortened."""
    parts: list[str] = [_XML_OPEN] if fmt == "xml" else []
    shortened: list[str] = []
    for entry in kept:
        description = entry.description(cap)
        if description != entry.full:
            shortened.append(entry.skill.name)
        parts.append(_render_entry(entry.skill, description, fmt))
    if fmt == "xml":
        parts.append(_XML_CLOSE)
    text = "".join(parts)
    note = _omission_note(omitted, name_chars)
    if note:
        text = (text if text.endswith("\n") else text + "\n") + note
    text = text.rstrip("\n")
    if len(text) > budget and note:
        text = text[: len(text) - len(note)] + _omission_note(omitted, 0)
    return text, shortened


def _largest_cap(entries: list[_Entry], fits: Callable[[int], bool]) -> int | None:
    """Largest description cap in [floor, longest] for which ``fits`` holds, else None."""
    longest = max((len(e.full) for e in entries), default=0)
    low, high = DESCRIPTION_FLOOR, max(DESCRIPTION_FLOOR, longest)
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _omit(
    entries: list[_Entry], fits: Callable[[list[_Entry], list[str]], bool]
) -> tuple[list[_Entry], list[str]]:
    """Leave out the fewest skills (lowest priority, then last by name first) so ``fits``."""
    order = sorted(entries, key=lambda e: e.skill.name, reverse=True)
    order.sort(key=lambda e: e.skill.priority)

    def split(k: int) -> tuple[list[_Entry], list[str]]:
        dropped = {id(e) for e in order[:k]}
        return ([e for e in entries if id(e) not in dropped], [e.skill.name for e in order[:k]])

    low, high = 1, len(order)
    while low < high:
        mid = (low + high) // 2
        if fits(*split(mid)):
            high = mid
        else:
            low = mid + 1
    return split(low)


# ------------------------------------------------------------------------------- tier 2


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
    warnings = [f"{d.code}: {d.message}" for d in skill.diagnostics if d.severity is Severity.ERROR]
    if skill.shadowed:
        warnings.append(f"skill is shadowed by {skill.shadowed_by}")
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
    truncated = False
    if token_cap > 0 and body_tokens > token_cap:
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
        truncated = True
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


# ------------------------------------------------------------------------------- tier 3


@dataclass(slots=True)
class Resource:
    """One file from inside a skill folder (tier 3).

    Attributes:
        name: The skill's name.
        path: The path relative to the skill folder (POSIX form).
        abs_path: The file's absolute real path.
        size: Size in bytes.
        mime: Guessed media type.
        binary: True when the content is not UTF-8 text.
        text: The decoded text (None for binary files).
        data: The raw bytes.
    """

    name: str
    path: str
    abs_path: Path
    size: int
    mime: str
    binary: bool
    text: str | None
    data: bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``text`` for text files, ``base64`` for binary ones."""
        return {
            "name": self.name,
            "path": self.path,
            "abs_path": str(self.abs_path),
            "size": self.size,
            "mime": self.mime,
            "binary": self.binary,
            "encoding": "base64" if self.binary else "utf-8",
            "text": self.text,
            "base64": base64.b64encode(self.data).decode("ascii") if self.binary else None,
        }


_DRIVE = re.compile(r"^[A-Za-z]:")


def _relative_parts(rel_path: str) -> list[str]:
    """Validated components of a resource path; INVALID_PARAM when unsafe."""

    def invalid(why: str) -> SkilldeckError:
        return SkilldeckError(
            ErrorCode.INVALID_PARAM, f"invalid resource path {rel_path!r}: {why}", path=rel_path
        )

    if not isinstance(rel_path, str) or not rel_path.strip():
        raise invalid("empty path")
    if "\x00" in rel_path:
        raise invalid("NUL character")
    if rel_path.startswith(("/", "\\")) or _DRIVE.match(rel_path):
        raise invalid("absolute paths are not allowed; give a path inside the skill folder")
    parts = re.split(r"[\\/]", rel_path)
    if ".." in parts:
        raise invalid("'..' is not allowed; give a path inside the skill folder")
    parts = [p for p in parts if p not in ("", ".")]
    if not parts:
        raise invalid("the path names the skill folder itself")
    return parts


def _is_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def read_resource(skill: Skill, rel_path: str, byte_cap: int = DEFAULT_BYTE_CAP) -> Resource:
    """Read one file from inside the skill folder (tier 3).

    Args:
        skill: The skill owning the file.
        rel_path: Path relative to the skill folder.
        byte_cap: Largest file size accepted, in bytes.

    Returns:
        The resource, decoded when it is UTF-8 text.

    Raises:
        SkilldeckError: INVALID_PARAM for empty, absolute, ``..`` or NUL paths, folders and
            files over ``byte_cap``; PERMISSION_DENIED when the path (through symlinks)
            leaves the skill folder or cannot be opened; NOT_FOUND when it does not exist.
    """
    parts = _relative_parts(rel_path)
    rel = str(PurePosixPath(*parts))
    base_real = os.path.realpath(skill.base_dir)
    candidate = os.path.join(skill.base_dir, *parts)
    real = os.path.realpath(candidate)
    if not _is_within(real, base_real):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel!r} resolves outside the folder of skill {skill.name!r}",
            path=rel,
        )
    if not os.path.exists(real):
        hints = suggest_names(rel, _nearby_files(skill, parts, base_real))
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise SkilldeckError(
            ErrorCode.NOT_FOUND,
            f"skill {skill.name!r} has no file {rel!r}{hint}",
            path=rel,
            suggestions=hints,
        )
    if os.path.isdir(real):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{rel!r} is a folder; give a file path", path=rel
        )
    data, size = _read_confined(skill, real, rel, byte_cap)
    sniff = data[:BINARY_SNIFF_BYTES]
    text: str | None = None
    if b"\x00" not in sniff:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    binary = text is None
    if text is not None and text.startswith("\ufeff"):
        text = text[1:]
    mime = mimetypes.guess_type(parts[-1])[0] or (
        "application/octet-stream" if binary else "text/plain"
    )
    return Resource(
        name=skill.name,
        path=rel,
        abs_path=Path(real),
        size=size,
        mime=mime,
        binary=binary,
        text=text,
        data=data,
    )


def _nearby_files(skill: Skill, parts: list[str], base_real: str) -> list[str]:
    """Known resources plus the files next to a missing path (bounded), for suggestions."""
    names = dict.fromkeys(skill.resources)
    parent = os.path.realpath(os.path.join(skill.base_dir, *parts[:-1]))
    if _is_within(parent, base_real) and os.path.isdir(parent):
        prefix = "/".join(parts[:-1])
        try:
            with os.scandir(parent) as entries:
                for count, entry in enumerate(entries):
                    if count >= 200:
                        break
                    names.setdefault(f"{prefix}/{entry.name}" if prefix else entry.name)
        except OSError:
            pass
    return list(names)


def _read_confined(skill: Skill, real: str, rel: str, byte_cap: int) -> tuple[bytes, int]:
    """Read a resource under the one confinement rule; a file over the cap is refused."""
    read = read_confined(Path(real), skill.base_dir, cap=byte_cap, label=repr(rel))
    if read.truncated or read.size > byte_cap:
        size = max(read.size, len(read.data) + 1)
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{rel!r} is {size} bytes, over the {byte_cap}-byte cap",
            path=rel,
            size=size,
            cap=byte_cap,
        )
    return read.data, len(read.data)


# ------------------------------------------------------------------------------- names


def suggest_names(name: str, names: list[str], n: int = 3) -> list[str]:
    """Up to ``n`` names from ``names`` closest to ``name`` (for "unknown skill" errors).

    Scored with rapidfuzz ``WRatio`` (case-insensitive); a name is suggested when it
    scores at least 70 and within 15 points of the best match, best first.
    """
    from rapidfuzz import fuzz, process, utils  # only on a miss: `load` stays light

    if not name or not names or n <= 0:
        return []
    matches = process.extract(
        name,
        names,
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        limit=n,
        score_cutoff=_SUGGEST_CUTOFF,
    )
    if not matches:
        return []
    floor = matches[0][1] - _SUGGEST_SPREAD
    return [match[0] for match in matches if match[1] >= floor]


def unknown_skill(name: str, names: list[str], advice: str = "") -> SkilldeckError:
    """The NOT_FOUND error for a skill name, naming the nearest ones.

    Args:
        name: The name asked for.
        names: The names that exist.
        advice: Appended to the message (for example where to search instead).
    """
    hints = suggest_names(name, names)
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    return SkilldeckError(
        ErrorCode.NOT_FOUND, f"no skill named {name!r}{hint}{advice}", name=name, suggestions=hints
    )


def record_load(
    skill: Skill, result: LoadResult, latency_ms: float, *, actor: str, **context: Any
) -> None:
    """Emit the ``skill_loaded`` telemetry event for a finished load (never raises).

    Args:
        skill: The skill that was loaded.
        result: What the load produced.
        latency_ms: How long the load took.
        actor: ``agent``, ``operator`` or ``cli``.
        context: Extra fields (``session``, ``source``).
    """
    from skilldeck.core.telemetry import emit

    emit(
        "skill_loaded",
        name=skill.name,
        path=str(skill.path),
        tokens=result.tokens,
        latency_ms=round(latency_ms, 3),
        truncated=result.truncated,
        actor=actor,
        **context,
    )


def load_and_record(
    skill: Skill,
    arguments: str = "",
    token_cap: int = DEFAULT_TOKEN_CAP,
    *,
    actor: str,
    **context: Any,
) -> LoadResult:
    """:func:`load_skill`, then the ``skill_loaded`` telemetry event."""
    started = time.perf_counter()
    result = load_skill(skill, arguments, token_cap)
    record_load(skill, result, (time.perf_counter() - started) * 1000, actor=actor, **context)
    return result


def read_and_record(
    skill: Skill,
    rel_path: str,
    byte_cap: int = DEFAULT_BYTE_CAP,
    *,
    actor: str,
    **context: Any,
) -> Resource:
    """:func:`read_resource` with a ``skill_resource_requested`` event, refused or not."""
    from skilldeck.core.telemetry import emit

    try:
        resource = read_resource(skill, rel_path, byte_cap)
    except SkilldeckError as exc:
        emit(
            "skill_resource_requested",
            name=skill.name,
            resource=rel_path,
            ok=False,
            code=exc.code.value,
            actor=actor,
            **context,
        )
        raise
    emit(
        "skill_resource_requested",
        name=skill.name,
        resource=resource.path,
        size=resource.size,
        binary=resource.binary,
        ok=True,
        actor=actor,
        **context,
    )
    return resource
