"""The torch-free embedding engine (extra ``skilldeck[semantic]``): the numpy forward pass
against reference vectors made once with sentence-transformers, the tokenizer's limits,
model folders (bundled, Hugging Face cache layout, missing, damaged).

The reference (``tests/data/minilm_reference.npy`` and ``.json``): 22 texts (short, long
past 128 and 256 tokens, accents, CJK, emoji, blanks, code) encoded by
sentence-transformers 6.2 on torch 2.14 (CPU) from the same ``model.safetensors``, with
``normalize_embeddings=True``.

Tests that need the extra skip without it, unless ``SKILLDECK_REQUIRE_SEMANTIC=1`` (CI
installs the extra: there they must run).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import need_semantic_extra, write_skill
from skilldeck.core.search import semantic
from skilldeck.core.search.semantic import SemanticUnavailable, load_embedder

DATA = Path(__file__).resolve().parent.parent / "data"
REFERENCE = json.loads((DATA / "minilm_reference.json").read_text(encoding="utf-8"))
MIN_COSINE = 0.9999


@pytest.fixture
def bundled() -> Path:
    need_semantic_extra()
    folder = semantic.bundled_folder()
    assert folder is not None
    return folder


def test_forward_pass_matches_sentence_transformers(bundled: Path) -> None:
    reference = np.load(DATA / "minilm_reference.npy", allow_pickle=False)
    texts: list[str] = REFERENCE["texts"]
    assert reference.shape == (len(texts), semantic.DIM)
    vectors = load_embedder().encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * reference).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= MIN_COSINE, (texts[worst][:60], float(cosines[worst]))


def test_each_text_alone_gives_the_batch_vector(bundled: Path) -> None:
    """Padding to the longest text of a batch does not change a text's vector."""
    texts: list[str] = REFERENCE["texts"]
    embedder = load_embedder()
    together = embedder.encode(texts)
    alone = np.stack([embedder.encode([t])[0] for t in texts])
    assert (together * alone).sum(axis=1).min() >= 0.99999


def test_bundled_weights_are_all_minilm_l6_v2(bundled: Path) -> None:
    digest = hashlib.sha256((bundled / "model.safetensors").read_bytes()).hexdigest()
    assert digest == semantic.WEIGHTS_SHA256 == REFERENCE["safetensors_sha256"]


def test_tokenizer_truncates_at_256_not_128(bundled: Path) -> None:
    model = load_embedder().model
    counts = [len(ids) for ids in model.tokenize(REFERENCE["texts"])]
    expected = [min(n, 256) for n in REFERENCE["token_counts_untruncated"]]
    assert counts == expected
    assert any(128 < n < 256 for n in counts) and max(counts) == 256  # both limits tested
    assert min(counts) == 2  # [CLS] [SEP]: no padding to a fixed length either


def test_gelu_is_the_exact_erf_form() -> None:
    from skilldeck.core.search.minilm import GELU_CHUNK, _gelu

    x = np.linspace(-12.0, 12.0, GELU_CHUNK + 1001, dtype=np.float32)  # two chunks
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.tolist()])
    assert np.abs(_gelu(x) - exact).max() < 2e-6
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.abs(tanh_form - exact).max() > 1e-4  # the approximation would be caught


def test_hugging_face_cache_folder_is_accepted(bundled: Path, tmp_path: Path) -> None:
    """A sentence-transformers model in the HF cache layout gives the same id and vectors."""
    snapshot = tmp_path / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "c0"
    snapshot.mkdir(parents=True)
    for item in bundled.iterdir():
        (snapshot / item.name).symlink_to(item, target_is_directory=item.is_dir())
    cached = load_embedder(snapshot.parent.parent)
    default = load_embedder()
    assert cached is not default and cached.model_id == default.model_id
    assert cached.model_id.startswith("all-MiniLM-L6-v2@")
    texts = REFERENCE["texts"][:5]
    np.testing.assert_allclose(cached.encode(texts), default.encode(texts), atol=1e-6)


def test_model_path_setting_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.config import ENV_SEMANTIC_MODEL, load_settings

    config = tmp_path / "config.toml"
    config.write_text(f'semantic_model_path = "{tmp_path / "m"}"\n', encoding="utf-8")
    assert load_settings(config).semantic_model_path == tmp_path / "m"
    monkeypatch.setenv(ENV_SEMANTIC_MODEL, str(tmp_path / "env"))
    settings = load_settings(config)
    assert settings.semantic_model_path == tmp_path / "env"
    assert settings.sources["semantic_model_path"] == ENV_SEMANTIC_MODEL
    with pytest.raises(SemanticUnavailable, match=r"has no config\.json") as info:
        load_embedder()  # the variable names the folder
    assert info.value.reason == "model_missing"


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SemanticUnavailable) as info:
        load_embedder(tmp_path / "nowhere")
    assert str(info.value) == f"semantic model folder {tmp_path / 'nowhere'} has no config.json"


def _damaged(bundled: Path, folder: Path, weights: bytes) -> Path:
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(bundled / name, folder / name)
    (folder / "model.safetensors").write_bytes(weights)
    return folder


@pytest.mark.parametrize(
    "weights", [b"not a safetensors file", b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "]
)
def test_damaged_weights_are_a_clear_error(bundled: Path, tmp_path: Path, weights: bytes) -> None:
    folder = _damaged(bundled, tmp_path / "bad", weights)
    with pytest.raises(SemanticUnavailable, match="bad") as info:
        load_embedder(folder)
    assert info.value.reason in ("model_failed", "model_unsupported")


def test_unsupported_architecture_names_the_problem(bundled: Path, tmp_path: Path) -> None:
    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed: it would run this model")
    folder = _damaged(bundled, tmp_path / "roberta", (bundled / "model.safetensors").read_bytes())
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(SemanticUnavailable, match="BERT") as info:
        load_embedder(folder)
    assert info.value.reason == "model_unsupported"


def test_missing_extra_is_reported_as_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "bundled_folder", lambda: None)
    monkeypatch.setattr(semantic, "_engine_installed", lambda: False)
    with pytest.raises(SemanticUnavailable, match="not installed") as info:
        load_embedder()
    assert info.value.reason == semantic.NOT_INSTALLED


def test_an_extra_without_the_model_says_to_fetch_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extra installs the engine only: without fetched or packaged model files the
    reason is ``model_missing`` (a face warns) and the message names the command."""
    monkeypatch.setattr(semantic, "packaged_folder", lambda: None)
    monkeypatch.setattr(semantic, "_engine_installed", lambda: True)
    with pytest.raises(SemanticUnavailable, match="skilldeck model fetch") as info:
        load_embedder()
    assert info.value.reason == "model_missing" and not semantic.extra_installed()


def test_query_vectors_are_remembered(bundled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = load_embedder()
    batches: list[list[str]] = []
    real = type(embedder).encode

    def counted(self: Any, texts: list[str], cap: int | None = None) -> Any:
        batches.append(texts)
        return real(self, texts, cap)

    monkeypatch.setattr(type(embedder), "encode", counted)
    first = embedder.query("typing a query again")
    again = embedder.query("typing a query again")
    assert again is first and batches == [["typing a query again"]]
    np.testing.assert_allclose(first, embedder.encode(["typing a query again"])[0])


def test_other_models_run_through_sentence_transformers(
    bundled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model the numpy engine does not run goes to sentence-transformers (a stand-in
    here: the real one pulls torch), offline, with normalised rows."""
    import importlib.machinery
    import types

    made: list[tuple[str, dict[str, object]]] = []

    class FakeSentenceTransformer:
        def __init__(self, path: str, **kw: object) -> None:
            made.append((path, kw))

        def get_sentence_embedding_dimension(self) -> int:
            return 3

        def encode(self, texts: list[str], **kw: object) -> np.ndarray:
            assert kw["normalize_embeddings"] is True
            return np.tile(np.array([0.0, 0.6, 0.8], dtype=np.float32), (len(texts), 1))

    fake = types.ModuleType("sentence_transformers")
    fake.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    fake.SentenceTransformer = FakeSentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.delenv(variable, raising=False)  # restored after the test
    folder = tmp_path / "roberta-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    embedder = load_embedder(folder)
    assert made == [(str(folder), {"device": "cpu", "local_files_only": True})]
    assert embedder.model_id.startswith("roberta-model@") and embedder.model_id.endswith("+st")
    assert embedder.encode(["a", "b"]).shape == (2, 3) and embedder.dim == 3
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_a_cut_keeps_sep_last_and_the_vector_of_the_first_tokens(bundled: Path) -> None:
    """``cap`` cuts each text at that many tokens, [SEP] kept last: a long text embeds as
    its start does; a short one is untouched."""
    model = load_embedder().model
    long = " ".join(f"word{i}" for i in range(200))
    cut = model.tokenize([long], 16)[0]
    assert len(cut) == 16 and cut[0] == 101 and cut[-1] == 102
    start = model.tokenizer.decode(cut, skip_special_tokens=True)
    vectors = model.encode([long, start, "short text"], 16)
    assert float(vectors[0] @ vectors[1]) >= 0.99999
    alone = model.encode(["short text"])[0]
    assert float(vectors[2] @ alone) >= 0.99999 and float(vectors[0] @ vectors[1]) > float(
        model.encode([long])[0] @ vectors[1]
    )


def test_the_index_embeds_only_the_first_text_tokens(bundled: Path, tmp_path: Path) -> None:
    """Two skills whose ``name: description`` differ only past
    :data:`~skilldeck.core.search.embedding.TEXT_TOKENS` tokens get one vector."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.model import Source
    from skilldeck.core.search import SearchIndex
    from skilldeck.core.search.embedding import TEXT_TOKENS

    head = " ".join(["Convert scanned documents into searchable text files"] * 8)
    tails = ("Then email the result to the team.", "Then print a chart of the results.")
    paths = [
        write_skill(tmp_path, "pdf-ocr", f"{head}. {tail}", folder=f"copy-{i}")
        for i, tail in enumerate(tails)
    ]
    skills = [parse_skill_file(p, source=Source.EXPLICIT, root=tmp_path) for p in paths]
    tokens = load_embedder().model.tokenize([SearchIndex._embed_text(skills[0])])[0]
    assert len(tokens) > TEXT_TOKENS + 10  # the tails differ past the cut
    index = SearchIndex.build(skills, semantic=True)
    assert index.semantic and index._embeddings is not None
    np.testing.assert_allclose(index._embeddings[0], index._embeddings[1], atol=1e-6)


def test_batches_on_several_threads_give_the_one_thread_vectors(
    bundled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.search import minilm

    texts = [" ".join(["token"] * (1 + i % 37)) + f" {i}" for i in range(150)]
    model = load_embedder().model
    monkeypatch.setattr(minilm, "WORKERS", 1)
    one = model.encode(texts, 48)
    monkeypatch.setattr(minilm, "WORKERS", 3)
    assert len(minilm._batches([len(t) for t in model.tokenize(texts, 48)])) > 3
    np.testing.assert_allclose(model.encode(texts, 48), one, atol=1e-6)
