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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.postings import FieldPostings

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.search.semantic import Embedder
    from skilldeck.core.store import LocalStore
    from skilldeck.core.telemetry import Telemetry

SEM_LOW, SEM_HIGH = 0.1, 0.6
"""Cosine similarities mapped to 0 and 1 by the semantic signal."""
EMBED_TEXT = "name-description-1"
"""Names the recipe of :meth:`EmbeddingSignal._embed_text`: change it with the recipe, so
stored vectors of the old text are not used."""
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

    def enable_semantic(self) -> bool:
        """Load the embedding model and find every skill's vector (stored, else embedded).

        Returns:
            True when the semantic signal is on; on failure the index stays lexical, the
            reason is kept in :attr:`semantic_error` and a ``skill_embedding_fallback``
            telemetry event is emitted.
        """
        from skilldeck.core.search.semantic import SemanticUnavailable, load_embedder

        try:
            embedder = load_embedder(self.settings.semantic_model_path)
            keys = self.vector_keys()
            embeddings = self._vectors(embedder, keys)
        except SemanticUnavailable as exc:
            self._semantic_fallback(str(exc), exc.reason)
            return False
        # the second BM25 weighting is ready before any query can take the semantic path
        self.postings.set_alt_weights(self._weight_vector(self.semantic_field_weights))
        self._weighting += 1
        self._embeddings, self._vector_keys = embeddings, keys
        self._embedder = embedder
        self.semantic_error = self.semantic_reason = None
        return True

    def _vectors(self, embedder: Embedder, keys: list[str]) -> NDArray[np.float32]:
        """One row per document: kept, stored or cached rows, the rest embedded (and kept)."""
        from skilldeck.core.search import vectors

        have: dict[str, NDArray[np.float32]] = {}
        if self._embeddings is not None and self._vector_keys is not None:
            have = dict(zip(self._vector_keys, self._embeddings, strict=True))
        missing = [k for k in dict.fromkeys(keys) if k not in have]
        store = self.vector_store
        if missing and store is not None:
            have.update(vectors.load(store, embedder.model_id, missing, embedder.dim))
        elif missing:
            have.update(_remembered(embedder.model_id, missing))
        todo = {k: doc for doc, k in enumerate(keys) if k not in have}
        if todo:
            texts = [self._embed_text(self.skills[doc]) for doc in todo.values()]
            fresh = dict(zip(todo, embedder.encode(texts), strict=True))
            self.embedded += len(fresh)
            have.update(fresh)
            if store is not None:
                vectors.save(store, embedder.model_id, fresh)
            else:
                _remember(embedder.model_id, fresh)
        if not keys:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32, copy=False)

    def _semantic_fallback(self, message: str, reason: str) -> None:
        from skilldeck.core.telemetry import Telemetry

        self._embedder = None
        self._embeddings = None
        self._vector_keys = None
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
        scaled: NDArray[np.float64] = np.clip((cos - SEM_LOW) / (SEM_HIGH - SEM_LOW), 0.0, 1.0)
        return scaled


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
