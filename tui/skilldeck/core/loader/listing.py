"""Tier 1 of progressive disclosure: the ``<available_skills>`` listing.

:func:`render_listing` gives the names, descriptions and locations of the skills a model
may use, for its system prompt, within a character budget.

Each entry gives the skill's ``metadata.version`` and ``metadata.tags`` when it has them
(inside the budget: they are counted like the name and location).

Budget rule (deterministic):

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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill, brief_of, name_order

DEFAULT_BUDGET = 12000
DESCRIPTION_FLOOR = 60
FORMATS = ("xml", "markdown")

_XML_ENTITIES = {'"': "&quot;", "'": "&apos;"}
_XML_OPEN = "<available_skills>\n"
_XML_CLOSE = "</available_skills>"


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
        entries: Each included skill's :func:`facts` (name, version, tags), in order.
    """

    text: str
    included: list[str]
    omitted: list[str]
    shortened: list[str]
    budget: int
    fmt: str = "xml"
    entries: list[dict[str, Any]] = field(default_factory=list)

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
            "skills": [dict(e) for e in self.entries],
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


TAGS_SHOWN = 8
"""Most tags a listing entry shows (the rest are left out, never the skill)."""


def facts(skill: Skill) -> dict[str, Any]:
    """A listed skill's name, ``metadata.version`` and ``metadata.tags`` (at most
    :data:`TAGS_SHOWN`), JSON-ready: what ``list_skills`` gives per entry."""
    return {"name": skill.name, "version": skill.version, "tags": list(skill.tags[:TAGS_SHOWN])}


def _render_entry(skill: Skill, description: str, fmt: str) -> str:
    tags = ", ".join(_one_line(t) for t in skill.tags[:TAGS_SHOWN])
    version = _one_line(skill.version or "")
    if fmt == "xml":
        extra = f"<version>\n{_xml(version)}\n</version>\n" if version else ""
        extra += f"<tags>\n{_xml(tags)}\n</tags>\n" if tags else ""
        return (
            f"<skill>\n<name>\n{_xml(skill.name)}\n</name>\n"
            f"<description>\n{_xml(description)}\n</description>\n"
            f"<location>\n{_xml(str(skill.path))}\n</location>\n{extra}</skill>\n"
        )
    about = "; ".join(p for p in (f"v{version}" if version else "", tags and f"tags: {tags}") if p)
    return f"- **{skill.name}**{f' ({about})' if about else ''}: {description} (`{skill.path}`)\n"


def _omission_note(omitted: list[str], name_chars: int) -> str:
    """The closing line naming the skills left out (names bounded to ``name_chars``)."""
    if not omitted:
        return ""
    names: list[str] = []
    used = 0
    for name in sorted(omitted, key=str.lower):
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


def render_listing(
    skills: list[Skill], budget: int = DEFAULT_BUDGET, fmt: str = "xml", *, ranked: bool = False
) -> Listing:
    """Render the tier-1 listing of the skills a model may use.

    Only skills with :attr:`Skill.visible_to_models` are listed, sorted by name (in the
    order given when ``ranked``, most useful first). The
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
    visible = [s for s in skills if s.visible_to_models]
    if not ranked:
        visible.sort(key=lambda s: (*name_order(s), str(s.path)))
    entries = [
        _Entry(s, _one_line(s.description), brief_of(s.description, limit=10**9)) for s in visible
    ]
    sizer = _Sizer(entries, fmt, name_chars=max(0, min(2000, budget // 5)))
    kept, omitted, cap = _fit(entries, budget, sizer, ranked)
    text, shortened = _assemble(kept, omitted, cap, fmt, budget, sizer.name_chars)
    return Listing(
        text=text,
        included=[e.skill.name for e in kept],
        omitted=sorted(omitted, key=str.lower),
        shortened=sorted(shortened, key=str.lower),
        budget=budget,
        fmt=fmt,
        entries=[facts(e.skill) for e in kept],
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
    entries: list[_Entry], budget: int, sizer: _Sizer, ranked: bool = False
) -> tuple[list[_Entry], list[str], int | None]:
    """Which entries to keep, which names to leave out (the last ones first when
    ``ranked``), and the description cap."""
    kept, omitted = entries, list[str]()
    if sizer.total(kept, None, omitted) <= budget:
        return kept, omitted, None
    cap = _largest_cap(kept, lambda c: sizer.total(kept, c, omitted) <= budget)
    if cap is not None:
        return kept, omitted, cap

    def fits(k: list[_Entry], o: list[str]) -> bool:
        return sizer.total(k, DESCRIPTION_FLOOR, o) <= budget

    kept, omitted = _omit(entries, fits, ranked)
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
    entries: list[_Entry], fits: Callable[[list[_Entry], list[str]], bool], ranked: bool = False
) -> tuple[list[_Entry], list[str]]:
    """Leave out the fewest skills (lowest priority, then last by name first; the last
    given first when ``ranked``) so ``fits``."""
    order = sorted(entries, key=lambda e: name_order(e.skill), reverse=True)
    order.sort(key=lambda e: e.skill.priority)
    if ranked:
        order = entries[::-1]

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
