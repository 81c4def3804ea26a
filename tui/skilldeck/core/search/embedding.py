"""The embedding signal of a :class:`~skilldeck.core.search.index.SearchIndex` (optional
extra ``skilldeck[semantic]``; see :mod:`skilldeck.core.search.semantic` for the model):
turning it on, keeping it current, and scoring a query with it.

Each skill's vector is looked up, in this order, among the index's own vectors (kept
across updates), in the local store (:mod:`.vectors`, when the index has one: see
:attr:`EmbeddingSignal.vector_store`) and in a small in-process cache (indexes without a
store); only the rest are embedded, and stored. A one-shot search over a saved index
(:func:`~skilldeck.core.search.persist.load_saved`) thus reads every vector and embeds
only its query: the keys come from the saved frontmatter hashes and names, and a skill
is loaded only when its vector is missing.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.analysis import FIELDS
from skilldeck.core.search.postings import FieldPostings

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.search.semantic import Embedder
    from skilldeck.core.store import LocalStore
    from skilldeck.core.telemetry import Telemetry

SEM_LOW, SEM_HIGH = 0.1, 0.6
"""Cosine similarities mapped to 0 and 1 by the semantic signal."""
TEXT_TOKENS = 44
"""Tokens of a skill's text (and of an example request) that are embedded, [CLS] and
[SEP] included; a query is not cut. ``name: description`` has 66 tokens on average in the
corpus, 43 once cut. Chosen by ``bench_crossval.py --examples --rankers hybrid`` (5 folds,
r@1 per fold and mean, same ranking; 48 was the cut before):

* corpus: 48 tokens .933 1.0 .955 .867 1.0 (.951), 44 the same;
* corpus with examples: .933 1.0 .864 .867 1.0 (.933), 44 .933 1.0 .909 .867 1.0 (.942);
* MetaTool: .634 .634 .581 .594 .583 (.605), 44 .628 .634 .575 .599 .587 (.605);
* MetaTool with examples: .733 .709 .742 .698 .674 (.711), 44 .738 .709 .737 .698 .679
  (.712).

No column loses on most folds (MetaTool: two worse, two better); MetaTool ``confident``
precision 0.916 -> 0.913. Not kept: 40 lost three of five MetaTool folds in both columns
(0.603 and 0.709); 32 took corpus r@1 to 0.919 (two folds worse) and the precision to
0.906. Embedding time follows the tokens (7% fewer padded tokens than at 48: 43.5 a text;
``bench_first_index.py``)."""
EMBED_TEXT = f"name-description-1-cut{TEXT_TOKENS}"
"""Names the recipe of :meth:`EmbeddingSignal._embed_text`: change it with the recipe, so
stored vectors of the old text are not used."""
EXAMPLES_FIELD = FIELDS.index("examples")
"""Row of the ``examples`` field in the postings' per-field lengths."""
EMBED_CHUNK = 256
"""Texts embedded, then stored, at a time: a build stopped half-way (the process killed,
the model failing) keeps what it embedded, and the next one embeds only the rest."""
Progress = Callable[[int, int], None]
"""Told ``(embedded so far, to embed)`` while vectors are embedded."""
MEMORY_ROWS = 20_000
"""Vectors kept in the in-process cache of indexes without a store (30 MB at 384 dims)."""

_MEMORY: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()


def hash_key(content_hash: str, name: str) -> str:
    """The vector key of a skill version: its frontmatter hash (which decides its
    description) and its name (the folder's when the frontmatter has none)."""
    return hashlib.sha256(f"{EMBED_TEXT}\0{content_hash}\0{name}".encode()).hexdigest()[:32]


def text_key(text: str) -> str:
    """The vector key of a skill without a content hash: its embedded text."""
    return hashlib.sha256(f"{EMBED_TEXT}\0text\0{text}".encode()).hexdigest()[:32]


class EmbeddingSignal:
    """Mixin of :class:`~skilldeck.core.search.index.SearchIndex`: the embedding signal."""

    skills: Sequence[Skill]
    names: list[str]
    settings: Settings
    postings: FieldPostings
    semantic_field_weights: dict[str, float]
    semantic_error: str | None
    _weighting: int
    _embedder: Any
    _embeddings: NDArray[np.float32] | None
    _examples: ExampleVectors | None = None
    vector_store: LocalStore | None = None
    """Where skill vectors are kept (set by :mod:`.persist`); None: not kept."""
    doc_hashes: list[str] | None = None
    """Each document's frontmatter hash, when the skills are not loaded (a saved index);
    dropped at the first change."""
    _vector_keys: list[str] | None = None
    embedded = 0
    """Texts embedded for this index's skills so far (tests and benchmarks read it)."""
    semantic_reason: str | None = None
    """The reason code of :attr:`semantic_error` (see
    :class:`~skilldeck.core.search.semantic.SemanticUnavailable`)."""
    telemetry: Telemetry | None = None
    """Where the ``skill_embedding_fallback`` event goes (the workspace sets its own);
    None: a writer configured by :attr:`settings`."""

    def _weight_vector(self, weights: Mapping[str, float] | None = None) -> list[float]:
        raise NotImplementedError

    @staticmethod
    def _embed_text(skill: Skill) -> str:
        name = skill.name.replace("-", " ")
        return f"{name}: {skill.description}"

    def vector_keys(self) -> list[str]:
        """Each document's vector key (:func:`hash_key`, or :func:`text_key` for a skill
        without a content hash, which is then loaded)."""
        hashes = self.doc_hashes if self.doc_hashes is not None else [""] * len(self.skills)
        if len(hashes) != len(self.skills):
            hashes = [""] * len(self.skills)
        keys: list[str] = []
        for doc, known in enumerate(hashes):
            if known:
                keys.append(hash_key(known, self.names[doc]))
                continue
            skill = self.skills[doc]
            if skill.content_hash:
                keys.append(hash_key(skill.content_hash, skill.name))
            else:
                keys.append(text_key(self._embed_text(skill)))
        return keys

    def enable_semantic(self, progress: Progress | None = None) -> bool:
        """Load the embedding model and find every skill's vector (stored, else embedded).

        Until it returns, the index answers lexically; the vectors are stored as they are
        embedded (:data:`EMBED_CHUNK` at a time), so a stopped build resumes.

        Args:
            progress: Told ``(embedded, to_embed)`` before each chunk and at the end (for
                the skills, then for example requests); not called when nothing is embedded.

        Returns:
            True when the semantic signal is on; on failure the index stays lexical, the
            reason is kept in :attr:`semantic_error` and a ``skill_embedding_fallback``
            telemetry event is emitted.
        """
        from skilldeck.core.search.semantic import SemanticUnavailable, load_embedder

        try:
            embedder = load_embedder(self.settings.semantic_model_path)
            keys = self.vector_keys()
            embeddings = self._vectors(embedder, keys, progress)
            examples = self._example_rows(embedder, progress)
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc), exc.reason)
            return False
        # the second BM25 weighting is ready before any query can take the semantic path
        self.postings.set_alt_weights(self._weight_vector(self.semantic_field_weights))
        self._weighting += 1
        self._embeddings, self._vector_keys = embeddings, keys
        self._examples = examples
        self._embedder = embedder
        self.semantic_error = self.semantic_reason = None
        return True

    def _vectors(
        self, embedder: Embedder, keys: list[str], progress: Progress | None = None
    ) -> NDArray[np.float32]:
        """One row per document: kept, stored or cached rows, the rest embedded (and kept)."""
        have: dict[str, NDArray[np.float32]] = {}
        if self._embeddings is not None and self._vector_keys is not None:
            have = dict(zip(self._vector_keys, self._embeddings, strict=True))
        doc_of = {k: doc for doc, k in enumerate(keys)}
        return self._rows(
            embedder, keys, have, lambda k: self._embed_text(self.skills[doc_of[k]]), progress
        )

    def _example_rows(
        self, embedder: Embedder, progress: Progress | None = None
    ) -> ExampleVectors | None:
        """The vectors of every skill's example requests (None: no skill has examples).

        Only skills whose ``examples`` field has words are looked at (a saved index loads
        just those); a request is embedded once per model and text, and kept like a
        skill's vector."""
        owners: list[int] = []
        keys: list[str] = []
        texts: dict[str, str] = {}
        for doc in np.flatnonzero(self.postings.doc_len[EXAMPLES_FIELD] > 0).tolist():
            for example in self.skills[doc].examples:
                key = text_key(f"example\0{example.request}")
                owners.append(doc)
                keys.append(key)
                texts[key] = example.request
        if not keys:
            return None
        kept = self._examples
        have = dict(zip(kept.keys, kept.rows, strict=True)) if kept is not None else {}
        rows = self._rows(embedder, keys, have, texts.__getitem__, progress)
        return ExampleVectors(np.array(owners, dtype=np.int64), rows, keys)

    def _rows(
        self,
        embedder: Embedder,
        keys: list[str],
        have: dict[str, NDArray[np.float32]],
        text_of: Callable[[str], str],
        progress: Progress | None = None,
    ) -> NDArray[np.float32]:
        """One row per key: in ``have``, stored or cached, else the embedding of
        ``text_of(key)`` (then stored or cached)."""
        from skilldeck.core.search import vectors

        missing = [k for k in dict.fromkeys(keys) if k not in have]
        store = self.vector_store
        if missing and store is not None:
            have.update(vectors.load(store, embedder.model_id, missing, embedder.dim))
        elif missing:
            have.update(_remembered(embedder.model_id, missing))
        todo = [k for k in dict.fromkeys(keys) if k not in have]
        for start in range(0, len(todo), EMBED_CHUNK):  # kept as it goes: a stopped build resumes
            if progress is not None:
                progress(start, len(todo))
            part = todo[start : start + EMBED_CHUNK]
            rows = embedder.encode([text_of(k) for k in part], TEXT_TOKENS)
            fresh = dict(zip(part, rows, strict=True))
            self.embedded += len(fresh)
            have.update(fresh)
            if store is not None:
                vectors.save(store, embedder.model_id, fresh)
            else:
                _remember(embedder.model_id, fresh)
        if todo and progress is not None:
            progress(len(todo), len(todo))
        if not keys:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32, copy=False)

    def _semantic_fallback(self, message: str, reason: str) -> None:
        from skilldeck.core.telemetry import Telemetry

        self._embedder = None
        self._embeddings = None
        self._vector_keys = None
        self._examples = None
        self.postings.set_alt_weights(None)
        self.semantic_error, self.semantic_reason = message, reason
        writer = self.telemetry or Telemetry.from_settings(self.settings)
        writer.emit("skill_embedding_fallback", reason=message, skills=len(self.skills))

    @property
    def semantic(self) -> bool:
        """Whether the embedding signal is in use."""
        return self._embeddings is not None

    def _refresh_embeddings(self) -> None:
        """After the documents changed: keys again (saved hashes no longer apply), vectors
        of new or changed skills found or embedded."""
        self.doc_hashes = None
        if self._embedder is None:
            return
        from skilldeck.core.search.semantic import SemanticUnavailable

        try:
            keys = self.vector_keys()
            self._embeddings = self._vectors(self._embedder, keys)
            self._vector_keys = keys
            self._examples = self._example_rows(self._embedder)
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc), exc.reason)

    # ------------------------------------------------------------------ query terms

    def _semantic_signal(self, query: str) -> NDArray[np.float64] | None:
        if self._embeddings is None or self._embedder is None:
            return None
        from skilldeck.core.search.semantic import SemanticUnavailable, blas_threads

        try:
            vector = self._embedder.query(query)
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc), exc.reason)
            return None
        with blas_threads():  # two threads: 0.3 ms at 10k, but 8-16 ms on a busy machine
            cos = (self._embeddings @ vector).astype(np.float64)
        return _scaled(cos)

    def _best_examples(self, vector: NDArray[np.float32], n: int) -> NDArray[np.float64] | None:
        """Per document, the best cosine of ``vector`` to one of its example requests
        (-1 without examples); None when no skill has examples."""
        examples = self._examples
        if examples is None:
            return None
        best = np.full(n, -1.0, dtype=np.float64)
        np.maximum.at(best, examples.owners, (examples.rows @ vector).astype(np.float64))
        return best

    def example_signal(self, query: str) -> NDArray[np.float64] | None:
        """The ``examples`` signal: per document, the best cosine of ``query`` to one of
        its example requests, scaled like the semantic signal (-1 for a document without
        examples: the ranking counts its description's cosine instead, so that examples
        given to some skills do not lower the others); None without embeddings or when
        no skill has examples. A signal of its own: taking the better of it and the
        description's cosine as the semantic signal did worse (5-fold cross-validation,
        docs/search.md)."""
        if self._examples is None or self._embedder is None:
            return None
        from skilldeck.core.search.semantic import SemanticUnavailable

        try:
            vector = self._embedder.query(query)
        except SemanticUnavailable:
            return None
        best = self._best_examples(vector, len(self.skills))
        if best is None:
            return None
        return np.where(best < -0.5, -1.0, _scaled(best))


def _scaled(cos: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = np.clip((cos - SEM_LOW) / (SEM_HIGH - SEM_LOW), 0.0, 1.0)
    return out


@dataclass(frozen=True, slots=True)
class ExampleVectors:
    """The embedded example requests of an index's skills.

    Attributes:
        owners: The document of each row.
        rows: One unit vector per example request.
        keys: Each row's vector key.
    """

    owners: NDArray[np.int64]
    rows: NDArray[np.float32]
    keys: list[str]


def _remembered(model: str, keys: list[str]) -> dict[str, NDArray[np.float32]]:
    found = {k: _MEMORY[(model, k)] for k in keys if (model, k) in _MEMORY}
    for key in found:
        _MEMORY.move_to_end((model, key))
    return found


def _remember(model: str, rows: Mapping[str, NDArray[np.float32]]) -> None:
    for key, row in rows.items():
        _MEMORY[(model, key)] = row
    while len(_MEMORY) > MEMORY_ROWS:
        _MEMORY.popitem(last=False)
