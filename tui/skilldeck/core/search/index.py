"""The search index: fielded BM25, fuzzy correction, name matching, triggers, embeddings.

Signals, each normalised to 0-1 per document:

``bm25``
    Weighted sum of per-field BM25Okapi scores (:data:`FIELD_WEIGHTS`: description 3,
    tags 2.5, name 1.5, headings 0.75, body 0.5; with embeddings on,
    :data:`SEMANTIC_FIELD_WEIGHTS`, which give headings and body more say), divided by what
    the query could score (:func:`~skilldeck.core.search.ranking.query_ceiling`: per
    query word, the best any skill gets for it), so a skill that matched only common words
    gets their small share. The weighted sums are precomputed per (term, skill) pair
    (:class:`~skilldeck.core.search.postings.FieldPostings`; the second weighting only
    while embeddings are on), so a query term costs one gather; the settled words' scores
    are kept, per weighting, while the last word is being typed.
``coverage``
    idf-weighted share of the query terms the skill contains, with credit by field; an
    absolute measure, so a strong relative BM25 on a weak match does not look confident.
    A term's idf is its largest over the fields. Weighing it by its rarity in the whole
    catalog instead (skills holding it in any field) was measured and not kept: by 5-fold
    cross-validation it helped the corpus queries but lost 3 of 5 MetaTool folds (on the
    1,000 MetaTool requests, hybrid: 1 fixed, the chess request, and 5 broken, e.g. "compare
    reviews for different games", where the common word was the one that mattered).
``name``
    rapidfuzz ``token_set_ratio`` (and ``partial_ratio`` for short queries) between the
    query and the skill's name only, computed for the best lexical candidates.
``semantic``
    Cosine similarity of sentence embeddings, rescaled (optional extra).
``examples``
    With embeddings, the best cosine of the query to one of the skill's example requests
    (its ``examples`` frontmatter), rescaled; a skill without examples counts its
    ``semantic`` signal. Lexically the requests are the ``examples`` field of the BM25
    index (weighted like the description) and count for coverage like it.

The fused score is their weighted mean (weights in :data:`WEIGHTS`, or
:data:`SEMANTIC_WEIGHTS` when embeddings are on; both chosen on the train split of the
corpus and MetaTool queries, see ``tests/eval/README.md``), shown on a calibrated scale
(:mod:`~skilldeck.core.search.calibration`, which also says when the top result is
``confident``). Explicit mentions and triggers are applied on top: they rank a skill
first.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.config import Settings
from skilldeck.core.limits import HUMAN_LIMIT
from skilldeck.core.model import Skill
from skilldeck.core.search import query as query_stage
from skilldeck.core.search import ranking
from skilldeck.core.search.analysis import (
    BODY_BYTES,
    FIELDS,
    ParsedQuery,
    SurfaceWords,
    body_bytes_for,
    field_texts,
    fresh_keys,
    index_arrays,
    read_body,
    required_tools,
)
from skilldeck.core.search.calibration import calibration_for
from skilldeck.core.search.embedding import EmbeddingSignal
from skilldeck.core.search.names import NameTables, name_prefix
from skilldeck.core.search.postings import FieldArrays, FieldPostings, FieldViews
from skilldeck.core.search.results import (
    SearchResponse,
)
from skilldeck.core.search.text import RAW_TOKEN, STOPWORDS, normalize, stem, words
from skilldeck.core.search.triggers import TriggerTable, mentioned_names

if TYPE_CHECKING:
    from skilldeck.core.store import LocalStore

__all__ = ["FIELDS", "body_bytes_for"]  # re-exported: the search tests read them from here

FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.5,
    "description": 3.0,
    "tags": 2.5,
    "headings": 0.75,
    "body": 0.5,
    "examples": 3.0,
}
"""Weight of each field's BM25 in the ``bm25`` signal: description > tags > name > headings
> body, as the search issue orders them (grid search on the dev set and the extra set);
``examples`` (the skill's example requests) weighs like the description, set before
measuring (1.5 and 5 did not win on most cross-validation folds)."""
SEMANTIC_FIELD_WEIGHTS: dict[str, float] = {
    "name": 1.5,
    "description": 3.0,
    "tags": 2.5,
    "headings": 1.45,
    "body": 1.2,
    "examples": 3.0,
}
"""The field weights used with embeddings on, in the same order. The embedding reads only
name and description; next to it, headings and body weighted more did better (grid search
on the dev set and the extra set, overall and per-kind figures only)."""
WEIGHTS: dict[str, float] = {"bm25": 0.6, "coverage": 0.3, "name": 0.15}
"""Lexical fusion (divided by their sum): chosen by grid search on the train split of the
corpus and MetaTool queries (``tests/eval/README.md``), best mean recall@1."""
SEMANTIC_WEIGHTS: dict[str, float] = {
    "semantic": 1.0,
    "coverage": 1.0,
    "bm25": 0.2,
    "name": 0.1,
    "examples": 0.3,
}
"""Fusion with embeddings, chosen the same way: the embedding and the absolute lexical
evidence (coverage) decide, relative BM25 and the name break near-ties. ``examples``
(only present when some skill has examples) was chosen by 5-fold cross-validation by
query with each fold's training requests as examples: 0.3 beat 0 on 4 of 5 MetaTool
folds and lost none (0.6 and 1.0 won 5 there but lost 2 and 5 corpus folds)."""
BASE_CACHE = 8
_EMPTY_FIELD: FieldArrays = (
    np.zeros(0, dtype=np.int32),
    np.zeros(0, dtype=np.int32),
    np.zeros(0, dtype=np.int32),
)


SHORT_QUERY = 2
"""Queries this short are matched against name prefixes only."""


class SearchIndex(EmbeddingSignal):
    """Search over a fixed list of skills; see the module docstring for the ranking.

    Build with :meth:`build`; keep it current with :meth:`update` and :meth:`remove`.

    Ranking reads only the per-document columns :attr:`names`, :attr:`doc_paths`,
    :attr:`needs`, :attr:`priority` and the trigger table, never :attr:`skills` (a
    one-shot search loads the skill objects of its results only: see
    :func:`~skilldeck.core.search.persist.load_saved`).
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.skills: Sequence[Skill] = []
        """The documents; results reference these objects."""
        self.names: list[str] = []
        """Each document's skill name."""
        self.doc_paths: list[str] = []
        """Each document's SKILL.md path, as text."""
        self.needs: list[tuple[str, ...]] = []
        """Each document's required tools (:func:`~.analysis.required_tools`)."""
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
        self._names_norm: dict[int, str] = {}
        self.priority: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._doc_of_path: dict[Path, int] | None = None
        self._names: NameTables | None = None
        self.triggers = TriggerTable()
        self.bodies = True
        self.drift = 0
        """Skills added, changed or dropped since the last full build (see :mod:`.persist`)."""
        self.body_bytes = BODY_BYTES
        self.correction_cache: dict[str, list[tuple[str, float]]] = {}
        self._base_cache: OrderedDict[
            tuple[int, tuple[tuple[int, float], ...]], NDArray[np.float64]
        ] = OrderedDict()
        self._weighting = 0
        self.semantic_error: str | None = None
        self._embedder: Any = None
        self._embeddings: NDArray[np.float32] | None = None

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
        body_bytes = index.body_bytes if bodies else None
        doc_len, fields, surface_df, surface_ids = index_arrays(skills, index.vocab, body_bytes)
        # long-lived Python objects are made after the loop, packed together, so that
        # the loop's garbage frees whole arenas (the index otherwise keeps ~1.5x its RSS)
        index.vocab = fresh_keys(index.vocab)
        index.skills = [index._register(skill) for skill in skills]
        index.postings = FieldPostings(fields, doc_len, len(index.vocab), index._weight_vector())
        del fields
        index.surface_df = SurfaceWords({w: int(surface_df[i]) for w, i in surface_ids.items()})
        del surface_ids
        index.priority = np.array([s.priority for s in index.skills], dtype=np.int64)
        use_semantic = index.settings.semantic if semantic is None else semantic
        if use_semantic:
            index.enable_semantic()
        return index

    def _analyse(self, skill: Skill) -> tuple[list[dict[int, int]], set[str]]:
        """One skill's term frequencies per field, and the surface words it uses."""
        body = read_body(skill, self.body_bytes) if self.bodies else ""
        out: list[dict[int, int]] = []
        seen: set[str] = set()
        for text in field_texts(skill, body):
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

    def attach(self, skills: Sequence[Skill]) -> None:
        """Take ``skills`` as the documents, in this order, rebuilding the tables made from
        their metadata only (names, required tools, triggers, priorities; no body is read).

        The postings must already describe these documents in this order (used when an
        index is loaded from the store).
        """
        self.names, self.doc_paths, self.needs = [], [], []
        self.triggers = TriggerTable()
        self._doc_of_path = None
        self.skills = [self._register(skill) for skill in skills]
        self.priority = np.array([s.priority for s in self.skills], dtype=np.int64)
        self._invalidate()

    def attach_columns(
        self,
        skills: Sequence[Skill],
        names: list[str],
        paths: list[str],
        needs: list[tuple[str, ...]],
        priority: NDArray[np.int64],
        triggers: TriggerTable,
    ) -> None:
        """Take ``skills`` as the documents with their columns given, not read from them
        (a saved index: ``skills`` may load its items on first access).

        The postings and every column must describe the same documents in this order.
        """
        self.skills = skills
        self.names, self.doc_paths, self.needs = names, paths, needs
        self.priority = priority
        self.triggers = triggers
        self._doc_of_path = None
        self._invalidate()

    def reindex(
        self, skills: Sequence[Skill], remap: NDArray[np.int32], fresh: Sequence[int]
    ) -> None:
        """Cover ``skills`` instead, in one postings rebuild: every old document is kept
        under its new id ``remap[old]`` (-1 drops it) and the skills at positions ``fresh``
        (new or changed) are analysed; only their bodies are read.

        Surface-word counts of dropped or replaced documents are not taken back (their
        words are not kept per document): completions and typo corrections may still
        offer such a word until the next full build, but a word whose stem no longer
        occurs anywhere is treated as unknown (see :func:`~.query.parse_query`).
        """
        new_docs: dict[int, list[dict[int, int]]] = {}
        for doc in fresh:
            new_docs[doc], seen = self._analyse(skills[doc])
            self.surface_df.add(seen)
        self.postings.rebuild(remap, new_docs, len(skills), len(self.vocab))
        self.attach(skills)
        self._refresh_embeddings()

    def save(self, store: LocalStore, key: str) -> bool:
        """Keep this index in ``store`` under ``key`` (see :mod:`.persist`); False when the
        store cannot be written (the index itself is unaffected)."""
        from skilldeck.core.search.persist import save

        return save(self, store, key)

    def _register(self, skill: Skill) -> Skill:
        """Add ``skill``'s columns and triggers as the next document; returns it."""
        doc = len(self.names)
        self.names.append(skill.name)
        self.doc_paths.append(str(skill.path))
        self.needs.append(required_tools(skill) if skill.tools else ())
        if self._doc_of_path is not None:
            self._doc_of_path[skill.path] = doc
        trig = skill.triggers
        if trig:
            self.triggers.add(doc, trig.keywords, trig.verbs, trig.patterns)
        return skill

    def normalized_names(self, docs: Sequence[int]) -> list[str]:
        """Normalised names of ``docs`` (for the name signal), memoised per document: a
        loaded index needs only its candidates' (normalising all costs 17 ms at 10k)."""
        cache = self._names_norm
        out: list[str] = []
        for doc in docs:
            name = cache.get(doc)
            if name is None:
                name = cache[doc] = normalize(self.names[doc])
            out.append(name)
        return out

    def _invalidate(self) -> None:
        self._names_norm.clear()
        self._names = None
        self._base_cache.clear()
        self.correction_cache.clear()

    @property
    def fields(self) -> FieldViews:
        """Field name -> that field's postings as :class:`BM25Postings` (built on access)."""
        return FieldViews(self.postings, FIELDS)

    def __len__(self) -> int:
        return len(self.skills)

    def nbytes(self) -> int:
        """Approximate memory of the numeric arrays (postings, norms, embeddings)."""
        total = self.postings.nbytes() + self.priority.nbytes + self.surface_df.counts.nbytes
        if self._names is not None:
            total += self._names.nbytes()
        if self._embeddings is not None:
            total += self._embeddings.nbytes
        if self._examples is not None:
            total += self._examples.rows.nbytes + self._examples.owners.nbytes
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
        skills = list(self.skills)
        if old is None:
            skills.append(self._register(skill))
        else:
            skills[old] = skill
            self.names[old], self.doc_paths[old] = skill.name, str(skill.path)
            self.needs[old] = required_tools(skill)
            self.triggers.remove(old)
            trig = skill.triggers
            if trig:
                self.triggers.add(old, trig.keywords, trig.verbs, trig.patterns)
        self.skills = skills
        remap = np.arange(n, dtype=np.int32)
        if old is not None:
            remap[old] = -1
        self.postings.rebuild(remap, {doc: per_field}, len(self.skills), len(self.vocab))
        self.drift += 1 if old is None else 2  # surface words are added, never taken back
        self.priority = np.array([s.priority for s in self.skills], dtype=np.int64)
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
        self.names = [self.names[i] for i in keep]
        self.doc_paths = [self.doc_paths[i] for i in keep]
        self.needs = [self.needs[i] for i in keep]
        self._doc_of_path = None
        self.triggers.remap(mapping)
        remap = np.full(n, -1, dtype=np.int32)
        remap[keep] = np.arange(len(keep), dtype=np.int32)
        self.postings.rebuild(remap, {}, len(keep), len(self.vocab))
        self.drift += 1
        self.priority = np.array([s.priority for s in self.skills], dtype=np.int64)
        self._invalidate()
        self._refresh_embeddings()
        return True

    def corrections(self, word: str) -> list[tuple[str, float]]:
        """Vocabulary words within a typo of ``word``: (word, similarity 0-1), best first
        (see :func:`skilldeck.core.search.query.corrections`)."""
        return query_stage.corrections(self, word)

    def completions(self, prefix: str) -> list[str]:
        """The most common vocabulary words starting with ``prefix`` (not itself)."""
        return query_stage.completions(self, prefix)

    def query_terms(self, query: str) -> tuple[dict[int, float], dict[int, str], int]:
        """Query term ids with weights, what each came from, and the unknown-word count.

        Exact words weigh 1; the last word, while it is being typed (no trailing space)
        and is not a known word, also stands for its completions; unknown words are
        replaced by their typo corrections weighted by similarity.
        """
        parsed = query_stage.parse_query(self, query)
        return parsed.terms, parsed.labels, parsed.unknown

    def lexical(self, parsed: ParsedQuery, semantic: bool = False) -> NDArray[np.float64]:
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

    def mentioned(self, query: str) -> set[int]:
        """Documents whose skill the query names explicitly (``$name``, "use the x skill")."""
        names = set(mentioned_names(query))
        if not names:
            return set()
        # a scan (2 ms at 100k) beats building the name order a one-shot search never uses
        return {doc for doc, name in enumerate(self.names) if name.lower() in names}

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
        if not self.skills or not query.strip():
            return SearchResponse(query, [], False, False, _ms(started), 0, threshold)
        short = query.strip().lower()
        if len(short) <= SHORT_QUERY and short.isalnum():
            if self._names is None:
                self._names = NameTables(self.names, self.doc_paths)
            by_name = name_prefix(self.skills, self._names, query, short, limit, threshold, started)
            if by_name.results:
                return by_name
        parsed = query_stage.parse_query(self, query)
        sem_all = self._semantic_signal(query) if semantic is not False else None
        sig = ranking.gather_signals(self, query, parsed, sem_all)
        weights = SEMANTIC_WEIGHTS if sig.sem_all is not None else WEIGHTS
        fused = ranking.fuse(self, sig, weights, limit, available_tools)
        if not len(fused.ranked):
            return SearchResponse(query, [], False, False, _ms(started), fused.total, threshold)
        results = ranking.explain(
            self,
            sig,
            fused,
            parsed,
            limit=limit,
            explain_fields=explain,
            available_tools=available_tools,
            threshold=threshold,
        )
        return SearchResponse(
            query,
            results,
            results[0].confident,
            fused.clustered,
            _ms(started),
            fused.total,
            threshold,
            fused.lead,
            calibration_for(sig.sem_all is not None).lead,
            fused.sure,
        )

    def explain_fields(self, doc: int, terms: dict[int, float], semantic: bool) -> dict[str, float]:
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


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
