"""The search index: fielded BM25, fuzzy correction, name matching, triggers, embeddings.

Signals, each normalised to 0-1 per document:

``bm25``
    Weighted sum of per-field BM25Okapi scores (description strongest, then tags and
    name, then headings, then body), divided by the best document's score.
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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process

from skilldeck.core.config import Settings
from skilldeck.core.model import Skill
from skilldeck.core.search.bm25 import BM25Postings
from skilldeck.core.search.text import RAW_TOKEN, STOPWORDS, headings, normalize, stem, words
from skilldeck.core.search.triggers import TriggerTable, mentioned_names

FIELDS = ("name", "description", "tags", "headings", "body")
FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.0,
    "description": 3.0,
    "tags": 3.0,
    "headings": 0.5,
    "body": 1.6,
}
FIELD_CREDIT: dict[str, float] = {
    "name": 1.0,
    "description": 1.0,
    "tags": 1.0,
    "headings": 0.7,
    "body": 0.45,
}
WEIGHTS: dict[str, float] = {"bm25": 0.45, "coverage": 0.3, "name": 0.25}
SEMANTIC_WEIGHTS: dict[str, float] = {"bm25": 0.3, "coverage": 0.3, "name": 0.15, "semantic": 0.3}
BODY_BYTES = 8192
BODY_MIN_BYTES = 1024
BODY_BUDGET = 64 * 1024 * 1024
PREFIX_WEIGHT = 0.8
PREFIX_EXPANSIONS = 6
MIN_PREFIX = 3
NAME_CANDIDATES = 100
FUZZY_LIMIT = 2
CANDIDATES = 200
NAME_ALL_LIMIT = 500
CLUSTER_GAP = 0.05
TRIGGER_SCORE = 0.9
SEM_LOW, SEM_HIGH = 0.1, 0.6
NAME_FLOOR = 0.6
HUMAN_LIMIT = 20
AGENT_LIMIT = 3


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


def _field_texts(skill: Skill, body: str) -> dict[str, str]:
    tags = [*skill.tags, *skill.triggers.keywords, *skill.triggers.verbs]
    tools = [t.split("(", 1)[0] for t in (*skill.tool_names, *skill.allowed_tools)]
    return {
        "name": skill.name.replace("-", " ").replace("_", " "),
        "description": skill.description,
        "tags": " ".join(str(t) for t in (*tags, *tools)),
        "headings": "\n".join(headings(body)),
        "body": body,
    }


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


class SearchIndex:
    """Search over a fixed list of skills; see the module docstring for the ranking.

    Build with :meth:`build`; keep it current with :meth:`update` and :meth:`remove`.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.skills: list[Skill] = []
        self.vocab: dict[str, int] = {}
        self.fields: dict[str, BM25Postings] = {}
        self.surface_df: dict[str, int] = {}
        self._surface_sorted: list[str] = []
        self._surface_counts: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._by_length: dict[tuple[str, int], list[str]] = {}
        self._name_norm: list[str] = []
        self._names: dict[str, list[int]] = {}
        self._priority: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._required: list[tuple[str, ...]] = []
        self._doc_of_path: dict[Path, int] = {}
        self.triggers = TriggerTable()
        self.bodies = True
        self.body_bytes = BODY_BYTES
        self._correction_cache: dict[str, list[tuple[str, float]]] = {}
        self._pending_surface: set[str] = set()
        self._token_cache: dict[str, tuple[tuple[int, str], ...]] = {}
        self.semantic_error: str | None = None
        self._embedder: Any = None
        self._embeddings: NDArray[np.float32] | None = None
        self._embed_texts: list[str] = []

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill],
        *,
        bodies: bool = True,
        settings: Settings | None = None,
        semantic: bool | None = None,
    ) -> SearchIndex:
        """Index ``skills``.

        Args:
            skills: What to index (the caller decides: usually ``catalog.active()``).
            bodies: Also index headings and the first :data:`BODY_BYTES` of each body
                (reads files; off gives a metadata-only index).
            settings: Settings (confidence threshold, semantic on/off).
            semantic: Force the embedding signal on or off (default: ``settings.semantic``).
        """
        index = cls(settings)
        index.bodies = bodies
        index.body_bytes = body_bytes_for(len(skills))
        terms = {f: array("i") for f in FIELDS}
        tfs = {f: array("i") for f in FIELDS}
        counts = {f: array("i") for f in FIELDS}
        lengths = {f: array("i") for f in FIELDS}
        for skill in skills:
            per_field = index._analyse(skill)
            for name in FIELDS:
                freqs = per_field[name]
                terms[name].extend(freqs.keys())
                tfs[name].extend(freqs.values())
                counts[name].append(len(freqs))
                lengths[name].append(sum(freqs.values()))
            index._register(skill, len(index.skills))
            index.skills.append(skill)
        for name in FIELDS:
            index.fields[name] = BM25Postings.from_flat(
                np.frombuffer(terms[name], dtype=np.int32),
                np.frombuffer(tfs[name], dtype=np.int32),
                np.frombuffer(counts[name], dtype=np.int32),
                np.frombuffer(lengths[name], dtype=np.int32).copy(),
                len(index.vocab),
            )
            terms[name] = tfs[name] = array("i")
        del terms, tfs
        index._token_cache = {}
        index._priority = np.array([s.priority for s in index.skills], dtype=np.int64)
        index._rebuild_surface_lists()
        use_semantic = index.settings.semantic if semantic is None else semantic
        if use_semantic:
            index.enable_semantic()
        return index

    def _analyse(self, skill: Skill) -> dict[str, dict[int, int]]:
        body = _read_body(skill, self.body_bytes) if self.bodies else ""
        out: dict[str, dict[int, int]] = {}
        seen: set[str] = set()
        cache = self._token_cache
        for name, text in _field_texts(skill, body).items():
            counts: dict[int, int] = {}
            for raw, count in Counter(RAW_TOKEN.findall(text)).items():
                entry = cache.get(raw)
                if entry is None:
                    entry = cache[raw] = self._token_entry(raw)
                for tid, word in entry:
                    counts[tid] = counts.get(tid, 0) + count
                    if word:
                        seen.add(word)
            out[name] = counts
        for word in seen:
            self.surface_df[word] = self.surface_df.get(word, 0) + 1
        self._pending_surface = seen
        return out

    def _token_entry(self, raw: str) -> tuple[tuple[int, str], ...]:
        entry = []
        for word in words(raw):
            if word in STOPWORDS:
                continue
            term = stem(word)
            tid = self.vocab.get(term)
            if tid is None:
                tid = self.vocab[term] = len(self.vocab)
            surface = word if len(word) >= 2 and not word.isdigit() else ""
            entry.append((tid, surface))
        return tuple(entry)

    def _register(self, skill: Skill, doc: int) -> None:
        self._name_norm.append(normalize(skill.name))
        self._names.setdefault(skill.name.lower(), []).append(doc)
        self._required.append(_required_tools(skill))
        self._doc_of_path[skill.path] = doc
        trig = skill.triggers
        if trig:
            self.triggers.add(doc, trig.keywords, trig.verbs, trig.patterns)
        if self._embedder is not None:
            self._embed_texts.append(self._embed_text(skill))

    def _rebuild_surface_lists(self) -> None:
        self._surface_sorted = sorted(self.surface_df)
        self._surface_counts = np.array(
            [self.surface_df[w] for w in self._surface_sorted], dtype=np.int32
        )
        self._by_length = {}
        for word in self._surface_sorted:
            if word.isalpha() and len(word) >= 3:
                self._by_length.setdefault((word[0], len(word)), []).append(word)
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
            self._embeddings = cache.embed(embedder, texts)
            cache.save()
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc))
            return False
        self._embedder = embedder
        self._embed_texts = texts
        self.semantic_error = None
        return True

    def _semantic_fallback(self, reason: str) -> None:
        from skilldeck.core import telemetry

        self._embedder = None
        self._embeddings = None
        self.semantic_error = reason
        telemetry.emit("skill_embedding_fallback", reason=reason, skills=len(self.skills))

    @property
    def semantic(self) -> bool:
        """Whether the embedding signal is in use."""
        return self._embeddings is not None

    def __len__(self) -> int:
        return len(self.skills)

    def nbytes(self) -> int:
        """Approximate memory of the numeric arrays (postings, norms, embeddings)."""
        total = sum(f.nbytes() for f in self.fields.values())
        if self._embeddings is not None:
            total += self._embeddings.nbytes
        return total

    # ------------------------------------------------------------------ live updates

    def update(self, skill: Skill) -> None:
        """Add a skill, or replace the one with the same SKILL.md path."""
        old = self._doc_of_path.get(skill.path)
        n = len(self.skills)
        doc = n if old is None else old
        per_field = self._analyse(skill)
        self._token_cache = {}
        if old is None:
            self.skills.append(skill)
            self._register(skill, doc)
        else:
            previous = self.skills[old]
            self.skills[old] = skill
            self._name_norm[old] = normalize(skill.name)
            self._names[previous.name.lower()].remove(old)
            self._names.setdefault(skill.name.lower(), []).append(old)
            self._required[old] = _required_tools(skill)
            self.triggers.remove(old)
            trig = skill.triggers
            if trig:
                self.triggers.add(old, trig.keywords, trig.verbs, trig.patterns)
            if self._embedder is not None:
                self._embed_texts[old] = self._embed_text(skill)
        n_docs = len(self.skills)
        remap = np.arange(n, dtype=np.int32)
        if old is not None:
            remap[old] = -1
        for name in FIELDS:
            counts = per_field[name]
            self.fields[name].rebuild(
                remap, {doc: (counts, sum(counts.values()))}, n_docs, len(self.vocab)
            )
        self._priority = np.array([s.priority for s in self.skills], dtype=np.int64)
        for word in self._pending_surface:
            if self.surface_df.get(word) == 1:
                bisect.insort(self._surface_sorted, word)
                if word.isalpha() and len(word) >= 3:
                    bisect.insort(self._by_length.setdefault((word[0], len(word)), []), word)
        self._surface_counts = np.array(
            [self.surface_df[w] for w in self._surface_sorted], dtype=np.int32
        )
        self._correction_cache.clear()
        self._refresh_embeddings()

    def remove(self, path: Path) -> bool:
        """Drop the skill whose SKILL.md (or folder) is ``path``; False when unknown."""
        doc = self._doc_of_path.get(path)
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
        self._names = {}
        self._doc_of_path = {}
        for i, skill in enumerate(self.skills):
            self._names.setdefault(skill.name.lower(), []).append(i)
            self._doc_of_path[skill.path] = i
        self.triggers.remap(mapping)
        remap = np.full(n, -1, dtype=np.int32)
        remap[keep] = np.arange(len(keep), dtype=np.int32)
        for postings in self.fields.values():
            postings.rebuild(remap, {}, len(keep), len(self.vocab))
        self._priority = np.array([s.priority for s in self.skills], dtype=np.int64)
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

    # ------------------------------------------------------------------ querying

    def _pool(self, word: str) -> list[str]:
        key = f"\0pool{word[0]}{len(word)}"
        cached = self._correction_cache.get(key)
        if cached is not None:
            return [w for w, _ in cached]
        pool: list[str] = []
        for size in range(len(word) - 2, len(word) + 3):
            pool.extend(self._by_length.get((word[0], size), ()))
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
        lo = bisect.bisect_left(self._surface_sorted, prefix)
        hi = bisect.bisect_left(self._surface_sorted, prefix + "\uffff", lo)
        if hi - lo > PREFIX_EXPANSIONS:
            counts = self._surface_counts[lo:hi]
            top = np.argpartition(-counts, PREFIX_EXPANSIONS - 1)[:PREFIX_EXPANSIONS]
            top = top[np.lexsort((top, -counts[top]))]
            found = [self._surface_sorted[lo + int(i)] for i in top]
        else:
            found = self._surface_sorted[lo:hi]
        found = [w for w in found if w != prefix]
        self._correction_cache[key] = [(w, 0.0) for w in found]
        return found

    def query_terms(self, query: str) -> tuple[dict[int, float], dict[int, str], int]:
        """Query term ids with weights, what each came from, and the unknown-word count.

        Exact words weigh 1; the last word, while it is being typed (no trailing space)
        and is not a known word, also stands for its completions; unknown words are
        replaced by their typo corrections weighted by similarity.
        """
        all_words = words(query)
        typing = bool(query) and not query[-1].isspace()
        terms: dict[int, float] = {}
        labels: dict[int, str] = {}
        unknown = 0

        def add(word: str, weight: float, label: str) -> bool:
            tid = self.vocab.get(stem(word))
            if tid is None:
                return False
            if weight > terms.get(tid, 0.0):
                terms[tid] = weight
                labels[tid] = label
            return True

        for i, word in enumerate(all_words):
            if word in STOPWORDS:
                continue
            last = typing and i == len(all_words) - 1
            exact = add(word, 1.0, word)
            if last and len(word) >= MIN_PREFIX and word not in self.surface_df:
                expansions = self.completions(word)
                for other in expansions:
                    add(other, PREFIX_WEIGHT, f"{word}…{other[len(word) :]}")
                if expansions:
                    continue
            if not exact:
                fixes = self.corrections(word)
                for other, similarity in fixes:
                    add(other, similarity * similarity, f"{word}→{other}")
                if not fixes:
                    unknown += 1
        return terms, labels, unknown

    def _name_prefix(
        self, query: str, prefix: str, limit: int, threshold: float, started: float
    ) -> SearchResponse:
        """Rank a one- or two-character query (the first keystrokes) by skill name.

        Too short for word statistics to mean anything: names starting with it come
        first, then names with a hyphenated part starting with it, each by name. Never
        confident, so agents are not sent anywhere on so little.
        """
        ranked: list[tuple[int, str, int]] = []
        for doc, skill in enumerate(self.skills):
            name = skill.name.lower()
            if name.startswith(prefix):
                ranked.append((0, name, doc))
            elif any(part.startswith(prefix) for part in name.split("-")[1:]):
                ranked.append((1, name, doc))
        ranked.sort()
        results = [
            SearchResult(
                self.skills[doc],
                1.0 if tier == 0 else 0.5,
                False,
                {"name_prefix": 1.0 if tier == 0 else 0.5},
                {"name": [prefix]},
            )
            for tier, _name, doc in ranked[:limit]
        ]
        return SearchResponse(query, results, False, False, _ms(started), len(ranked), threshold)

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
        terms, labels, unknown = self.query_terms(query)
        lex = np.zeros(n, dtype=np.float64)
        per_field: dict[str, NDArray[np.float64]] = {}
        if explain:
            per_field = {f: np.zeros(n, dtype=np.float64) for f in FIELDS}
        idf_of: dict[int, float] = {}
        for tid, weight in terms.items():
            idf = 0.0
            for fname in FIELDS:
                postings = self.fields[fname]
                target = per_field[fname] if explain else lex
                scale = weight if explain else weight * FIELD_WEIGHTS[fname]
                if len(postings.add_scores(target, tid, scale)):
                    idf = max(idf, float(postings.rank_idf[tid]))
            idf_of[tid] = idf
        if explain:
            for fname in FIELDS:
                lex += FIELD_WEIGHTS[fname] * per_field[fname]
        denom = sum(terms[t] * idf_of[t] for t in terms)
        denom += unknown * 0.5 * float(np.log1p(n))
        top_lex = float(lex.max())
        sem_all = self._semantic_signal(query) if semantic is not False else None
        mentioned = {d for name in mentioned_names(query) for d in self._names.get(name, ())}
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
        rel = lex[cand] / top_lex if top_lex > 0 else np.zeros(len(cand))
        presence = self._presence(cand, terms)
        cov = np.zeros(len(cand), dtype=np.float64)
        if denom > 0:
            for tid, best in presence.best.items():
                cov += (terms[tid] * idf_of[tid] / denom) * best
        name_sig = np.zeros(len(cand), dtype=np.float64)
        if len(cand) <= NAME_ALL_LIMIT:
            name_sig = self._name_signal(query, cand)
        else:
            best_lex = _top(np.arange(len(cand)), rel, NAME_CANDIDATES)
            name_sig[best_lex] = self._name_signal(query, cand[best_lex])
        signals = {"bm25": rel, "coverage": cov, "name": name_sig}
        if sem_all is not None:
            signals["semantic"] = sem_all[cand]
        weights = SEMANTIC_WEIGHTS if sem_all is not None else WEIGHTS
        total_w = sum(weights[k] for k in signals)
        final = np.zeros(len(cand), dtype=np.float64)
        for key_name, values in signals.items():
            final += (weights[key_name] / total_w) * values
        position = {int(d): i for i, d in enumerate(cand)}
        for doc in fired:
            final[position[doc]] = max(final[position[doc]], TRIGGER_SCORE)
        for doc in mentioned:
            final[position[doc]] = 1.0
        extra = (lex[cand] <= 0) & ((name_sig > 0) | (final > 0))
        total = len(lex_docs) + int(extra.sum())
        if sem_all is not None and n > NAME_ALL_LIMIT:
            total += int(((sem_all >= 0.5) & (lex <= 0)).sum()) - int(
                (extra & (sem_all[cand] >= 0.5)).sum()
            )
        keep = np.flatnonzero((lex[cand] > 0) | (final > 0))
        pool_size = max(limit, 1) + 20
        if len(keep) > pool_size:
            keep = keep[np.argpartition(-final[keep], pool_size - 1)[:pool_size]]
        pool = {int(i) for i in keep} | {position[d] for d in (*fired, *mentioned)}
        complete = self._complete(available_tools)

        def key(i: int) -> tuple[Any, ...]:
            doc = int(cand[i])
            skill = self.skills[doc]
            return (
                doc not in mentioned,
                doc not in fired,
                -round(float(final[i]), 4),
                -int(self._priority[doc]),
                not complete[doc],
                skill.name.lower(),
                str(skill.path),
            )

        ranked = sorted(pool, key=key)
        if not ranked:
            return SearchResponse(query, [], False, False, _ms(started), total, threshold)
        top = float(final[ranked[0]])
        close = [i for i in ranked if float(final[i]) >= top - CLUSTER_GAP]
        clustered = len(close) > 1 and int(cand[ranked[0]]) not in mentioned
        results = []
        for i in ranked[:limit]:
            doc = int(cand[i])
            score = float(final[i])
            sig = {k: float(v[i]) for k, v in signals.items()}
            if fired:
                sig["trigger"] = 1.0 if doc in fired else 0.0
            if mentioned:
                sig["mention"] = 1.0 if doc in mentioned else 0.0
            if available_tools is not None:
                sig["tools"] = 1.0 if complete[doc] else 0.0
            if explain:
                sig["bm25.raw"] = float(lex[doc])
                for fname in FIELDS:
                    sig[f"bm25.{fname}"] = float(per_field[fname][doc])
            matched = presence.matched(i, labels)
            if doc in fired:
                matched["triggers"] = fired[doc]
            if doc in mentioned:
                matched["mention"] = [self.skills[doc].name]
            results.append(SearchResult(self.skills[doc], score, score >= threshold, sig, matched))
        confident = results[0].confident
        return SearchResponse(query, results, confident, clustered, _ms(started), total, threshold)

    def _presence(self, cand: NDArray[np.int64], terms: dict[int, float]) -> _Presence:
        """Which candidates hold which query term in which field (vectorised per term)."""
        presence = _Presence()
        wanted = cand.astype(np.int32)
        for tid in terms:
            best = np.zeros(len(cand), dtype=np.float64)
            for fname in FIELDS:
                postings = self.fields[fname]
                if tid >= postings.vocab_size:
                    continue
                start, end = int(postings.indptr[tid]), int(postings.indptr[tid + 1])
                if start == end:
                    continue
                ids = postings.doc_ids[start:end]
                pos = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
                hit = ids[pos] == wanted
                if hit.any():
                    np.maximum(best, np.where(hit, FIELD_CREDIT[fname], 0.0), out=best)
                    presence.hits.append((tid, fname, hit))
            presence.best[tid] = best
        return presence

    def _complete(self, available: set[str] | None) -> list[bool]:
        if available is None:
            return [True] * len(self.skills)
        lowered = {a.lower() for a in available}
        return [all(t.lower() in lowered for t in req) for req in self._required]

    def _name_signal(self, query: str, cand: NDArray[np.int64]) -> NDArray[np.float64]:
        out = np.zeros(len(cand), dtype=np.float64)
        qnorm = normalize(query)
        if not qnorm or not len(cand):
            return out
        names = [self._name_norm[i] for i in cand]
        scores = process.cdist([qnorm], names, scorer=fuzz.token_set_ratio, dtype=np.float32)[0]
        if len(qnorm.split()) <= 4:
            partial = process.cdist([qnorm], names, scorer=fuzz.partial_ratio, dtype=np.float32)[0]
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


@dataclass(slots=True)
class _Presence:
    """Query-term hits on the candidate documents."""

    best: dict[int, NDArray[np.float64]] = field(default_factory=dict)
    hits: list[tuple[int, str, NDArray[np.bool_]]] = field(default_factory=list)

    def matched(self, i: int, labels: dict[int, str]) -> dict[str, list[str]]:
        """Field -> query terms found there, for candidate ``i``."""
        found: dict[str, list[str]] = {}
        for tid, where, hit in self.hits:
            if hit[i]:
                found.setdefault(where, []).append(labels[tid])
        return {f: found[f] for f in FIELDS if f in found}


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
