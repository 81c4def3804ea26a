"""The search index: fielded BM25, fuzzy correction, name matching, triggers, embeddings.

Signals, each normalised to 0-1 per document:

``bm25``
    Weighted sum of per-field BM25Okapi scores (:data:`FIELD_WEIGHTS`: description 3,
    tags 2.5, name 1.5, headings 0.75, body 0.5; with embeddings on,
    :data:`SEMANTIC_FIELD_WEIGHTS`, which give headings and body more say), divided by the
    best document's score. The weighted sums are precomputed per (term, skill) pair
    (:class:`~skilldeck.core.search.postings.FieldPostings`; the second weighting only
    while embeddings are on), so a query term costs one gather; the settled words' scores
    are kept, per weighting, while the last word is being typed.
``coverage``
    idf-weighted share of the query terms the skill contains, with credit by field; an
    absolute measure, so a strong relative BM25 on a weak match does not look confident.
``name``
    rapidfuzz ``token_set_ratio`` (and ``partial_ratio`` for short queries) between the
    query and the skill's name only, computed for the best lexical candidates.
``semantic``
    Cosine similarity of sentence embeddings, rescaled (optional extra).

The fused score is their weighted mean (weights in :data:`WEIGHTS`, or
:data:`SEMANTIC_WEIGHTS` when embeddings are on; both tuned by grid search on the dev set
and ``tests/eval/queries-extra.jsonl`` together). Explicit mentions and triggers are
applied on top: they rank a skill first.
"""

from __future__ import annotations

import bisect
import time
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process

from skilldeck.core.config import Settings
from skilldeck.core.model import Skill
from skilldeck.core.search.postings import (
    FieldArrays,
    FieldPostings,
    FieldViews,
    release_free_memory,
    sorted_unique,
    sum_by_key,
)
from skilldeck.core.search.text import (
    RAW_TOKEN,
    STOPWORDS,
    headings,
    normalize,
    raw_token_bytes,
    stem,
    stem_word,
    words,
)
from skilldeck.core.search.triggers import TriggerTable, mentioned_names

FIELDS = ("name", "description", "tags", "headings", "body")
FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.5,
    "description": 3.0,
    "tags": 2.5,
    "headings": 0.75,
    "body": 0.5,
}
"""Weight of each field's BM25 in the ``bm25`` signal: description > tags > name > headings
> body, as the search issue orders them (grid search on the dev set and the extra set)."""
SEMANTIC_FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.5,
    "description": 3.0,
    "tags": 2.5,
    "headings": 1.45,
    "body": 1.2,
}
"""The field weights used with embeddings on, in the same order. The embedding reads only
name and description; next to it, headings and body weighted more did better (grid search
on the dev set and the extra set, overall and per-kind figures only)."""
FIELD_CREDIT: dict[str, float] = {
    "name": 1.0,
    "description": 1.0,
    "tags": 1.0,
    "headings": 0.7,
    "body": 0.45,
}
WEIGHTS: dict[str, float] = {"bm25": 0.35, "coverage": 0.4, "name": 0.25}
SEMANTIC_WEIGHTS: dict[str, float] = {"bm25": 0.3, "coverage": 0.4, "name": 0.15, "semantic": 0.3}
BODY_BYTES = 8192
BODY_MIN_BYTES = 1024
BODY_BUDGET = 64 * 1024 * 1024
PREFIX_WEIGHT = 0.8
PREFIX_EXPANSIONS = 6
MIN_PREFIX = 3
FUZZY_LIMIT = 2
CANDIDATES = 200
NAME_ALL_LIMIT = 500
CLUSTER_GAP = 0.05
TRIGGER_SCORE = 0.9
SEM_LOW, SEM_HIGH = 0.1, 0.6
NAME_FLOOR = 0.6
HUMAN_LIMIT = 20
AGENT_LIMIT = 3
BASE_CACHE = 8

_CREDIT = np.array(
    [
        max((FIELD_CREDIT[f] for i, f in enumerate(FIELDS) if bits & (1 << i)), default=0.0)
        for bits in range(1 << len(FIELDS))
    ],
    dtype=np.float64,
)
"""Coverage credit of a term found in the fields of a bit mask: the best field's."""
_EMPTY_FIELD: FieldArrays = (
    np.zeros(0, dtype=np.int32),
    np.zeros(0, dtype=np.int32),
    np.zeros(0, dtype=np.int32),
)
_NO_RANKS = np.zeros(0, dtype=np.int32)
_FIELDS_OF = [
    tuple(f for i, f in enumerate(FIELDS) if bits & (1 << i)) for bits in range(1 << len(FIELDS))
]


SHORT_QUERY = 2
"""Queries this short are matched against name prefixes only."""


@dataclass(slots=True)
class SearchResult:
    """One ranked skill.

    Attributes:
        skill: The skill.
        score: Fused score, 0-1.
        confident: ``score`` is at or above the confidence threshold.
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
        confident: The top result reaches the confidence threshold.
        clustered: Several results score within :data:`CLUSTER_GAP` of the top one, so the
            choice between them is not clear.
        elapsed_ms: Time spent searching.
        total: How many skills matched at all.
        threshold: The confidence threshold used.
    """

    query: str
    results: list[SearchResult]
    confident: bool
    clustered: bool
    elapsed_ms: float
    total: int
    threshold: float = 0.75

    @property
    def message(self) -> str:
        """One sentence for an agent or a person about how clear the answer is."""
        if not self.results:
            return "no match"
        if not self.confident:
            return "no confident match"
        if self.clustered:
            close = [
                r.skill.name for r in self.results if r.score >= self.results[0].score - CLUSTER_GAP
            ]
            return f"several skills match about equally: {', '.join(close)}"
        return f"best match: {self.results[0].skill.name}"

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


def _field_texts(skill: Skill, body: str) -> tuple[str, str, str, str, str]:
    """The texts of :data:`FIELDS`, in that order."""
    tags = [*skill.tags, *skill.triggers.keywords, *skill.triggers.verbs]
    tools = [t.split("(", 1)[0] for t in (*skill.tool_names, *skill.allowed_tools)]
    return (
        skill.name.replace("-", " ").replace("_", " "),
        skill.description,
        " ".join(str(t) for t in (*tags, *tools)),
        "\n".join(headings(body)),
        body,
    )


def body_bytes_for(count: int) -> int:
    """Bytes of each body indexed for a catalog of ``count`` skills.

    :data:`BODY_BYTES` (8 KiB) while the total stays within :data:`BODY_BUDGET`, then less
    (never under 1 KiB), so that a 100k-skill index stays small enough to keep in memory.
    """
    if count <= 0:
        return BODY_BYTES
    return max(BODY_MIN_BYTES, min(BODY_BYTES, BODY_BUDGET // count))


def _read_body(skill: Skill, max_bytes: int) -> str:
    from skilldeck.core.errors import SkilldeckError
    from skilldeck.core.parse import read_body

    try:
        return read_body(skill, max_bytes=max_bytes)
    except (SkilldeckError, OSError, ValueError):
        return ""


def _required_tools(skill: Skill) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.name.split("(", 1)[0].strip() for t in skill.tools if t.required))


class SurfaceWords:
    """The vocabulary as written (lower-cased, unstemmed), with document frequencies.

    Kept sorted for prefix completion (a bisection gives the range of words starting with
    a prefix) and grouped by first letter and length for typo correction. Behaves as a
    read-only mapping word -> number of skills using it.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self.words: list[str] = sorted(counts) if counts else []
        self.counts: NDArray[np.int32] = np.array(
            [counts[w] for w in self.words] if counts else [], dtype=np.int32
        )
        self.by_length: dict[tuple[str, int], list[str]] = {}
        for word in self.words:
            if word.isalpha() and len(word) >= 3:
                self.by_length.setdefault((word[0], len(word)), []).append(word)

    def _find(self, word: str) -> int:
        i = bisect.bisect_left(self.words, word)
        return i if i < len(self.words) and self.words[i] == word else -1

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._find(word) >= 0

    def __len__(self) -> int:
        return len(self.words)

    def get(self, word: str, default: int = 0) -> int:
        """Number of skills using ``word``."""
        i = self._find(word)
        return int(self.counts[i]) if i >= 0 else default

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """Positions ``[lo, hi)`` of the words starting with ``prefix``."""
        lo = bisect.bisect_left(self.words, prefix)
        return lo, bisect.bisect_left(self.words, prefix + "\U0010ffff", lo)

    def add(self, words: Iterable[str]) -> None:
        """Count one more skill using each of ``words``."""
        fresh: list[str] = []
        for word in words:
            i = self._find(word)
            if i >= 0:
                self.counts[i] += 1
            else:
                fresh.append(word)
        if not fresh:
            return
        for word in sorted(fresh):
            i = bisect.bisect_left(self.words, word)
            self.words.insert(i, word)
            self.counts = np.insert(self.counts, i, 1)
            if word.isalpha() and len(word) >= 3:
                bisect.insort(self.by_length.setdefault((word[0], len(word)), []), word)


@dataclass(slots=True)
class _Query:
    """A parsed query: term id -> weight, split into settled words and the word being typed."""

    terms: dict[int, float]
    labels: dict[int, str]
    unknown: int
    fixed: dict[int, float]
    tail: dict[int, float]


class _Tokens:
    """Raw token -> (term ids, surface words), shared by one build or update."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.ids: dict[bytes, int] = {}
        self.ptr = array("q", [0])
        self.terms = array("i")
        self.surface = array("i")
        self.surface_ids: dict[str, int] = {}

    def new(self, raw: bytes) -> int:
        vocab = self.index.vocab
        for word in words(raw.decode("ascii")):
            if word in STOPWORDS:
                continue
            term = stem_word(word)
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(vocab)
            self.terms.append(tid)
            if len(word) >= 2 and not word.isdigit():
                sid = self.surface_ids.setdefault(word, len(self.surface_ids))
            else:
                sid = -1
            self.surface.append(sid)
        self.ptr.append(len(self.terms))
        rid = self.ids[raw] = len(self.ids)
        return rid

    def ids_of(self, counter: Counter[bytes]) -> list[int]:
        found = list(map(self.ids.get, counter))
        if None in found:
            for raw in sorted(set(counter).difference(self.ids)):
                self.new(raw)
            found = list(map(self.ids.get, counter))
        return found  # type: ignore[return-value]


class SearchIndex:
    """Search over a fixed list of skills; see the module docstring for the ranking.

    Build with :meth:`build`; keep it current with :meth:`update` and :meth:`remove`.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.skills: list[Skill] = []
        self.vocab: dict[str, int] = {}
        self.field_weights: dict[str, float] = dict(FIELD_WEIGHTS)
        self.semantic_field_weights: dict[str, float] = dict(SEMANTIC_FIELD_WEIGHTS)
        self.postings = FieldPostings(
            [_EMPTY_FIELD] * len(FIELDS),
            np.zeros((len(FIELDS), 0), dtype=np.int32),
            0,
            self._weight_vector(),
        )
        self.surface_df = SurfaceWords()
        self._name_norm: list[str] = []
        self._priority: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._required: list[tuple[str, ...]] = []
        self._doc_of_path: dict[Path, int] | None = None
        self._order: NDArray[np.int32] | None = None
        self._rank: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._prefix_first: dict[str, tuple[int, int]] | None = None
        self._prefix_part: dict[str, NDArray[np.int32]] = {}
        self.triggers = TriggerTable()
        self.bodies = True
        self.body_bytes = BODY_BYTES
        self._correction_cache: dict[str, list[tuple[str, float]]] = {}
        self._base_cache: OrderedDict[
            tuple[int, tuple[tuple[int, float], ...]], NDArray[np.float64]
        ] = OrderedDict()
        self._weighting = 0
        self.semantic_error: str | None = None
        self._embedder: Any = None
        self._embeddings: NDArray[np.float32] | None = None
        self._embed_texts: list[str] = []

    def _weight_vector(self, weights: Mapping[str, float] | None = None) -> list[float]:
        chosen = self.field_weights if weights is None else weights
        return [float(chosen[f]) for f in FIELDS]

    def active_field_weights(self, semantic: bool) -> dict[str, float]:
        """The field weights a query uses: :attr:`semantic_field_weights` when it uses
        embeddings (and their BM25 weighting is built), else :attr:`field_weights`."""
        if semantic and self.postings.alt_contrib is not None:
            return self.semantic_field_weights
        return self.field_weights

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill],
        *,
        bodies: bool = True,
        settings: Settings | None = None,
        semantic: bool | None = None,
        field_weights: Mapping[str, float] | None = None,
        semantic_field_weights: Mapping[str, float] | None = None,
    ) -> SearchIndex:
        """Index ``skills``.

        Args:
            skills: What to index (the caller decides: usually ``catalog.active()``).
            bodies: Also index headings and the first :data:`BODY_BYTES` of each body
                (reads files; off gives a metadata-only index).
            settings: Settings (confidence threshold, semantic on/off).
            semantic: Force the embedding signal on or off (default: ``settings.semantic``).
            field_weights: Override :data:`FIELD_WEIGHTS` (for tuning experiments).
            semantic_field_weights: Override :data:`SEMANTIC_FIELD_WEIGHTS` (likewise).
        """
        index = cls(settings)
        if field_weights is not None:
            index.field_weights.update(field_weights)
        if semantic_field_weights is not None:
            index.semantic_field_weights.update(semantic_field_weights)
        index.bodies = bodies
        n = len(skills)
        index.body_bytes = body_bytes_for(n)
        tokens = _Tokens(index)
        raw_ids = [array("i") for _ in FIELDS]
        raw_counts = [array("i") for _ in FIELDS]
        per_doc = [array("i") for _ in FIELDS]
        for skill in skills:
            body = _read_body(skill, index.body_bytes) if bodies else ""
            for f, text in enumerate(_field_texts(skill, body)):
                counter = Counter(raw_token_bytes(text))
                raw_ids[f].extend(tokens.ids_of(counter))
                raw_counts[f].extend(counter.values())
                per_doc[f].append(len(counter))
        del tokens.ids
        # long-lived Python objects are made after the loop, packed together, so that
        # the loop's garbage frees whole arenas (the index otherwise keeps ~1.5x its RSS)
        index.vocab = _fresh_keys(index.vocab)
        for skill in skills:
            index._register(skill)
            index.skills.append(skill)
        doc_len, fields, surface_df = _postings_arrays(tokens, raw_ids, raw_counts, per_doc, n)
        del raw_ids, raw_counts, per_doc
        index.postings = FieldPostings(fields, doc_len, len(index.vocab), index._weight_vector())
        del fields
        surface_ids = _fresh_keys(tokens.surface_ids)
        del tokens
        index.surface_df = SurfaceWords({w: int(surface_df[i]) for w, i in surface_ids.items()})
        del surface_ids
        index._priority = np.array([s.priority for s in index.skills], dtype=np.int64)
        index._name_tables()
        release_free_memory()
        use_semantic = index.settings.semantic if semantic is None else semantic
        if use_semantic:
            index.enable_semantic()
        return index

    def _analyse(self, skill: Skill) -> tuple[list[dict[int, int]], set[str]]:
        """One skill's term frequencies per field, and the surface words it uses."""
        body = _read_body(skill, self.body_bytes) if self.bodies else ""
        out: list[dict[int, int]] = []
        seen: set[str] = set()
        for text in _field_texts(skill, body):
            counts: dict[int, int] = {}
            for raw, count in Counter(RAW_TOKEN.findall(text)).items():
                for word in words(raw):
                    if word in STOPWORDS:
                        continue
                    term = stem(word)
                    tid = self.vocab.get(term)
                    if tid is None:
                        tid = self.vocab[term] = len(self.vocab)
                    counts[tid] = counts.get(tid, 0) + count
                    if len(word) >= 2 and not word.isdigit():
                        seen.add(word)
            out.append(counts)
        return out, seen

    def _register(self, skill: Skill) -> None:
        doc = len(self.skills)
        self._name_norm.append(normalize(skill.name))
        self._required.append(_required_tools(skill))
        if self._doc_of_path is not None:
            self._doc_of_path[skill.path] = doc
        trig = skill.triggers
        if trig:
            self.triggers.add(doc, trig.keywords, trig.verbs, trig.patterns)
        if self._embedder is not None:
            self._embed_texts.append(self._embed_text(skill))

    def _name_tables(self) -> None:
        """Docs in name order (ties, mentions) and name-prefix tables (short queries)."""
        lower = [s.name.lower() for s in self.skills]
        paths = [str(s.path) for s in self.skills]
        order = sorted(range(len(lower)), key=lambda d: (lower[d], paths[d]))
        self._order = np.array(order, dtype=np.int32)
        self._rank = np.empty(len(order), dtype=np.int32)
        self._rank[self._order] = np.arange(len(order), dtype=np.int32)
        first: dict[str, tuple[int, int]] = {}
        part_keys: dict[str, int] = {}
        key_ids = array("i")
        ranks = array("i")
        for rank, doc in enumerate(order):
            name = lower[doc]
            for key in {name[:1], name[:2]}:
                span = first.get(key)
                first[key] = (rank, rank + 1) if span is None else (span[0], rank + 1)
            if "-" in name:
                keys = set()
                for part in name.split("-")[1:]:
                    if part:
                        keys.add(part[:1])
                        keys.add(part[:2])
                for key in keys:
                    key_ids.append(part_keys.setdefault(key, len(part_keys)))
                    ranks.append(rank)
        first.pop("", None)
        self._prefix_first = first
        ids = np.frombuffer(key_ids, dtype=np.int32)
        values = np.frombuffer(ranks, dtype=np.int32)
        by_key = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[by_key], np.arange(len(part_keys) + 1))
        self._prefix_part = {
            key: values[by_key[bounds[i] : bounds[i + 1]]].copy() for key, i in part_keys.items()
        }

    def _ensure_names(self) -> NDArray[np.int32]:
        if self._order is None or self._prefix_first is None:
            self._name_tables()
        assert self._order is not None
        return self._order

    def _invalidate(self) -> None:
        self._order = None
        self._prefix_first = None
        self._base_cache.clear()
        self._correction_cache.clear()

    @staticmethod
    def _embed_text(skill: Skill) -> str:
        name = skill.name.replace("-", " ")
        return f"{name}: {skill.description}"

    def enable_semantic(self) -> bool:
        """Load the embedding model and embed every skill (cached on disk).

        Returns:
            True when the semantic signal is on; on failure the index stays lexical, the
            reason is kept in :attr:`semantic_error` and a ``skill_embedding_fallback``
            telemetry event is emitted.
        """
        from skilldeck.core.search.semantic import (
            EmbeddingCache,
            SemanticUnavailable,
            load_embedder,
        )

        try:
            embedder = load_embedder()
            cache = EmbeddingCache(embedder.model_id)
            texts = [self._embed_text(s) for s in self.skills]
            embeddings = cache.embed(embedder, texts)
            cache.save()
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc))
            return False
        # the second BM25 weighting is ready before any query can take the semantic path
        self.postings.set_alt_weights(self._weight_vector(self.semantic_field_weights))
        self._weighting += 1
        self._embeddings = embeddings
        self._embedder = embedder
        self._embed_texts = texts
        self.semantic_error = None
        return True

    def _semantic_fallback(self, reason: str) -> None:
        from skilldeck.core import telemetry

        self._embedder = None
        self._embeddings = None
        self.postings.set_alt_weights(None)
        self.semantic_error = reason
        telemetry.emit("skill_embedding_fallback", reason=reason, skills=len(self.skills))

    @property
    def semantic(self) -> bool:
        """Whether the embedding signal is in use."""
        return self._embeddings is not None

    @property
    def fields(self) -> FieldViews:
        """Field name -> that field's postings as :class:`BM25Postings` (built on access)."""
        return FieldViews(self.postings, FIELDS)

    def __len__(self) -> int:
        return len(self.skills)

    def nbytes(self) -> int:
        """Approximate memory of the numeric arrays (postings, norms, embeddings)."""
        total = self.postings.nbytes() + self._priority.nbytes + self._rank.nbytes
        total += sum(a.nbytes for a in self._prefix_part.values())
        total += self.surface_df.counts.nbytes
        if self._order is not None:
            total += self._order.nbytes
        if self._embeddings is not None:
            total += self._embeddings.nbytes
        return int(total)

    # ------------------------------------------------------------------ live updates

    def _paths(self) -> dict[Path, int]:
        if self._doc_of_path is None:
            self._doc_of_path = {s.path: i for i, s in enumerate(self.skills)}
        return self._doc_of_path

    def update(self, skill: Skill) -> None:
        """Add a skill, or replace the one with the same SKILL.md path."""
        old = self._paths().get(skill.path)
        n = len(self.skills)
        doc = n if old is None else old
        per_field, seen = self._analyse(skill)
        if old is None:
            self._register(skill)
            self.skills.append(skill)
        else:
            self.skills[old] = skill
            self._name_norm[old] = normalize(skill.name)
            self._required[old] = _required_tools(skill)
            self.triggers.remove(old)
            trig = skill.triggers
            if trig:
                self.triggers.add(old, trig.keywords, trig.verbs, trig.patterns)
            if self._embedder is not None:
                self._embed_texts[old] = self._embed_text(skill)
        remap = np.arange(n, dtype=np.int32)
        if old is not None:
            remap[old] = -1
        self.postings.rebuild(remap, {doc: per_field}, len(self.skills), len(self.vocab))
        self._priority = np.array([s.priority for s in self.skills], dtype=np.int64)
        self.surface_df.add(seen)
        self._invalidate()
        self._refresh_embeddings()

    def remove(self, path: Path) -> bool:
        """Drop the skill whose SKILL.md (or folder) is ``path``; False when unknown."""
        doc = self._paths().get(path)
        if doc is None:
            doc = next((i for i, s in enumerate(self.skills) if s.base_dir == path), None)
        if doc is None:
            return False
        n = len(self.skills)
        keep = [i for i in range(n) if i != doc]
        mapping = {old: new for new, old in enumerate(keep)}
        self.skills = [self.skills[i] for i in keep]
        self._name_norm = [self._name_norm[i] for i in keep]
        self._required = [self._required[i] for i in keep]
        if self._embed_texts:
            self._embed_texts = [self._embed_texts[i] for i in keep]
        self._doc_of_path = None
        self.triggers.remap(mapping)
        remap = np.full(n, -1, dtype=np.int32)
        remap[keep] = np.arange(len(keep), dtype=np.int32)
        self.postings.rebuild(remap, {}, len(keep), len(self.vocab))
        self._priority = np.array([s.priority for s in self.skills], dtype=np.int64)
        self._invalidate()
        self._refresh_embeddings()
        return True

    def _refresh_embeddings(self) -> None:
        if self._embedder is None:
            return
        from skilldeck.core.search.semantic import EmbeddingCache, SemanticUnavailable

        try:
            cache = EmbeddingCache(self._embedder.model_id)
            self._embeddings = cache.embed(self._embedder, self._embed_texts)
            cache.save()
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc))

    # ------------------------------------------------------------------ query terms

    def _pool(self, word: str) -> list[str]:
        key = f"\0pool{word[0]}{len(word)}"
        cached = self._correction_cache.get(key)
        if cached is not None:
            return [w for w, _ in cached]
        pool: list[str] = []
        for size in range(len(word) - 2, len(word) + 3):
            pool.extend(self.surface_df.by_length.get((word[0], size), ()))
        self._correction_cache[key] = [(w, 0.0) for w in pool]
        return pool

    def corrections(self, word: str) -> list[tuple[str, float]]:
        """Vocabulary words within a typo of ``word``: (word, similarity 0-1), best first.

        Only words of similar length (within two letters) and the same first letter are
        compared (``fuzz.ratio``, cutoff 80, 85 for four letters): typos rarely hit the
        first letter, and this keeps a correction under a millisecond at 100k skills. The
        answer is memoised per word, so a query typed one key at a time pays once a word.
        """
        cached = self._correction_cache.get(word)
        if cached is not None:
            return cached
        out: list[tuple[str, float]] = []
        if word.isalpha() and len(word) >= 4:
            cutoff = 85.0 if len(word) <= 4 else 80.0
            pool = self._pool(word)
            found = process.extract(word, pool, scorer=fuzz.ratio, limit=8, score_cutoff=cutoff)
            if found:
                best = found[0][1]
                close = [(w, float(sc)) for w, sc, _ in found if sc >= best - 3]
                close.sort(key=lambda x: (-x[1], -self.surface_df.get(x[0], 0), x[0]))
                out = [(w, sc / 100.0) for w, sc in close[:FUZZY_LIMIT]]
        if len(self._correction_cache) > 50_000:
            self._correction_cache.clear()
        self._correction_cache[word] = out
        return out

    def completions(self, prefix: str) -> list[str]:
        """The most common vocabulary words starting with ``prefix`` (not itself)."""
        key = f"\0prefix{prefix}"
        cached = self._correction_cache.get(key)
        if cached is not None:
            return [w for w, _ in cached]
        surface = self.surface_df
        lo, hi = surface.prefix_range(prefix)
        if hi - lo > PREFIX_EXPANSIONS:
            counts = surface.counts[lo:hi]
            top = np.argpartition(-counts, PREFIX_EXPANSIONS - 1)[:PREFIX_EXPANSIONS]
            top = top[np.lexsort((top, -counts[top]))]
            found = [surface.words[lo + int(i)] for i in top]
        else:
            found = surface.words[lo:hi]
        found = [w for w in found if w != prefix]
        self._correction_cache[key] = [(w, 0.0) for w in found]
        return found

    def query_terms(self, query: str) -> tuple[dict[int, float], dict[int, str], int]:
        """Query term ids with weights, what each came from, and the unknown-word count.

        Exact words weigh 1; the last word, while it is being typed (no trailing space)
        and is not a known word, also stands for its completions; unknown words are
        replaced by their typo corrections weighted by similarity.
        """
        parsed = self._parse(query)
        return parsed.terms, parsed.labels, parsed.unknown

    def _parse(self, query: str) -> _Query:
        all_words = words(query)
        typing = bool(query) and not query[-1].isspace()
        parsed = _Query({}, {}, 0, {}, {})
        vocab = self.vocab
        surface = self.surface_df

        def add(word: str, weight: float, label: str, part: dict[int, float]) -> bool:
            tid = vocab.get(stem(word))
            if tid is None:
                return False
            if weight > parsed.terms.get(tid, 0.0):
                parsed.terms[tid] = weight
                parsed.labels[tid] = label
            if weight > part.get(tid, 0.0):
                part[tid] = weight
            return True

        for i, word in enumerate(all_words):
            if word in STOPWORDS:
                continue
            last = typing and i == len(all_words) - 1
            part = parsed.tail if last else parsed.fixed
            exact = add(word, 1.0, word, part)
            if last and len(word) >= MIN_PREFIX and word not in surface:
                expansions = self.completions(word)
                for other in expansions:
                    add(other, PREFIX_WEIGHT, f"{word}…{other[len(word) :]}", part)
                if expansions:
                    continue
            if not exact:
                fixes = self.corrections(word)
                for other, similarity in fixes:
                    add(other, similarity * similarity, f"{word}→{other}", part)
                if not fixes:
                    parsed.unknown += 1
        return parsed

    def _lexical(self, parsed: _Query, semantic: bool = False) -> NDArray[np.float64]:
        """Weighted BM25 of every document: the settled words' (cached) plus the last one's.

        With ``semantic`` the fields are weighted by :attr:`semantic_field_weights` (when
        that weighting is built). The settled part is kept, keyed by the weighting, for the
        next keystrokes, which usually only change the word being typed; it is always
        computed the same way, so a cached and a fresh answer are identical.
        """
        weighting = self._weighting
        alt = semantic and self.postings.alt_contrib is not None
        fixed = tuple(sorted(parsed.fixed.items()))
        key = (weighting if alt else 0, fixed)
        base = self._base_cache.get(key)
        if base is None:
            base = np.zeros(len(self.skills), dtype=np.float64)
            for tid, weight in fixed:
                self.postings.add_scores(base, tid, weight, alt=alt)
            self._base_cache[key] = base
            while len(self._base_cache) > BASE_CACHE:
                self._base_cache.popitem(last=False)
        else:
            self._base_cache.move_to_end(key)
        lex = base.copy()
        for tid, weight in sorted(parsed.tail.items()):
            extra = weight - parsed.fixed.get(tid, 0.0)
            if extra > 0:
                self.postings.add_scores(lex, tid, extra, alt=alt)
        return lex

    # ------------------------------------------------------------------ querying

    def _name_prefix(
        self, query: str, prefix: str, limit: int, threshold: float, started: float
    ) -> SearchResponse:
        """Rank a one- or two-character query (the first keystrokes) by skill name.

        Too short for word statistics to mean anything: names starting with it come
        first, then names with a hyphenated part starting with it, each by name. Never
        confident, so agents are not sent anywhere on so little.
        """
        order = self._ensure_names()
        assert self._prefix_first is not None
        lo, hi = self._prefix_first.get(prefix, (0, 0))
        parts = self._prefix_part.get(prefix, _NO_RANKS)
        later = parts[(parts < lo) | (parts >= hi)]
        total = (hi - lo) + len(later)
        ranked = [(1.0, int(order[r])) for r in range(lo, min(hi, lo + limit))]
        ranked += [(0.5, int(order[r])) for r in later[: max(0, limit - len(ranked))]]
        results = [
            SearchResult(self.skills[doc], score, False, {"name_prefix": score}, {"name": [prefix]})
            for score, doc in ranked
        ]
        return SearchResponse(query, results, False, False, _ms(started), total, threshold)

    def _mentioned(self, query: str) -> set[int]:
        names = mentioned_names(query)
        if not names:
            return set()
        order = self._ensure_names()
        skills = self.skills
        found: set[int] = set()
        for name in names:
            i = bisect.bisect_left(order, name, key=lambda d: skills[d].name.lower())
            while i < len(order) and skills[order[i]].name.lower() == name:
                found.add(int(order[i]))
                i += 1
        return found

    def search(
        self,
        query: str,
        *,
        limit: int = HUMAN_LIMIT,
        explain: bool = False,
        available_tools: set[str] | None = None,
        semantic: bool | None = None,
    ) -> SearchResponse:
        """Rank the skills for ``query``.

        Args:
            query: Free text, a few keywords, or a partial query being typed.
            limit: Most results returned.
            explain: Also give per-field BM25 scores in each result's signals.
            available_tools: When given, skills whose required tools are all available
                win ties against those missing some.
            semantic: False to skip the embedding signal for this query (typing).
        """
        started = time.perf_counter()
        threshold = float(self.settings.confidence_threshold)
        n = len(self.skills)
        if n == 0 or not query.strip():
            return SearchResponse(query, [], False, False, _ms(started), 0, threshold)
        short = query.strip().lower()
        if len(short) <= SHORT_QUERY and short.isalnum():
            by_name = self._name_prefix(query, short, limit, threshold, started)
            if by_name.results:
                return by_name
        parsed = self._parse(query)
        terms, labels = parsed.terms, parsed.labels
        postings = self.postings
        sem_all = self._semantic_signal(query) if semantic is not False else None
        lex = self._lexical(parsed, semantic=sem_all is not None)
        tids = np.fromiter(terms, dtype=np.int64, count=len(terms))
        tweights = np.fromiter(terms.values(), dtype=np.float64, count=len(terms))
        tidf = postings.term_idf[tids] if len(tids) else np.zeros(0)
        denom = float(tweights @ tidf) + parsed.unknown * 0.5 * float(np.log1p(n))
        top_lex = float(lex.max())
        mentioned = self._mentioned(query)
        fired = self.triggers.match(query)
        lex_docs = np.flatnonzero(lex > 0)
        if n <= NAME_ALL_LIMIT:
            cand = np.arange(n)
        else:
            cand = _top(lex_docs, lex[lex_docs], CANDIDATES)
            if sem_all is not None:
                cand = np.union1d(cand, _top(np.arange(n), sem_all, CANDIDATES))
        if fired or mentioned:
            cand = np.union1d(cand, np.fromiter(set(fired) | mentioned, dtype=np.int64))
        cand = cand.astype(np.int64)
        cand32 = cand.astype(np.int32)
        rel = lex[cand] / top_lex if top_lex > 0 else np.zeros(len(cand))
        masks = {tid: postings.masks_of(tid, cand32) for tid in terms}
        cov = np.zeros(len(cand), dtype=np.float64)
        if denom > 0:
            for mask, share in zip(masks.values(), tweights * tidf / denom, strict=True):
                if share:
                    cov += share * _CREDIT[mask]
        name_sig = self._name_signal(query, cand)
        signals = {"bm25": rel, "coverage": cov, "name": name_sig}
        if sem_all is not None:
            signals["semantic"] = sem_all[cand]
        weights = SEMANTIC_WEIGHTS if sem_all is not None else WEIGHTS
        total_w = sum(weights[k] for k in signals)
        final = np.zeros(len(cand), dtype=np.float64)
        for key_name, values in signals.items():
            final += (weights[key_name] / total_w) * values
        lex_cand = lex[cand]
        special = {*fired, *mentioned}
        position = {d: int(np.searchsorted(cand, d)) for d in special}
        for doc in fired:
            final[position[doc]] = max(final[position[doc]], TRIGGER_SCORE)
        for doc in mentioned:
            final[position[doc]] = 1.0
        extra = (lex_cand <= 0) & ((name_sig > 0) | (final > 0))
        total = len(lex_docs) + int(extra.sum())
        if sem_all is not None and n > NAME_ALL_LIMIT:
            total += int(((sem_all >= 0.5) & (lex <= 0)).sum()) - int(
                (extra & (sem_all[cand] >= 0.5)).sum()
            )
        keep = np.flatnonzero((lex_cand > 0) | (final > 0))
        pool_size = max(limit, 1) + 20
        if len(keep) > pool_size:
            keep = keep[np.argpartition(-final[keep], pool_size - 1)[:pool_size]]
        if special:
            keep = np.union1d(keep, np.fromiter(position.values(), dtype=np.int64))
        if not len(keep):
            return SearchResponse(query, [], False, False, _ms(started), total, threshold)
        docs = cand[keep]
        complete = self._complete(available_tools, docs)
        is_mentioned = np.isin(docs, np.fromiter(mentioned, dtype=np.int64))
        is_fired = np.isin(docs, np.fromiter(fired, dtype=np.int64))
        self._ensure_names()
        ranked = keep[
            np.lexsort(
                (
                    self._rank[docs],
                    ~complete,
                    -self._priority[docs],
                    -np.round(final[keep], 4),
                    ~is_fired,
                    ~is_mentioned,
                )
            )
        ]
        top = float(final[ranked[0]])
        clustered = int(np.count_nonzero(final[ranked] >= top - CLUSTER_GAP)) > 1
        clustered = clustered and int(cand[ranked[0]]) not in mentioned
        complete_of = dict(zip(docs.tolist(), complete.tolist(), strict=True))
        shown = ranked[:limit]
        found = _matched(masks, shown, labels)
        results = []
        for i, matched in zip(shown.tolist(), found, strict=True):
            doc = int(cand[i])
            score = float(final[i])
            sig = {k: float(v[i]) for k, v in signals.items()}
            if fired:
                sig["trigger"] = 1.0 if doc in fired else 0.0
            if mentioned:
                sig["mention"] = 1.0 if doc in mentioned else 0.0
            if available_tools is not None:
                sig["tools"] = 1.0 if complete_of[doc] else 0.0
            if explain:
                sig.update(self._explain_fields(doc, terms, sem_all is not None))
            if doc in fired:
                matched["triggers"] = fired[doc]
            if doc in mentioned:
                matched["mention"] = [self.skills[doc].name]
            results.append(SearchResult(self.skills[doc], score, score >= threshold, sig, matched))
        confident = results[0].confident
        return SearchResponse(query, results, confident, clustered, _ms(started), total, threshold)

    def _explain_fields(
        self, doc: int, terms: dict[int, float], semantic: bool
    ) -> dict[str, float]:
        """Exact float64 per-field BM25 of ``doc`` (``bm25.<field>``) and their sum weighted
        by the field weights in use (``bm25.raw``; the weights depend on ``semantic``)."""
        weights = self.active_field_weights(semantic)
        out: dict[str, float] = {}
        raw = 0.0
        for f, fname in enumerate(FIELDS):
            value = sum(self.postings.field_score(f, t, doc, w) for t, w in terms.items())
            out[f"bm25.{fname}"] = value
            raw += weights[fname] * value
        return {"bm25.raw": raw, **out}

    def _complete(self, available: set[str] | None, docs: NDArray[np.int64]) -> NDArray[np.bool_]:
        if available is None:
            return np.ones(len(docs), dtype=bool)
        lowered = {a.lower() for a in available}
        return np.array(
            [all(t.lower() in lowered for t in self._required[d]) for d in docs.tolist()],
            dtype=bool,
        )

    def _name_signal(self, query: str, cand: NDArray[np.int64]) -> NDArray[np.float64]:
        out = np.zeros(len(cand), dtype=np.float64)
        qnorm = normalize(query)
        if not qnorm or not len(cand):
            return out
        names = [self._name_norm[i] for i in cand.tolist()]
        # scores under the floor map to 0 anyway; the cutoff lets rapidfuzz stop early
        cutoff = NAME_FLOOR * 100.0
        scores = process.cdist(
            [qnorm], names, scorer=fuzz.token_set_ratio, dtype=np.float32, score_cutoff=cutoff
        )[0]
        if len(qnorm.split()) <= 4:
            partial = process.cdist(
                [qnorm], names, scorer=fuzz.partial_ratio, dtype=np.float32, score_cutoff=cutoff
            )[0]
            scores = np.maximum(scores, partial)
        out[:] = np.clip((scores / 100.0 - NAME_FLOOR) / (1.0 - NAME_FLOOR), 0.0, 1.0)
        return out

    def _semantic_signal(self, query: str) -> NDArray[np.float64] | None:
        if self._embeddings is None or self._embedder is None:
            return None
        from skilldeck.core.search.semantic import SemanticUnavailable

        try:
            vector = self._embedder.encode([query])[0]
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc))
            return None
        cos = (self._embeddings @ vector).astype(np.float64)
        scaled: NDArray[np.float64] = np.clip((cos - SEM_LOW) / (SEM_HIGH - SEM_LOW), 0.0, 1.0)
        return scaled


def _matched(
    masks: dict[int, NDArray[np.uint8]], shown: NDArray[np.intp], labels: dict[int, str]
) -> list[dict[str, list[str]]]:
    """Per shown candidate, field -> query terms found there (fields in :data:`FIELDS` order)."""
    found: list[dict[str, list[str]]] = [{} for _ in range(len(shown))]
    if masks and len(shown):
        tids = list(masks)
        bits = np.stack([m[shown] for m in masks.values()])
        for t, r in zip(*(a.tolist() for a in np.nonzero(bits)), strict=True):
            label = labels[tids[t]]
            for fname in _FIELDS_OF[bits[t, r]]:
                found[r].setdefault(fname, []).append(label)
    return [{f: d[f] for f in FIELDS if f in d} for d in found]


def _postings_arrays(
    tokens: _Tokens,
    raw_ids: list[array[int]],
    raw_counts: list[array[int]],
    per_doc: list[array[int]],
    n: int,
) -> tuple[NDArray[np.int32], list[FieldArrays], NDArray[np.int64]]:
    """Per field (term, doc, tf) postings, lengths and surface-word document frequencies.

    Each field's raw tokens (ids into ``tokens``, with counts, document after document)
    are expanded to their term ids and summed per (term, document), all vectorised.
    """
    ptr = np.frombuffer(tokens.ptr, dtype=np.int64)
    expand_len = np.diff(ptr)
    flat_terms = np.frombuffer(tokens.terms, dtype=np.int32)
    flat_surface = np.frombuffer(tokens.surface, dtype=np.int32)
    doc_len = np.zeros((len(FIELDS), n), dtype=np.int32)
    fields: list[FieldArrays] = []
    stride = np.int64(max(n, 1))
    surface_keys: list[NDArray[np.int64]] = []
    for f in range(len(FIELDS)):
        rid = np.frombuffer(raw_ids[f], dtype=np.int32)
        counts = np.frombuffer(raw_counts[f], dtype=np.int32)
        docs = np.repeat(np.arange(n, dtype=np.int64), np.frombuffer(per_doc[f], np.int32))
        lens = expand_len[rid]
        source = np.repeat(np.arange(len(rid)), lens)
        starts = np.cumsum(lens) - lens
        flat = ptr[rid][source] + (np.arange(len(source)) - np.repeat(starts, lens))
        del rid, lens, starts
        doc_of = docs[source]
        count_of = counts[source]
        del docs, counts, source
        pairs, tf = sum_by_key(flat_terms[flat].astype(np.int64) * stride + doc_of, count_of)
        doc_len[f] = np.bincount(doc_of, weights=count_of, minlength=n)[:n]
        fields.append(
            (
                (pairs // stride).astype(np.int32),
                (pairs % stride).astype(np.int32),
                tf.astype(np.int32),
            )
        )
        del pairs, tf, count_of
        surf = flat_surface[flat]
        has = surf >= 0
        surface_keys.append(sorted_unique(surf[has].astype(np.int64) * stride + doc_of[has]))
    surface_df = np.bincount(
        sorted_unique(np.concatenate(surface_keys)) // stride, minlength=len(tokens.surface_ids)
    )
    return doc_len, fields, surface_df


def _fresh_keys(mapping: dict[str, int]) -> dict[str, int]:
    """The same str -> id mapping (ids must be 0..n-1 in order) on new, packed objects."""
    if not mapping:
        return {}
    return dict(zip("\0".join(mapping).split("\0"), range(len(mapping)), strict=True))


def _top(docs: NDArray[np.int64], values: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """The ``k`` documents of ``docs`` with the highest ``values``."""
    if len(docs) <= k:
        return docs.astype(np.int64)
    return docs[np.argpartition(-values, k - 1)[:k]].astype(np.int64)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def agent_search(
    index: SearchIndex,
    query: str,
    limit: int = AGENT_LIMIT,
    settings: Settings | None = None,
    *,
    available_tools: set[str] | None = None,
) -> SearchResponse:
    """Agent-facing search: top ``limit`` (3), confidence judged, ``skill_selected`` emitted.

    When the best score is under ``settings.confidence_threshold`` the response's
    ``confident`` is False and its :attr:`SearchResponse.message` says "no confident
    match"; the candidates are still returned for the agent to weigh.
    """
    from skilldeck.core import telemetry

    response = index.search(query, limit=limit, available_tools=available_tools)
    if settings is not None and settings.confidence_threshold != response.threshold:
        threshold = float(settings.confidence_threshold)
        for result in response.results:
            result.confident = result.score >= threshold
        response.threshold = threshold
        response.confident = bool(response.results) and response.results[0].confident
    telemetry.emit(
        "skill_selected",
        query=query,
        confident=response.confident,
        clustered=response.clustered,
        selected=response.results[0].skill.name if response.confident else None,
        candidates=[
            {"name": r.skill.name, "path": str(r.skill.path), "score": round(r.score, 4)}
            for r in response.results
        ],
    )
    return response
