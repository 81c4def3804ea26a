"""Retrieval quality on a query file: recall@1, recall@3 and MRR@10 per kind and overall,
how often the top result is flagged ``confident`` and how often it is then right.

A query file holds one JSON object per line: ``{"query": ..., "expected": [ids], "kind":
...}`` where an id is a skill folder relative to its discovery root (:attr:`Skill.rel_id`)
or, when no folder has that id, a skill name. Any expected id in the top k counts as a hit
(duplicated skills list every copy). ``expected: []`` marks a request that needs no skill:
it scores nothing, but a confident top result for it is counted as a false alarm.

The agentskills.io trigger-eval format is read too: a JSON array (or JSONL lines, or an
object with a ``skill_name`` and a ``triggers``/``queries`` list) of ``{"query": ...,
"should_trigger": true|false}`` about one skill, named by ``skill_name``, a ``skill`` key
on the line, or the caller (``skilldeck eval --skill``). ``should_trigger: true`` expects
that skill first; ``false`` counts a confident top result *of that skill* as a false alarm.

Every query falls in a fixed split, ``train`` or ``held-out``, by a hash of its text
(:func:`split_of`): weights are chosen on ``train`` and reported on both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.model import Skill
    from skilldeck.core.search.index import SearchIndex

Split = Literal["train", "held-out"]
SPLITS: tuple[Split, ...] = ("train", "held-out")
TRAIN_SHARE = 60
"""Percent of queries in the ``train`` split (the rest are ``held-out``)."""
SHOULD_TRIGGER = "should-trigger"
SHOULD_NOT_TRIGGER = "should-not-trigger"


def split_of(query: str) -> Split:
    """The split ``query`` belongs to: ``train`` when the first four bytes of the sha256 of
    its lower-cased, whitespace-collapsed text, as a big-endian number, are below
    :data:`TRAIN_SHARE` modulo 100; else ``held-out``. Fixed by the text alone, so a query
    keeps its split whatever file it is in and whatever is added around it."""
    text = " ".join(query.lower().split()).encode("utf-8")
    bucket = int.from_bytes(hashlib.sha256(text).digest()[:4], "big") % 100
    return "train" if bucket < TRAIN_SHARE else "held-out"


@dataclass(frozen=True, slots=True)
class EvalQuery:
    """One labelled query.

    Attributes:
        query: The request.
        expected: Ids of the right skills (any one ranked first is a hit); empty: the
            request needs no skill.
        kind: A label to report it under.
        avoid: Ids that must not be the confident top result (``should_trigger: false``
            lines); empty with empty ``expected``: no skill may be.
    """

    query: str
    expected: tuple[str, ...]
    kind: str = "all"
    avoid: tuple[str, ...] = ()

    @property
    def negative(self) -> bool:
        """No skill is expected: only a confident top result is scored (a false alarm)."""
        return not self.expected

    @property
    def split(self) -> Split:
        """Its split (:func:`split_of`)."""
        return split_of(self.query)


@dataclass(slots=True)
class KindScore:
    """Metrics for one kind of query (or ``overall``).

    Attributes:
        count: Queries with an expected skill.
        hits1: Of those, ranked right first.
        hits3: Ranked right within the top 3.
        rr: Sum of reciprocal ranks.
        confident: Top result flagged confident.
        confident_right: Flagged confident and right.
    """

    count: int = 0
    hits1: int = 0
    hits3: int = 0
    rr: float = 0.0
    confident: int = 0
    confident_right: int = 0

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

    @property
    def coverage(self) -> float:
        """Share of queries whose top result is flagged confident."""
        return self.confident / self.count if self.count else 0.0

    @property
    def precision(self) -> float:
        """Share of confident top results that are right (1.0 when none is confident)."""
        return self.confident_right / self.confident if self.confident else 1.0

    @property
    def confident_right_share(self) -> float:
        """Share of queries answered confidently and rightly."""
        return self.confident_right / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "queries": self.count,
            "recall@1": round(self.recall1, 4),
            "recall@3": round(self.recall3, 4),
            "mrr@10": round(self.mrr, 4),
            "confident": round(self.coverage, 4),
            "confident_precision": round(self.precision, 4),
            "confident_right": round(self.confident_right_share, 4),
        }


@dataclass(slots=True)
class NegativeScore:
    """Requests that need no skill (or not the skill under test), per kind.

    Attributes:
        count: Such requests.
        flagged: Of those, the top result was flagged confident (a false alarm).
    """

    count: int = 0
    flagged: int = 0

    @property
    def rate(self) -> float:
        """Share of false alarms."""
        return self.flagged / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"queries": self.count, "flagged": self.flagged, "rate": round(self.rate, 4)}


@dataclass(slots=True)
class EvalReport:
    """Per-kind and overall metrics, the requests needing no skill, each query's outcome."""

    kinds: dict[str, KindScore] = field(default_factory=dict)
    overall: KindScore = field(default_factory=KindScore)
    negatives: dict[str, NegativeScore] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    limit: int = 10

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "limit": self.limit,
            "kinds": {k: v.to_dict() for k, v in sorted(self.kinds.items())},
            "overall": self.overall.to_dict(),
            "negatives": {k: v.to_dict() for k, v in sorted(self.negatives.items())},
            "misses": self.misses,
            "unknown_ids": self.unknown_ids,
        }


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranker's answer: skill ids best first, and whether the first is flagged confident."""

    ids: list[str]
    confident: bool = False


Ranker = Callable[[str, int], "Ranked | list[str]"]
"""Query, limit -> :class:`Ranked` (or a bare id list: never confident)."""


# ---------------------------------------------------------------------- reading


def load_queries(path: Path, *, skill: str | None = None) -> list[EvalQuery]:
    """Read a query file: JSONL lines (``expected`` or ``should_trigger``), or a JSON array
    or object in the agentskills.io trigger-eval format.

    Args:
        path: The file.
        skill: The skill ``should_trigger`` lines are about, when the file does not say.

    Raises:
        SkilldeckError: NOT_FOUND when unreadable, INVALID_PARAM on a malformed line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"cannot read {path}: {exc.strerror}") from exc
    if text.lstrip()[:1] == "[" or _single_object(text):
        return _load_document(path, text, skill)
    queries: list[EvalQuery] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            queries.append(_parse_item(json.loads(line), skill))
        except (ValueError, KeyError, TypeError) as exc:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"{path}:{number}: bad query line: {exc}"
            ) from exc
    return queries


def _single_object(text: str) -> bool:
    """The whole text is one JSON object that is not itself a query line (an envelope)."""
    stripped = text.strip()
    if not stripped.startswith("{") or "\n" not in stripped:
        return False
    try:
        data = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(data, dict) and "query" not in data


def _load_document(path: Path, text: str, skill: str | None) -> list[EvalQuery]:
    """A JSON array of items, or ``{"skill_name": ..., "triggers"|"queries"|"evals": [...]}``."""
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            skill = str(data.get("skill_name") or data.get("skill") or "") or skill
            data = next(data[k] for k in ("triggers", "queries", "evals") if k in data)
        if not isinstance(data, list):
            raise TypeError("expected a list of queries")
    except (ValueError, TypeError, StopIteration) as exc:
        detail = "no triggers, queries or evals list" if isinstance(exc, StopIteration) else exc
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: bad query file: {detail}") from exc
    queries = []
    for number, item in enumerate(data, 1):
        try:
            queries.append(_parse_item(item, skill))
        except (ValueError, KeyError, TypeError) as exc:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"{path}: item {number}: bad query: {exc}"
            ) from exc
    return queries


def _parse_item(data: Any, skill: str | None) -> EvalQuery:
    """One query object: ``{query, expected, kind}`` or ``{query, should_trigger}``."""
    if not isinstance(data, dict):
        raise TypeError("a query must be a JSON object")
    query = data["query"]
    if not isinstance(query, str):
        raise TypeError("query must be a string")
    if "should_trigger" in data and "expected" not in data:
        about = str(data.get("skill") or skill or "").strip("/")
        if not about:
            raise ValueError("should_trigger needs the skill it is about (--skill)")
        if bool(data["should_trigger"]):
            return EvalQuery(query, (about,), str(data.get("kind") or SHOULD_TRIGGER))
        return EvalQuery(query, (), str(data.get("kind") or SHOULD_NOT_TRIGGER), (about,))
    expected = data["expected"]
    if isinstance(expected, str):
        expected = [expected]
    if not isinstance(expected, list):
        raise TypeError("query must be a string and expected a list")
    kind = str(data.get("kind") or ("negative" if not expected else "all"))
    return EvalQuery(query, tuple(str(e).strip("/") for e in expected), kind)


def select_split(queries: Iterable[EvalQuery], split: str | None) -> list[EvalQuery]:
    """The queries of ``split`` (``train`` or ``held-out``; None or ``all``: every one)."""
    if split in (None, "all"):
        return list(queries)
    if split not in SPLITS:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"unknown split {split!r}")
    return [q for q in queries if q.split == split]


def resolve_ids(queries: Sequence[EvalQuery], skills: Sequence[Skill]) -> list[EvalQuery]:
    """``queries`` with every id that is no skill's folder (``rel_id``) but is a skill's
    name replaced by the folders of the skills of that name."""
    folders = {s.rel_id for s in skills}
    by_name: dict[str, list[str]] = {}
    for s in skills:
        by_name.setdefault(s.name.lower(), []).append(s.rel_id)

    def fix(ids: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for i in ids:
            out.extend([i] if i in folders else by_name.get(i.lower(), [i]))
        return tuple(dict.fromkeys(out))

    return [EvalQuery(q.query, fix(q.expected), q.kind, fix(q.avoid)) for q in queries]


# ---------------------------------------------------------------------- scoring


def index_ranker(index: SearchIndex, *, semantic: bool | None = None) -> Ranker:
    """A ranker answering ``rel_id`` lists and the top's ``confident`` from an index."""

    def rank(query: str, limit: int) -> Ranked:
        response = index.search(query, limit=limit, semantic=semantic)
        return Ranked([r.skill.rel_id for r in response.results], response.confident)

    return rank


def evaluate(
    ranker: Ranker, queries: list[EvalQuery], *, limit: int = 10, known_ids: set[str] | None = None
) -> EvalReport:
    """Run every query through ``ranker`` and score the rankings and the confident flags."""
    report = EvalReport(limit=limit)
    for item in queries:
        answer = ranker(item.query, limit)
        ranked = answer if isinstance(answer, Ranked) else Ranked(list(answer))
        if known_ids is not None:
            ids = {*item.expected, *item.avoid}
            report.unknown_ids.extend(sorted(e for e in ids if e not in known_ids))
        if item.negative:
            _score_negative(report, item, ranked)
        else:
            _score_positive(report, item, ranked, limit)
    return report


def _score_positive(report: EvalReport, item: EvalQuery, ranked: Ranked, limit: int) -> None:
    expected = set(item.expected)
    ids = ranked.ids[:limit]
    rank = next((i for i, rid in enumerate(ids, 1) if rid in expected), None)
    confident = bool(ids) and ranked.confident
    for score in (report.kinds.setdefault(item.kind, KindScore()), report.overall):
        score.count += 1
        score.hits1 += rank == 1
        score.hits3 += rank is not None and rank <= 3
        score.rr += 1.0 / rank if rank else 0.0
        score.confident += confident
        score.confident_right += confident and rank == 1
    if rank != 1:
        report.misses.append(
            {
                "query": item.query,
                "kind": item.kind,
                "rank": rank,
                "got": ids[:3],
                "confident": confident,
            }
        )


def _score_negative(report: EvalReport, item: EvalQuery, ranked: Ranked) -> None:
    score = report.negatives.setdefault(item.kind, NegativeScore())
    score.count += 1
    top = ranked.ids[0] if ranked.ids else None
    flagged = top is not None and ranked.confident and (not item.avoid or top in item.avoid)
    score.flagged += flagged
    if flagged:
        report.misses.append(
            {"query": item.query, "kind": item.kind, "rank": None, "got": ranked.ids[:3]}
        )
