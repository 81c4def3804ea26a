"""Does a skill trigger? For each request that should (or should not) select it: who won
instead, and which of the request's words the skill's fields lack.

The requests come from an agentskills.io trigger-eval file (``[{"query": …,
"should_trigger": true|false}]``, or one such object per line) or from the skill's silent
misses (:mod:`.collect`: requests an agent made where it was the confident match and was
not loaded). Each is searched as an agent's request is (the models' scope, confidence
judged) with the explain breakdown; a word of the request that matched nowhere in the
skill is one its description could add, and the winner's description words show what won.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.search import SearchResult
    from skilldeck.core.workspace import Workspace

TRIGGER_LIMIT = 50
"""Results searched per request to find the skill's rank."""


@dataclass(slots=True)
class TriggerCase:
    """One request and what the search made of it for the skill."""

    query: str
    should_trigger: bool
    outcome: str
    """``triggered``, ``other_won``, ``nothing_won`` (it should trigger) or
    ``false_trigger``, ``quiet`` (it should not)."""
    winner: str | None = None
    rank: int | None = None
    score: float | None = None
    matched: dict[str, list[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    winner_words: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The search did what the request expects."""
        return self.outcome in ("triggered", "quiet")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "query": self.query,
            "should_trigger": self.should_trigger,
            "outcome": self.outcome,
            "ok": self.ok,
            "winner": self.winner,
            "rank": self.rank,
            "score": self.score,
            "matched": self.matched,
            "missing": self.missing,
            "winner_words": self.winner_words,
        }


@dataclass(slots=True)
class TriggerReport:
    """The trigger view of one skill."""

    skill: str
    source: str
    cases: list[TriggerCase] = field(default_factory=list)

    def suggestions(self, top: int = 10) -> list[tuple[str, int]]:
        """Request words the skill lacks, by how many failed requests would gain them."""
        counts: Counter[str] = Counter()
        for case in self.cases:
            if case.should_trigger and not case.ok:
                counts.update(set(case.missing))
        return counts.most_common(top)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``"schema": 1``)."""
        should = [c for c in self.cases if c.should_trigger]
        return {
            "schema": 1,
            "skill": self.skill,
            "source": self.source,
            "should_trigger": len(should),
            "triggered": sum(c.outcome == "triggered" for c in should),
            "false_triggers": sum(c.outcome == "false_trigger" for c in self.cases),
            "suggested_words": [{"word": w, "requests": n} for w, n in self.suggestions()],
            "cases": [c.to_dict() for c in self.cases],
        }


def load_trigger_cases(path: Path) -> list[tuple[str, bool]]:
    """``(query, should_trigger)`` pairs of a trigger-eval file (a JSON list, or JSON lines).

    Raises:
        SkilldeckError: INVALID_PARAM naming the first entry that is not an object with a
            string ``query`` and a boolean ``should_trigger``; NOT_FOUND for a missing file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: cannot be read: {exc}") from exc
    try:
        data = json.loads(text)
        entries = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: not JSON: {exc}") from exc
    cases: list[tuple[str, bool]] = []
    for number, entry in enumerate(entries, 1):
        query = entry.get("query") if isinstance(entry, dict) else None
        should = entry.get("should_trigger") if isinstance(entry, dict) else None
        if not isinstance(query, str) or not query.strip() or not isinstance(should, bool):
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"{path}: entry {number} needs a non-empty string query and a boolean "
                "should_trigger",
            )
        cases.append((query, should))
    return cases


def _terms(result: SearchResult | None) -> set[str]:
    """Every term that matched in ``result`` (both sides of a ``typed→word`` correction)."""
    if result is None:
        return set()
    return {part for terms in result.matched.values() for t in terms for part in t.split("→")}


def _missing(query: str, found: set[str]) -> list[str]:
    """The request's words (stopwords left out) that matched nowhere, as typed."""
    from skilldeck.core.search import stem, tokenize

    out: list[str] = []
    for word in dict.fromkeys(w.lower() for w in query.split()):
        word = word.strip(".,;:!?\"'()[]{}")
        if word and tokenize(word) and word not in found and stem(word) not in found:
            out.append(word)
    return out


def judge(workspace: Workspace, skill: str, query: str, should: bool) -> TriggerCase:
    """Search ``query`` as an agent would and judge it for ``skill``."""
    response = workspace.search(query, scope="visible", limit=TRIGGER_LIMIT, explain=True)
    results = response.results
    top = results[0] if results else None
    won = top is not None and response.confident and top.skill.name == skill
    if should:
        outcome = "triggered" if won else ("other_won" if response.confident else "nothing_won")
    else:
        outcome = "false_trigger" if won else "quiet"
    mine = next((r for r in results if r.skill.name == skill), None)
    found = _terms(mine)
    case = TriggerCase(query, should, outcome)
    case.winner = top.skill.name if top is not None and response.confident else None
    case.rank = results.index(mine) + 1 if mine is not None else None
    case.score = round(mine.score, 4) if mine is not None else None
    case.matched = dict(mine.matched) if mine is not None else {}
    case.missing = _missing(query, found)
    if top is not None and top is not mine and response.confident:
        theirs = {p for t in top.matched.get("description", []) for p in t.split("→")}
        case.winner_words = sorted(theirs - found)
    return case


def trigger_view(
    workspace: Workspace, skill: str, cases: Iterable[tuple[str, bool]], source: str
) -> TriggerReport:
    """The trigger view of ``skill`` over ``cases`` (``(query, should_trigger)`` pairs)."""
    report = TriggerReport(skill, source)
    report.cases = [judge(workspace, skill, query, should) for query, should in cases]
    return report
