"""The embedding signal of a :class:`~skilldeck.core.search.index.SearchIndex` (optional
extra ``skilldeck[semantic]``; see :mod:`skilldeck.core.search.semantic` for the model and
its on-disk cache): turning it on, keeping it current, and scoring a query with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.postings import FieldPostings

SEM_LOW, SEM_HIGH = 0.1, 0.6
"""Cosine similarities mapped to 0 and 1 by the semantic signal."""


class EmbeddingSignal:
    """Mixin of :class:`~skilldeck.core.search.index.SearchIndex`: the embedding signal."""

    skills: Sequence[Skill]
    postings: FieldPostings
    semantic_field_weights: dict[str, float]
    semantic_error: str | None
    _weighting: int
    _embedder: Any
    _embeddings: NDArray[np.float32] | None
    _embed_texts: list[str]

    def _weight_vector(self, weights: Mapping[str, float] | None = None) -> list[float]:
        raise NotImplementedError

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
