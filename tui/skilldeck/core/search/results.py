"""What a search returns: ranked results with their signals, and the response around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skilldeck.core.config import Settings
from skilldeck.core.limits import AGENT_LIMIT
from skilldeck.core.model import Skill
from skilldeck.core.search.text import common_only

if TYPE_CHECKING:
    from skilldeck.core.search.index import SearchIndex
    from skilldeck.core.telemetry import Telemetry

CLUSTER_GAP = 0.05
"""Results scoring within this of the top one make the answer "clustered"."""


def too_common(query: str) -> str:
    """Why ``query`` can match nothing when every word of it is too common to be indexed
    (``'use' and 'when' are too common to search for; name the task``), else "": the one
    wording every face gives."""
    common = list(dict.fromkeys(common_only(query)))
    if not common:
        return ""
    said = " and ".join(repr(w) for w in common)
    verb = "is" if len(common) == 1 else "are"
    return f"{said} {verb} too common to search for; name the task"


@dataclass(slots=True)
class SearchResult:
    """One ranked skill.

    Attributes:
        skill: The skill.
        score: Fused score, 0-1, on the calibrated scale (:mod:`.calibration`).
        confident: The top result: it is taken to be the right skill (calibrated rule:
            score at or above the threshold and a lead over the next other skill); a
            lower one: it is named or triggered and reaches the threshold.
        signals: Each signal's 0-1 score (``bm25``, ``coverage``, ``name``, ``trigger``,
            ``mention``, ``semantic`` when on; with explain also ``bm25.<field>`` raw).
        matched: Field -> query terms found there (corrections shown as ``typed→word``),
            plus ``triggers`` -> what fired.
    """

    skill: Skill
    score: float
    confident: bool
    signals: dict[str, float] = field(default_factory=dict)
    matched: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self, explain: bool = True) -> dict[str, Any]:
        """JSON-ready form (``name``, ``path``, ``score``, ... and the explanation)."""
        data: dict[str, Any] = {
            "name": self.skill.name,
            "path": str(self.skill.path),
            "rel_id": self.skill.rel_id,
            "description": self.skill.brief,
            "score": round(self.score, 4),
            "confident": self.confident,
        }
        if explain:
            data["signals"] = {k: round(v, 4) for k, v in self.signals.items()}
            data["matched"] = self.matched
        return data


@dataclass(slots=True)
class SearchResponse:
    """Ranked results for one query.

    Attributes:
        query: The query as given.
        results: Best first, at most the requested limit.
        confident: The top result is taken to be the right skill, at the precision the
            calibration states (:mod:`skilldeck.core.search.calibration`).
        clustered: Several results score within :data:`CLUSTER_GAP` of the top one, so the
            choice between them is not clear.
        elapsed_ms: Time spent searching.
        total: How many skills matched at all.
        threshold: The confidence threshold used.
        lead: The top result's lead over the next result that is another skill.
        min_lead: The least lead the calibrated rule asks of a confident top result (the
            default, 1, keeps a response built without it, such as the name-prefix
            answer to one or two letters, from ever being confident on its score).
        sure: The top result is named, triggered or the query is its exact name (no lead
            is needed then).
    """

    query: str
    results: list[SearchResult]
    confident: bool
    clustered: bool
    elapsed_ms: float
    total: int
    threshold: float = 0.75
    lead: float = 0.0
    min_lead: float = 1.0
    sure: bool = False

    @property
    def message(self) -> str:
        """One sentence for an agent or a person about how clear the answer is."""
        if not self.results:
            why = too_common(self.query)
            return f"no match: {why}" if why else "no match"
        if self.clustered and self.results[0].score >= self.threshold:
            close = [
                r.skill.name for r in self.results if r.score >= self.results[0].score - CLUSTER_GAP
            ]
            return f"several skills match about equally: {', '.join(close)}"
        if not self.confident:
            return "no confident match"
        return f"best match: {self.results[0].skill.name}"

    def rejudge(self, threshold: float) -> None:
        """Set every result's ``confident`` (and the response's) for another threshold."""
        from skilldeck.core.search.calibration import is_confident

        for rank, result in enumerate(self.results):
            if rank == 0:
                result.confident = is_confident(
                    result.score, self.lead, self.sure, threshold, self.min_lead
                )
            else:
                named = result.signals.get("mention") == 1.0 or result.signals.get("trigger") == 1.0
                result.confident = named and result.score >= threshold
        self.threshold = threshold
        self.confident = bool(self.results) and self.results[0].confident

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "query": self.query,
            "results": [r.to_dict(explain) for r in self.results],
            "confident": self.confident,
            "clustered": self.clustered,
            "message": self.message,
            "total": self.total,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


def agent_search(
    index: SearchIndex,
    query: str,
    limit: int = AGENT_LIMIT,
    settings: Settings | None = None,
    *,
    available_tools: set[str] | None = None,
    telemetry: Telemetry | None = None,
    session: str | None = None,
) -> SearchResponse:
    """Agent-facing search: top ``limit`` (3), confidence judged, ``skill_selected`` emitted.

    When the top result is not confident under ``settings.confidence_threshold`` (see
    :mod:`skilldeck.core.search.calibration`) the response's ``confident`` is False and
    its :attr:`SearchResponse.message` says "no confident match"; the candidates are still
    returned for the agent to weigh. The event goes to ``telemetry`` (the workspace's;
    default: a writer configured by ``settings``, else by the index's settings), with the
    ``session`` the request came from (``skilldeck usage`` finds silent misses with it).
    """
    from skilldeck.core.telemetry import Telemetry

    response = index.search(query, limit=limit, available_tools=available_tools)
    if settings is not None and settings.confidence_threshold != response.threshold:
        response.rejudge(float(settings.confidence_threshold))
    writer = telemetry or Telemetry.from_settings(settings or index.settings)
    writer.emit(
        "skill_selected",
        query=query,
        confident=response.confident,
        clustered=response.clustered,
        selected=response.results[0].skill.name if response.confident else None,
        session=session,
        candidates=[
            {"name": r.skill.name, "path": str(r.skill.path), "score": round(r.score, 4)}
            for r in response.results
        ],
    )
    return response
