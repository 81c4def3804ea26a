"""k-fold cross-validation by query: retrieval figures that hold on queries not tuned on.

Every query falls in one of ``k`` folds by a hash of its text (:func:`fold_of`), so a
query keeps its fold whatever file it is in. Fold ``i`` is scored by a ranker built from
the other folds only (:func:`cross_validate`): whatever is fitted (example requests
copied into the skills with :func:`with_examples`, a ``confident`` rule) never sees the
queries it is scored on. The report gives each fold's figures and their mean and spread
(population standard deviation), so a change counts only when it wins on most folds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skilldeck.core.model import Example, Skill
from skilldeck.core.search.evaluate import EvalQuery, EvalReport, Ranker, evaluate, index_ranker

if TYPE_CHECKING:
    from skilldeck.core.search.index import SearchIndex

FOLDS = 5
"""Folds used by default (``skilldeck eval --folds``)."""
METRICS = ("recall@1", "recall@3", "mrr@10", "confident", "confident_precision")
"""The overall figures averaged over folds (keys of :meth:`KindScore.to_dict`)."""

FoldRanker = Callable[[list[EvalQuery]], Ranker]
"""Training queries of a fold -> the ranker that scores the fold's other queries."""


def fold_of(query: str, k: int) -> int:
    """The fold (0 to ``k - 1``) of ``query``: bytes 4-8 of the sha256 of its lower-cased,
    whitespace-collapsed text as a big-endian number, modulo ``k`` (bytes 0-4 decide the
    train/held-out split, :func:`~.evaluate.split_of`)."""
    text = " ".join(query.lower().split()).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[4:8], "big") % k


def split_folds(
    queries: Sequence[EvalQuery], k: int
) -> list[tuple[list[EvalQuery], list[EvalQuery]]]:
    """Per fold, its (training, test) queries: the test part is the fold's own."""
    folds = [fold_of(q.query, k) for q in queries]
    return [
        (
            [q for q, f in zip(queries, folds, strict=True) if f != i],
            [q for q, f in zip(queries, folds, strict=True) if f == i],
        )
        for i in range(k)
    ]


def with_examples(skills: Sequence[Skill], queries: Sequence[EvalQuery]) -> list[Skill]:
    """Copies of ``skills`` whose ``examples`` also hold the requests of ``queries`` that
    expect them (by folder id or name); the skills themselves are left as they are."""
    wanted: dict[str, list[str]] = {}
    for item in queries:
        for ident in item.expected:
            wanted.setdefault(ident.lower(), []).append(item.query)
    out: list[Skill] = []
    for skill in skills:
        extra = wanted.get(skill.rel_id.lower()) or wanted.get(skill.name.lower()) or []
        known = {e.request for e in skill.examples}
        fresh = tuple(Example(q) for q in dict.fromkeys(extra) if q not in known)
        out.append(dataclasses.replace(skill, examples=(*skill.examples, *fresh)))
    return out


def fold_rankers(index: SearchIndex, *, examples: bool) -> FoldRanker:
    """What scores a fold: ``index`` itself (nothing is fitted), or with ``examples`` a new
    index, with the same settings and embeddings when ``index`` has them, over copies of
    its skills holding the fold's training requests as examples (:func:`with_examples`)."""

    def build(train: list[EvalQuery]) -> Ranker:
        if not examples:
            return index_ranker(index)
        fold = type(index).build(
            with_examples(index.skills, train), settings=index.settings, semantic=index.semantic
        )
        return index_ranker(fold)

    return build


@dataclass(slots=True)
class CrossValReport:
    """Each fold's report and the mean and spread of its overall figures.

    Attributes:
        folds: One :class:`EvalReport` per fold (its own queries only).
        limit: Results looked at per query.
    """

    folds: list[EvalReport] = field(default_factory=list)
    limit: int = 10

    def values(self, metric: str) -> list[float]:
        """``metric`` (a key of :data:`METRICS`, or ``negatives``: the share of requests
        needing no skill flagged confident) per fold."""
        if metric == "negatives":
            out = []
            for report in self.folds:
                count = sum(n.count for n in report.negatives.values())
                flagged = sum(n.flagged for n in report.negatives.values())
                out.append(flagged / count if count else 0.0)
            return out
        return [float(r.overall.to_dict()[metric]) for r in self.folds]

    def summary(self, metric: str) -> tuple[float, float]:
        """Mean and population standard deviation of ``metric`` over the folds."""
        vals = self.values(metric)
        if not vals:
            return 0.0, 0.0
        return statistics.fmean(vals), statistics.pstdev(vals)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: per metric its mean, spread and per-fold values."""
        out: dict[str, Any] = {"folds": len(self.folds), "limit": self.limit}
        for metric in (*METRICS, "negatives"):
            mean, spread = self.summary(metric)
            out[metric] = {
                "mean": round(mean, 4),
                "spread": round(spread, 4),
                "per_fold": [round(v, 4) for v in self.values(metric)],
            }
        out["queries"] = [r.overall.count for r in self.folds]
        return out


def cross_validate(
    build: FoldRanker,
    queries: Sequence[EvalQuery],
    *,
    k: int = FOLDS,
    limit: int = 10,
    negatives: Sequence[EvalQuery] = (),
) -> CrossValReport:
    """Score each fold of ``queries`` with the ranker ``build`` makes from the others.

    Args:
        build: Training queries -> a ranker (it must not look at anything else).
        queries: Labelled queries (those expecting no skill go with ``negatives``).
        k: Folds (at least 2).
        limit: Results looked at per query.
        negatives: Requests needing no skill, split in folds too; never used to build.
    """
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    report = CrossValReport(limit=limit)
    positives = [q for q in queries if not q.negative]
    spare = [*negatives, *(q for q in queries if q.negative)]
    parts = split_folds(spare, k)
    for i, (train, test) in enumerate(split_folds(positives, k)):
        ranker = build(train)
        report.folds.append(evaluate(ranker, [*test, *parts[i][1]], limit=limit))
    return report
