"""Per-query context: what to inject into a model's prompt for one user message.

The manifest design's four disclosure tiers, chosen per message by :func:`build_context`:

* ``none``: nothing (skills are off, or no skill is available to models).
* ``breadcrumb``: ``[N skills available]`` when skills exist but none matches.
* ``listing``: the registry listing (names and brief descriptions) when the user asks what
  the agent can do (:func:`is_meta_question`), or when skills that declare no
  ``triggers`` match the message well (score at the confidence threshold) but none is
  the confident answer (several are close).
* ``full``: the instructions of the top matches (at most ``max_skills``) when a skill is
  mentioned explicitly or its triggers match, or of the search's top result when it is
  ``confident`` (the calibrated "this is the right skill", see
  :mod:`skilldeck.core.search.calibration`) and declares no triggers.

Ranking among matches: explicit mention (``$name``, "use the name skill", or a
multi-part name such as ``pdf-forms`` written out), then exact phrase (a trigger keyword
or verb written verbatim), then recent use in the session (:func:`recent_use`), then the
search score (a confident search match comes after them all). Only enabled,
model-visible skills count; instructions are loaded through the workspace's write door
(:meth:`~skilldeck.core.workspace.Actions.load`: the body on demand, its token cap
applied, the load recorded) and
the whole text stays within a character budget. Every result says why it was chosen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skilldeck.core.errors import SkilldeckError
from skilldeck.core.limits import AGENT_LIMIT
from skilldeck.core.model import Skill, name_order

if TYPE_CHECKING:
    from skilldeck.core.search import SearchResult
    from skilldeck.core.sessions import Session
    from skilldeck.core.workspace import Actions, SessionRef, Workspace

Tier = Literal["none", "breadcrumb", "listing", "full"]
MAX_SKILLS = 3
"""Default number of skills whose instructions the ``full`` tier injects."""
SEARCH_POOL = 50
"""Search results examined per message (triggered and mentioned skills rank first)."""
MIN_SKILL_CHARS = 200
"""A skill's instructions are cut to fit the budget, but never below this many characters
(it is then left out and named as such)."""
SKILLS_OFF = "skills are turned off (feature flag skills_v1 is off)"
_KIND_LABEL = {"exact_phrase": "exact phrase", "search": "confident search"}

_META = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\bwhat\s+(?:else\s+)?(?:can|could)\s+(?:you|u)\s+(?:do|help(?:\s+me)?(?:\s+with)?)"
        r"(?:\s+for\s+me)?\s*(?:[?.!]|$)",
        r"\bwhat\s+(?:are\s+you|you\s+are)\s+(?:able|capable)\b",
        r"\bhow\s+can\s+you\s+help(?:\s+me)?\s*(?:[?.!]|$)",
        r"\b(?:which|what)\s+(?:skills|capabilities|abilities|tools)\s+"
        r"(?:do\s+you\s+have|have\s+you\s+got|are\s+(?:there|available)|can\s+you\s+use)",
        r"\bwhat\s+are\s+your\s+(?:skills|capabilities|abilities)\b",
        r"\b(?:list|show|see|display|view)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?"
        r"(?:(?:your|the|my|available|installed)\s+)?(?:available\s+|installed\s+)?"
        r"(?:skills|capabilities)\b",
        r"\bwhat\s+do\s+you\s+know\s+how\s+to\s+do\b",
        r"\bwhat\s+skills\s+(?:do\s+you\s+have|are\s+there|exist)\b",
        r"\b(?:skills|capabilities)\s+(?:list|overview|registry)\b",
        r"^\W*/?(?:help|skills|capabilities)(?:\s+me)?\W*$",
    )
)
_NAME_TOKEN = re.compile(r"(?<![\w$])[A-Za-z0-9][A-Za-z0-9_.:-]*")
_MULTI_PART = re.compile(r"[-_.:]")


@dataclass(slots=True)
class ContextSkill:
    """One skill in a context answer and why it is there.

    Attributes:
        name: The skill's name.
        reason: Why it was chosen, in one sentence.
        match: ``mention``, ``exact_phrase``, ``trigger``, ``search`` or ``listed``.
        score: The search score (None when the message did not reach it by search).
        recent: It was used earlier in the session.
        instructions: Its instructions as injected (``full`` tier only).
        truncated: The instructions were cut to fit the budget or the token cap.
        omitted: Chosen, but left out of the text (the budget was used up).
    """

    name: str
    reason: str
    match: str
    score: float | None = None
    recent: bool = False
    instructions: str | None = None
    truncated: bool = False
    omitted: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``instructions`` only when there are some)."""
        data: dict[str, Any] = {
            "name": self.name,
            "reason": self.reason,
            "match": self.match,
            "score": None if self.score is None else round(self.score, 4),
            "recent": self.recent,
        }
        if self.instructions is not None:
            data["instructions"] = self.instructions
            data["truncated"] = self.truncated
        if self.omitted:
            data["omitted"] = True
        return data


@dataclass(slots=True)
class SkillContext:
    """What to inject for one message.

    Attributes:
        tier: ``none``, ``breadcrumb``, ``listing`` or ``full``.
        reason: Why this tier, in one sentence.
        text: The exact text to inject ('' for ``none``).
        skills: The skills chosen or listed, best first, each with its reason.
        total: Skills available to models.
        budget: The character budget that applied.
        max_skills: The most skills the ``full`` tier injects.
    """

    tier: Tier
    reason: str
    text: str = ""
    skills: list[ContextSkill] = field(default_factory=list)
    total: int = 0
    budget: int = 0
    max_skills: int = MAX_SKILLS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: tier, reason, skills, text and the limits that applied."""
        return {
            "tier": self.tier,
            "reason": self.reason,
            "skills": [s.to_dict() for s in self.skills],
            "text": self.text,
            "total": self.total,
            "budget": self.budget,
            "max_skills": self.max_skills,
        }


@dataclass(slots=True)
class _Candidate:
    skill: Skill
    score: float | None = None
    confident: bool = False
    strong: bool = False
    mention: str | None = None
    exact: str | None = None
    fired: list[str] = field(default_factory=list)
    recent: float | None = None

    @property
    def match(self) -> str:
        if self.mention is not None:
            return "mention"
        if self.exact is not None:
            return "exact_phrase"
        return "trigger" if self.fired else "search"

    def sort_key(self) -> tuple[int, float, float, str]:
        kinds = ("mention", "exact_phrase", "trigger", "search")
        recent, score = -(self.recent or 0.0), -(self.score or 0.0)
        return (kinds.index(self.match), recent, score, self.name.lower())

    @property
    def name(self) -> str:
        return self.skill.name

    def reason(self) -> str:
        if self.mention is not None:
            text = f"explicitly mentioned ({self.mention})"
        elif self.exact is not None:
            text = f"trigger phrase {self.exact!r} appears verbatim in the message"
        elif self.fired:
            text = f"trigger matched ({', '.join(self.fired[:3])})"
        elif self.confident:
            text = (
                f"the confident best match of the message (score {self.score or 0.0:.2f}); "
                "it declares no triggers"
            )
        else:
            text = f"matches the message (score {self.score or 0.0:.2f}) but declares no triggers"
        if self.recent is not None:
            text += "; used earlier in this session"
        return text


def is_meta_question(message: str) -> bool:
    """True when ``message`` asks what the agent can do ("what can you do?", "which skills
    do you have", "list your skills", a bare "help")."""
    text = " ".join(message.split())[:500]
    return any(pattern.search(text) for pattern in _META)


def recent_use(session: Session) -> dict[str, float]:
    """Skill name -> when it was last activated (loaded) in ``session`` (Unix time)."""
    return {active.name: active.activated for active in session.skills}


def mentioned(message: str, skills: Mapping[str, Skill]) -> dict[str, str]:
    """Skills ``message`` names explicitly: name -> how (``$name``, "use the name skill",
    or a multi-part name written out, e.g. ``pdf-forms``; a one-word name written out is
    too likely to be an ordinary word).

    Args:
        message: The user message.
        skills: The candidate skills keyed by lower-case name.
    """
    from skilldeck.core.search.triggers import mentioned_names

    found: dict[str, str] = {}
    for name in mentioned_names(message):
        skill = skills.get(name)
        if skill is not None:
            found.setdefault(skill.name, f"${skill.name}")
    for token in _NAME_TOKEN.findall(message[:20_000]):
        key = token.lower().rstrip(".:-")
        skill = skills.get(key)
        if skill is not None and _MULTI_PART.search(key):
            found.setdefault(skill.name, f"named {skill.name!r}")
    return found


def exact_phrase(message: str, skill: Skill) -> str | None:
    """The first trigger keyword or verb of ``skill`` written verbatim in ``message``
    (case and punctuation aside, whole words), or None."""
    from skilldeck.core.search.text import normalize

    text = f" {normalize(message)} "
    for phrase in (*skill.triggers.keywords, *skill.triggers.verbs):
        wanted = normalize(str(phrase))
        if wanted and f" {wanted} " in text:
            return str(phrase)
    return None


def build_context(
    workspace: Workspace,
    message: str,
    *,
    max_skills: int = MAX_SKILLS,
    budget: int | None = None,
    recent: Mapping[str, float] | None = None,
    actor: str = "agent",
    session: SessionRef | None = None,
) -> SkillContext:
    """Decide what to inject for ``message`` (see the module docstring for the tiers).

    Args:
        workspace: A discovered workspace; its model-visible skills are considered.
        message: The user message.
        max_skills: Most skills whose instructions the ``full`` tier injects (1 or more).
        budget: Character budget of the text (default: ``settings.prompt_char_budget``).
        recent: Skill name -> last use in the session (:func:`recent_use`).
        actor: Who asks (``agent`` or ``cli``), for the ``skill_loaded`` telemetry event.
            An agent's request is also a ``skill_selected`` event naming the skill it
            matched (:func:`_record_match`), as an agent's search is, so usage counts it.
        session: The session the request came from: the skills injected in full are
            loaded into it (active, as an agent's load makes them), and it is named in
            the ``skill_selected`` event.

    Returns:
        The tier, its reason, the skills with their reasons, and the text to inject.
    """
    settings = workspace.settings
    limit = settings.prompt_char_budget if budget is None else max(0, budget)
    max_skills = max(1, max_skills)
    if not settings.skills_v1:
        return SkillContext("none", SKILLS_OFF, budget=limit, max_skills=max_skills)
    visible = list(workspace.visible_to_models())
    if not visible:
        return SkillContext(
            "none", "no skill is available to models", budget=limit, max_skills=max_skills
        )
    answer = SkillContext("breadcrumb", "", budget=limit, max_skills=max_skills)
    answer.total = len(visible)
    by_name = {s.name.lower(): s for s in visible}
    pool = _candidates(workspace, message, by_name, recent or {})
    matched = sorted(
        (c for c in pool.values() if c.mention is not None or c.fired), key=_Candidate.sort_key
    )
    meta = is_meta_question(message)
    if matched and (not meta or any(c.mention is not None for c in matched)):
        _full(answer, matched, max_skills, actor, workspace.actions, session)
    elif meta:
        answer.reason = "the message asks what the agent can do"
        _listing(answer, [], visible, limit)
    elif sure := [c for c in pool.values() if c.confident and not c.skill.triggers]:
        _full(answer, sure, max_skills, actor, workspace.actions, session)
    elif untriggered := sorted(
        (c for c in pool.values() if c.strong and not c.skill.triggers),
        key=_Candidate.sort_key,
    ):
        answer.reason = "skills match the message but declare no triggers"
        _listing(answer, untriggered, visible, limit)
    else:
        answer.reason = "no skill matches the message"
        answer.text = breadcrumb(len(visible))
    if actor == "agent" and (answer.tier == "full" or not meta):
        _record_match(workspace, message, answer, pool, session)
    return answer


def _record_match(
    workspace: Workspace,
    message: str,
    answer: SkillContext,
    pool: Mapping[str, _Candidate],
    session: SessionRef | None,
) -> None:
    """The ``skill_selected`` event of an agent's context request: the first skill
    injected in full is the one selected (None when none was: a request usage lists as
    unmatched), with the best search candidates. A question about what the agent can do
    is no request for a skill and is not recorded."""
    chosen = None
    if answer.tier == "full":
        chosen = next((s.name for s in answer.skills if not s.omitted), None)
    scored = sorted(
        (c for c in pool.values() if c.score is not None), key=lambda c: -(c.score or 0.0)
    )
    workspace.telemetry.emit(
        "skill_selected",
        query=message,
        confident=chosen is not None,
        clustered=False,
        selected=chosen,
        session=None if session is None else session.id,
        source="context",
        candidates=[
            {"name": c.name, "path": str(c.skill.path), "score": round(c.score or 0.0, 4)}
            for c in scored[:AGENT_LIMIT]
        ],
    )


def breadcrumb(total: int) -> str:
    """``[N skills available]``."""
    return f"[{total} skill{'s' if total != 1 else ''} available]"


def _candidates(
    workspace: Workspace, message: str, by_name: Mapping[str, Skill], recent: Mapping[str, float]
) -> dict[str, _Candidate]:
    """Every skill the message reaches: by search (its signals) or by explicit mention."""
    pool: dict[str, _Candidate] = {}
    results: Iterable[SearchResult] = ()
    threshold = workspace.settings.confidence_threshold
    if message.strip():
        response = workspace.search(
            message[:20_000], scope="visible", limit=SEARCH_POOL, tools=workspace.known_tools()
        )
        results, threshold = response.results, response.threshold
    for result in results:
        skill = by_name.get(result.skill.name.lower())
        if skill is None or skill.path != result.skill.path:
            continue
        pool[skill.name] = _Candidate(
            skill,
            score=float(result.score),
            confident=bool(result.confident),
            strong=result.score >= threshold,
            fired=[str(t) for t in result.matched.get("triggers", [])],
        )
    for name, how in mentioned(message, by_name).items():
        candidate = pool.setdefault(name, _Candidate(by_name[name.lower()]))
        candidate.mention = how
    for candidate in pool.values():
        if candidate.fired:
            candidate.exact = exact_phrase(message, candidate.skill)
        candidate.recent = recent.get(candidate.name)
    return pool


def _full(
    answer: SkillContext,
    matched: list[_Candidate],
    max_skills: int,
    actor: str,
    actions: Actions,
    session: SessionRef | None,
) -> None:
    """The ``full`` tier: the top matches' instructions, within ``answer.budget`` (each
    loaded, and recorded, through the write door ``actions``, into ``session``)."""
    budget = answer.budget
    chosen = matched[:max_skills]
    order = ("mention", "exact_phrase", "trigger", "search")
    kinds = sorted({c.match for c in chosen}, key=order.index)
    answer.tier = "full"
    answer.reason = (
        f"{len(matched)} skill{'s' if len(matched) != 1 else ''} matched by "
        f"{', '.join(_KIND_LABEL.get(k, k) for k in kinds)}"
    )
    if len(matched) > max_skills:
        answer.reason += f"; the top {max_skills} are given"
    blocks: list[str] = []
    used = 0
    for candidate in chosen:
        item = ContextSkill(
            candidate.name,
            candidate.reason(),
            candidate.match,
            candidate.score,
            candidate.recent is not None,
        )
        answer.skills.append(item)
        try:
            loaded = actions.load(
                candidate.skill, actor=actor, source="context", session=session
            ).result
        except SkilldeckError as exc:  # the file vanished or became unreadable
            item.omitted = True
            item.reason += f"; left out: {exc.message}"
            continue
        room = budget - used - (2 if blocks else 0)
        block, instructions, cut = _fit_block(candidate.name, loaded.text, room)
        if block is None:
            item.omitted = True
            item.reason += "; left out: the character budget is used up"
            continue
        item.instructions, item.truncated = instructions, cut or loaded.truncated
        used += len(block) + (2 if blocks else 0)
        blocks.append(block)
    answer.text = "\n\n".join(blocks) if blocks else _all_omitted(answer)


def _all_omitted(answer: SkillContext) -> str:
    """The text when no chosen skill fit: the breadcrumb naming the matches."""
    names = ", ".join(s.name for s in answer.skills)
    return f"{breadcrumb(answer.total)[:-1]}; matching, but left out: {names}]"


_CUT_NOTE = "\n[skilldeck: cut to fit the context budget; load_skill gives the whole text]\n"


def _fit_block(name: str, text: str, room: int) -> tuple[str | None, str, bool]:
    """The wrapped block of one skill within ``room`` characters: (block, instructions as
    injected, cut?); block None when not even :data:`MIN_SKILL_CHARS` fit."""
    block = _wrap(name, text)
    if len(block) <= room:
        return block, text, False
    keep = room - len(_wrap(name, "")) - len(_CUT_NOTE)
    if keep < MIN_SKILL_CHARS:
        return None, "", False
    kept = text[:keep]
    newline = kept.rfind("\n")
    if newline > keep // 2:
        kept = kept[: newline + 1]
    kept = kept.rstrip("\n") + _CUT_NOTE
    return _wrap(name, kept), kept, True


def _wrap(name: str, text: str) -> str:
    from xml.sax.saxutils import quoteattr

    return f"<skill name={quoteattr(name)}>\n{text.rstrip(chr(10))}\n</skill>"


def _listing(
    answer: SkillContext, first: list[_Candidate], visible: list[Skill], budget: int
) -> None:
    """The ``listing`` tier: ``first`` (the matches), then every other skill by priority
    and name, one line each (name and brief description) within ``budget``."""
    answer.tier = "listing"
    head = breadcrumb(len(visible))
    lines = [head]
    used = len(head)
    seen = {c.name for c in first}
    rest = sorted(
        (s for s in visible if s.name not in seen), key=lambda s: (-s.priority, *name_order(s))
    )
    entries = [(c.skill, c) for c in first] + [(s, None) for s in rest]
    for shown, (skill, candidate) in enumerate(entries):
        line = f"- {skill.name}: {' '.join(skill.brief.split())}".rstrip(": ")
        left = len(entries) - shown
        tail = len(f"\n(+{left - 1} more)") if left > 1 else 0
        if used + 1 + len(line) + tail > budget:
            lines.append(f"(+{left} more)")
            break
        lines.append(line)
        used += 1 + len(line)
        if candidate is not None:
            answer.skills.append(
                ContextSkill(
                    skill.name,
                    candidate.reason(),
                    "search",
                    candidate.score,
                    candidate.recent is not None,
                )
            )
        else:
            answer.skills.append(ContextSkill(skill.name, "listed", "listed"))
    answer.text = "\n".join(lines)
