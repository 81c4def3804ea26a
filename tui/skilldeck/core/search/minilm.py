"""A sentence-embedding model run with numpy alone: a BERT encoder, mean (or CLS) pooling,
L2 normalisation. Made for all-MiniLM-L6-v2 (6 layers, 384 wide, 12 heads); any BERT of
the same layout loads.

Weights are mapped from ``model.safetensors`` (:mod:`.weights`), text is tokenised with
``tokenizers`` (``tokenizer.json``); no torch. Against sentence-transformers (torch 2.14,
CPU) the vectors agree to cosine >= 0.99999 on ``tests/data/minilm_reference.npy``.

Things that differ from a naive reading of the files (each cost a wrong vector once):

* ``tokenizer.json`` ships with truncation and padding fixed at 128 tokens; the model's
  limit is ``max_seq_length`` (256, ``sentence_bert_config.json``). Both are reset here:
  truncation at the limit, padding to the longest text of each batch.
* The token-type embedding of type 0 is added to every token.
* GELU is the exact ``x * Phi(x)`` form (erf), not the tanh approximation; numpy has no
  erf, so :func:`_gelu` uses Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7).

Measured on this 2-core machine (OpenBLAS 0.3.31, numpy 2.4, one BLAS thread: see
:data:`~skilldeck.core.search.semantic.BLAS_THREADS`): loading and embedding a first query
takes 0.07 s (the weights are mapped, :mod:`.weights`); a query of 3-10 words embeds in
10-11 ms, 80% of it in the 24 matrix products; the 372 corpus skills (name and
description, 66 tokens on average) in 7.4 s. sentence-transformers on torch took 4.4 s to
load. Where a batch's time goes (one thread, texts cut at 48 tokens, CPU time, OpenBLAS's
Haswell kernel): matrix products of the dense layers 74% (118 GFLOP/s, the AVX2 kernel's
peak), GELU 11%, attention 7%, layer norms 6%, tokenising under 0.1%; padding adds 0.8%
(texts are batched by length). The tokens embedded decide the time, so the index embeds
few (:data:`~.embedding.TEXT_TOKENS`) and :meth:`MiniLM.encode` runs batches on every core
(1,000 skills at 44 tokens: 10.7 s CPU). The kernel is OpenBLAS's choice, made when numpy
loads: on this AMD EPYC (Zen 5, AVX-512) it picks its SkylakeX (AVX-512) kernels, whose
products run at 225 GFLOP/s (1,000 skills: 8.0 s CPU), unless ``OPENBLAS_CORETYPE`` names
another (this project's sessions ran with ``Haswell`` set). Batch size does not matter
(8 to 64 texts: 11.1-11.8 ms a text), nor does the weights' layout.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.search.weights import WeightsError, map_tensors

F32 = NDArray[np.float32]

MAX_TOKENS = 256
"""all-MiniLM-L6-v2's ``max_seq_length`` (used when the folder does not say)."""
BATCH_TOKENS = 4096
"""Most (padded) tokens embedded in one forward pass: bounds the attention scores at
``12 heads * 4096 * L`` floats (12 MB at L=64, 50 MB at the 256-token limit)."""
BATCH_TEXTS = 32
"""Most texts in one forward pass (texts are sorted by length, so a small batch is padded
little)."""
WORKERS = min(4, os.cpu_count() or 1)
"""Threads embedding the batches of one :meth:`MiniLM.encode` (one per core, at most 4)."""
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"

# Abramowitz & Stegun 7.1.26 for erf(|x| / sqrt 2): p scaled by 1 / sqrt 2, a_i halved
_P = np.float32(0.3275911 / math.sqrt(2.0))
_A = [
    np.float32(v / 2) for v in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
]


class ModelError(Exception):
    """A model folder that cannot be run by this engine (the message says why)."""


GELU_CHUNK = 1 << 15
"""Elements per step of :func:`_gelu`: its passes then run in cache (a whole
(tokens, 1536) array at a time took 36 ms per 3M elements, chunked in place 11 ms; one
matmul of the same size takes 7 ms)."""


def _gelu(x: F32) -> F32:
    """Exact GELU, ``x Phi(x)``, as ``max(x, 0) - |x| q`` with ``q = Phi(-|x|)``, the
    normal tail, by Abramowitz-Stegun 7.1.26: ``q = poly(t) exp(-x^2 / 2) / 2``,
    ``t = 1 / (1 + p |x| / sqrt 2)`` (20 passes over each chunk instead of the 23 of
    ``x (1 + erf(x / sqrt 2)) / 2``: 4.6 ms against 5.6 ms per 1536 x 1536, one thread)."""
    out = np.empty_like(x)
    flat, dest = x.reshape(-1), out.reshape(-1)
    a, t, p = (np.empty(min(GELU_CHUNK, flat.size), dtype=np.float32) for _ in range(3))
    for start in range(0, flat.size, GELU_CHUNK):
        xs = flat[start : start + GELU_CHUNK]
        n = xs.size
        aa, tt, pp = a[:n], t[:n], p[:n]
        np.abs(xs, out=aa)
        np.multiply(aa, _P, out=tt)
        tt += 1.0
        np.reciprocal(tt, out=tt)
        np.multiply(tt, _A[4], out=pp)
        for coef in (_A[3], _A[2], _A[1], _A[0]):
            pp += coef
            pp *= tt
        pp *= aa  # |x| poly(t) / 2
        np.multiply(xs, xs, out=aa)
        aa *= np.float32(-0.5)
        np.exp(aa, out=aa)
        pp *= aa  # |x| q
        dx = dest[start : start + n]
        np.maximum(xs, np.float32(0.0), out=dx)
        dx -= pp
    return out


def _layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    """Layer norm over the last axis, in place on a fresh array (ufunc reductions: the
    ``mean`` wrappers cost 14 us a call, 0.3 ms of a 10 ms query)."""
    width = np.float32(1.0 / x.shape[-1])
    mean: F32 = np.add.reduce(x, axis=-1, keepdims=True)
    mean *= width
    out: F32 = x - mean
    var: F32 = np.add.reduce(out * out, axis=-1, keepdims=True)
    var *= width
    var += np.float32(eps)
    np.sqrt(var, out=var)
    out /= var
    out *= weight
    out += bias
    return out


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path`` ({} when the file is absent)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ModelError(f"{path.name} is not a JSON object")
    return data


def pooling_mode(folder: Path) -> str:
    """``mean`` or ``cls`` from a sentence-transformers folder's pooling config (``mean``
    when there is none); :class:`ModelError` for a mode this engine does not run."""
    pooling = next(iter(sorted(folder.glob("*_Pooling/config.json"))), None)
    config = read_json(pooling) if pooling else {}
    modes = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v)
    if modes in ([], ["pooling_mode_mean_tokens"]):
        return "mean"
    if modes == ["pooling_mode_cls_token"]:
        return "cls"
    raise ModelError(f"pooling {', '.join(modes)} is not supported by the numpy engine")


SMALL_BATCH = 256
"""Below this many tokens :func:`_dense` computes ``(W @ x.T).T``: OpenBLAS then packs
the few token rows, not the weights (12 weight matrices of a query of 10 tokens, one
thread: 5.6 ms as ``x @ W.T``, 3.9 ms so; equal from ~400 tokens)."""


def _dense(x: F32, weight: F32, bias: F32) -> F32:
    """``x @ weight.T + bias`` for ``weight`` of shape (out, in), C-contiguous."""
    if x.shape[0] < SMALL_BATCH:
        out: F32 = np.ascontiguousarray((weight @ x.T).T)
    else:
        out = x @ weight.T
    out += bias
    return out


def _batches(lengths: Sequence[int]) -> list[list[int]]:
    """Text positions in batches: sorted by length (a batch's last text is its longest),
    at most :data:`BATCH_TEXTS` texts and :data:`BATCH_TOKENS` padded tokens each."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    start = 0
    while start < len(order):
        end = start + 1
        while end < min(len(order), start + BATCH_TEXTS) and (
            (end - start + 1) * lengths[order[end]] <= BATCH_TOKENS
        ):
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


class Layer:
    """One encoder layer's weights, as stored: (out, in) matrices, the attention
    projections fused into one (one matmul instead of three)."""

    def __init__(self, w: dict[str, F32], prefix: str) -> None:
        att = f"{prefix}attention."
        names = ("query", "key", "value")
        self.qkv_w = np.concatenate([w[f"{att}self.{n}.weight"] for n in names])
        self.qkv_b = np.concatenate([w[f"{att}self.{n}.bias"] for n in names])
        self.out_w = w[f"{att}output.dense.weight"]
        self.out_b = w[f"{att}output.dense.bias"]
        self.ln1 = (w[f"{att}output.LayerNorm.weight"], w[f"{att}output.LayerNorm.bias"])
        self.up_w = w[f"{prefix}intermediate.dense.weight"]
        self.up_b = w[f"{prefix}intermediate.dense.bias"]
        self.down_w = w[f"{prefix}output.dense.weight"]
        self.down_b = w[f"{prefix}output.dense.bias"]
        self.ln2 = (w[f"{prefix}output.LayerNorm.weight"], w[f"{prefix}output.LayerNorm.bias"])


class MiniLM:
    """A BERT sentence encoder from a folder holding ``config.json``,
    ``model.safetensors`` and ``tokenizer.json`` (a sentence-transformers model folder).

    Raises:
        ModelError: A file is missing or does not describe a model this engine runs.
        ImportError: ``tokenizers`` is not installed.
    """

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config = read_json(folder / "config.json")
        if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise ModelError("config.json does not describe a BERT model with GELU")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ModelError("only absolute position embeddings are supported")
        for name in (WEIGHTS_FILE, TOKENIZER_FILE):
            if not (folder / name).is_file():
                raise ModelError(f"{name} is missing")
        self.pooling = pooling_mode(folder)
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        limit = read_json(folder / "sentence_bert_config.json").get("max_seq_length")
        positions = int(config.get("max_position_embeddings", 512))
        self.max_tokens = min(int(limit or MAX_TOKENS), positions)
        self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_tokens)
        try:
            raw = map_tensors(folder / WEIGHTS_FILE)
        except WeightsError as exc:
            raise ModelError(f"{WEIGHTS_FILE}: {exc}") from None
        self._load_weights(raw, int(config["num_hidden_layers"]))
        self.dim = int(self.word.shape[1])

    def _load_weights(self, raw: dict[str, NDArray[Any]], layers: int) -> None:
        w = {k.removeprefix("bert."): np.asarray(v, dtype=np.float32) for k, v in raw.items()}
        try:
            self.word = w["embeddings.word_embeddings.weight"]
            self.position = w["embeddings.position_embeddings.weight"]
            # every token is of type 0: its row is added to every token
            self.type0 = w["embeddings.token_type_embeddings.weight"][0]
            self.ln0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
            self.layers = [Layer(w, f"encoder.layer.{i}.") for i in range(layers)]
        except KeyError as exc:
            raise ModelError(f"{WEIGHTS_FILE} lacks tensor {exc}") from None
        if self.word.shape[1] % self.heads:
            raise ModelError("the hidden size is not a multiple of the head count")

    def tokenize(self, texts: Sequence[str], cap: int | None = None) -> list[list[int]]:
        """Token ids of each text, with [CLS] and [SEP], cut at :attr:`max_tokens` (or at
        ``cap`` tokens, [SEP] kept last, when ``cap`` is smaller)."""
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        if cap is None or cap >= self.max_tokens:
            return ids
        cap = max(2, cap)
        return [seq if len(seq) <= cap else [*seq[: cap - 1], seq[-1]] for seq in ids]

    def encode(self, texts: Sequence[str], cap: int | None = None) -> F32:
        """Unit-length embeddings, one float32 row per text (in order), each text cut at
        ``cap`` tokens when given (:meth:`tokenize`).

        Texts are sorted by length and embedded in batches of at most
        :data:`BATCH_TOKENS` padded tokens, each padded to its longest text, by up to
        :data:`WORKERS` threads (numpy and BLAS release the GIL; the caller keeps BLAS
        to one thread each).
        """
        ids = self.tokenize(texts, cap)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)

        def run(batch: list[int]) -> None:
            out[batch] = self._forward([ids[i] for i in batch], len(ids[batch[-1]]))

        batches = _batches([len(seq) for seq in ids])
        if len(batches) < 2 or WORKERS < 2:
            for batch in batches:
                run(batch)
            return out
        from concurrent.futures import ThreadPoolExecutor  # 3 ms a query does not need

        with ThreadPoolExecutor(WORKERS, thread_name_prefix="minilm") as pool:
            for _ in pool.map(run, batches):  # re-raises a batch's error
                pass
        return out

    def _forward(self, ids: list[list[int]], length: int) -> F32:
        """Pooled, normalised embeddings of one batch padded to ``length`` tokens."""
        count = len(ids)
        tokens = np.zeros((count, length), dtype=np.int64)
        mask = np.zeros((count, length), dtype=np.float32)
        for row, seq in enumerate(ids):
            tokens[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self.word[tokens] + self.position[:length] + self.type0
        x = _layer_norm(x, *self.ln0, self.eps).reshape(count * length, -1)
        # padded keys get a large negative score: exp() of it is 0 after the max shift
        bias = ((mask - 1.0) * np.float32(1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._layer(layer, x, bias, count, length)
        hidden = x.reshape(count, length, -1)
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            summed = np.einsum("bld,bl->bd", hidden, mask)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: F32 = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return result

    def _layer(self, layer: Layer, x: F32, bias: F32, count: int, length: int) -> F32:
        """One encoder layer over ``x`` (``count * length`` tokens, flattened)."""
        width = x.shape[1]
        head = width // self.heads
        qkv = _dense(x, layer.qkv_w, layer.qkv_b).reshape(count, length, 3, self.heads, head)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        scores: F32 = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(head)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context: F32 = (scores @ v).transpose(0, 2, 1, 3).reshape(count * length, width)
        x = _layer_norm(_dense(context, layer.out_w, layer.out_b) + x, *layer.ln1, self.eps)
        up = _gelu(_dense(x, layer.up_w, layer.up_b))
        out: F32 = _layer_norm(_dense(up, layer.down_w, layer.down_b) + x, *layer.ln2, self.eps)
        return out
