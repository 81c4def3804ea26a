"""Retrieval quality on a query file: recall@1, recall@3 and MRR@10, per kind and overall.

A query file holds one JSON object per line: ``{"query": ..., "expected": [ids], "kind":
...}`` where an id is a skill folder relative to its discovery root (:attr:`Skill.rel_id`).
Any expected id in the top k counts as a hit (duplicated skills list every copy).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.search.index import SearchIndex


@dataclass(frozen=True, slots=True)
class EvalQuery:
    """One labelled query."""

    query: str
    expected: tuple[str, ...]
    kind: str = "all"


@dataclass(slots=True)
class KindScore:
    """Metrics for one kind of query (or ``overall``)."""

    count: int = 0
    hits1: int = 0
    hits3: int = 0
    rr: float = 0.0

    @property
    def recall1(self) -> float:
        """Share of queries whose first result is expected."""
        return self.hits1 / self.count if self.count else 0.0

    @property
    def recall3(self) -> float:
        """Share of queries with an expected skill in the top 3."""
        return self.hits3 / self.count if self.count else 0.0

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank of the first expected skill within the limit."""
        return self.rr / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "queries": self.count,
            "recall@1": round(self.recall1, 4),
            "recall@3": round(self.recall3, 4),
            "mrr@10": round(self.mrr, 4),
        }


@dataclass(slots=True)
class EvalReport:
    """Per-kind and overall metrics, plus each query's outcome."""

    kinds: dict[str, KindScore] = field(default_factory=dict)
    overall: KindScore = field(default_factory=KindScore)
    misses: list[dict[str, Any]] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    limit: int = 10

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "limit": self.limit,
            "kinds": {k: v.to_dict() for k, v in sorted(self.kinds.items())},
            "overall": self.overall.to_dict(),
            "misses": self.misses,
            "unknown_ids": self.unknown_ids,
        }


def load_queries(path: Path) -> list[EvalQuery]:
    """Read a query file.

    Raises:
        SkilldeckError: NOT_FOUND when unreadable, INVALID_PARAM on a malformed line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"cannot read {path}: {exc.strerror}") from exc
    queries: list[EvalQuery] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
            query = data["query"]
            expected = data["expected"]
            if isinstance(expected, str):
                expected = [expected]
            if not isinstance(query, str) or not isinstance(expected, list):
                raise TypeError("query must be a string and expected a list")
            kind = str(data.get("kind") or "all")
        except (ValueError, KeyError, TypeError) as exc:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"{path}:{number}: bad query line: {exc}"
            ) from exc
        queries.append(EvalQuery(query, tuple(str(e).strip("/") for e in expected), kind))
    return queries


Ranker = Callable[[str, int], list[str]]


def index_ranker(index: SearchIndex, *, semantic: bool | None = None) -> Ranker:
    """A ranker answering ``rel_id`` lists from a :class:`SearchIndex`."""

    def rank(query: str, limit: int) -> list[str]:
        response = index.search(query, limit=limit, semantic=semantic)
        return [r.skill.rel_id for r in response.results]

    return rank


def evaluate(
    ranker: Ranker, queries: list[EvalQuery], *, limit: int = 10, known_ids: set[str] | None = None
) -> EvalReport:
    """Run every query through ``ranker`` and score the rankings."""
    report = EvalReport(limit=limit)
    for item in queries:
        ranked = ranker(item.query, limit)
        expected = set(item.expected)
        if known_ids is not None:
            report.unknown_ids.extend(sorted(e for e in expected if e not in known_ids))
        rank = next((i for i, rid in enumerate(ranked[:limit], 1) if rid in expected), None)
        for score in (report.kinds.setdefault(item.kind, KindScore()), report.overall):
            score.count += 1
            score.hits1 += rank == 1
            score.hits3 += rank is not None and rank <= 3
            score.rr += 1.0 / rank if rank else 0.0
        if rank != 1:
            report.misses.append(
                {"query": item.query, "kind": item.kind, "rank": rank, "got": ranked[:3]}
            )
    return report
