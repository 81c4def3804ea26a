"""All fields' postings merged per (term, document) pair, with precomputed weighted BM25.

Scoring one query term used to take one vectorised pass per field (five), each gathering
term frequencies and document-length norms and doing the BM25 arithmetic. Here every
(term, document) pair is stored once, in term order, with

* ``docs``: the document id;
* ``masks``: one bit per field holding the term there;
* ``contrib``: the weighted sum over fields of that field's BM25Okapi contribution,
  ``sum_f weight_f * idf_f(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len_f(d) / avgdl_f))``,
  in float32 (precision about 1e-7 relative, far below what changes a ranking);

so a query term costs one gather and one scattered add. A second weighting of the fields
(``alt_weights``, ``alt_contrib``; the index uses it with embeddings on) can be kept
alongside, computed and updated the same way; it exists only while set. The exact
per-field figures are kept too: per field, the term frequencies of the pairs holding that
field (``tfs[f]``, in pair order, one byte each) and the document lengths, so that
per-field BM25 equal to ``rank_bm25.BM25Okapi`` (1e-9 relative, tested) is available for
``--explain`` and the tests, and ``contrib`` can be recomputed after a live update (the idf
and the average length of every field change with the document count).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.search.bm25 import EPSILON, K1, MAX_TF, MIN_RANK_IDF, B, BM25Postings

_CHUNK = 1 << 16
"""Pairs whose contributions are computed at once: each of the dozen float64 temporaries
is 0.5 MB (with 1 << 20 they held 100 MB at the peak of a 10k build; time unchanged)."""
_EMPTY_KEYS = np.zeros(0, dtype=np.int64)
_EMPTY_IDS = np.zeros(0, dtype=np.int32)

SortKind = Literal["quicksort", "stable"]

FieldArrays = tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]
"""One field's postings as parallel arrays: term ids, document ids, term frequencies."""
_EMPTY_FIELD: FieldArrays = (_EMPTY_IDS, _EMPTY_IDS, _EMPTY_IDS)


def sorted_unique(keys: NDArray[np.int64], kind: SortKind = "quicksort") -> NDArray[np.int64]:
    """The distinct values of ``keys``, ascending (sorts ``keys`` in place, by ``kind``:
    ``"stable"`` (timsort) merges keys made of sorted runs in 12 ms where quicksort takes
    38 ms, 3.4M keys at 10k skills).

    ``np.unique`` hashes in numpy 2.3+, which is many times slower on millions of keys.
    """
    keys.sort(kind=kind)
    if len(keys) < 2:
        return keys
    fresh = np.empty(len(keys), dtype=bool)
    fresh[0] = True
    np.not_equal(keys[1:], keys[:-1], out=fresh[1:])
    return keys[fresh]


def idf_table(
    df: NDArray[np.int32], n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """BM25Okapi idf of every term of one field, its ranking variant and the average idf.

    ``idf`` is BM25Okapi's own (a negative idf replaced by ``EPSILON * average``); the
    ranking variant raises a non-positive idf, which BM25Okapi only produces in corpora so
    small that the average idf is negative, to a tiny positive value so that a matching
    term never lowers a score. On any corpus whose average idf is positive they agree.
    """
    dff = df.astype(np.float64)
    present = df > 0
    idf = np.zeros(len(df), dtype=np.float64)
    average = 0.0
    if n and present.any():
        idf[present] = np.log(n - dff[present] + 0.5) - np.log(dff[present] + 0.5)
        average = float(idf[present].sum()) / int(present.sum())
        idf[present & (idf < 0)] = EPSILON * average
    rank = np.where(present & (idf <= 0), MIN_RANK_IDF, idf)
    return idf, rank, average


def _union(keys: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
    """The distinct values of sorted, distinct ``keys`` arrays, ascending.

    The largest array (the body's) is taken whole and only the others' values it lacks are
    merged in: the same result as ``sorted_unique(np.concatenate(keys))`` without holding a
    concatenated copy and a distinct copy of all pairs side by side (with the block-wise
    ``docs``/``masks`` below, :meth:`FieldPostings._assemble`'s traced peak at 10k skills
    went from 94 to 73 MB over its start; time about the same).
    """
    if not keys:
        return np.zeros(0, dtype=np.int64)
    order = sorted(range(len(keys)), key=lambda f: -len(keys[f]))
    base = keys[order[0]]
    extra: list[NDArray[np.int64]] = []
    for f in order[1:]:
        k = keys[f]
        if len(base) and len(k):
            pos = np.searchsorted(base, k)
            np.minimum(pos, len(base) - 1, out=pos)
            k = k[base[pos] != k]
        extra.append(k)
    if not extra:
        return base.copy()
    merged = np.concatenate([base, sorted_unique(np.concatenate(extra), kind="stable")])
    merged.sort(kind="stable")  # two sorted runs: one merge
    return merged


class SavedWeighting(Protocol):
    """Where a second weighting of these very postings may be kept (the store's saved
    index: :class:`skilldeck.core.search.saved_weighting.SavedAlt`)."""

    def load(self, weights: NDArray[np.float64]) -> NDArray[np.float32] | None:
        """The kept ``alt_contrib`` of exactly ``weights``, or None."""

    def keep(self, weights: NDArray[np.float64], contrib: NDArray[np.float32]) -> None:
        """Keep ``contrib``, computed for ``weights``."""


class FieldPostings:
    """Fielded BM25 index over a shared vocabulary, one entry per (term, document) pair.

    Args:
        fields: Per field, its postings (term ids, document ids, frequencies), each
            (term, document) at most once per field, in any order. A list is consumed: each
            field's entry is replaced by empty arrays once read, so that a build does not
            hold its input and the merged arrays together (35 MB less at the peak of a
            10k-skill build).
        doc_len: Per field, every document's token count (shape ``fields x documents``).
        vocab_size: Number of term ids.
        weights: Per field, the weight of its BM25 score in ``contrib``.
        alt_weights: Optionally a second weighting, for ``alt_contrib`` (see
            :meth:`set_alt_weights`).
    """

    contrib: NDArray[np.float32]
    """Per pair, its weighted BM25 summed over the fields (``weights``)."""
    saved_weighting: SavedWeighting | None = None
    """Where :meth:`set_alt_weights` finds and keeps its array; dropped when the postings
    change."""

    def __init__(
        self,
        fields: Sequence[FieldArrays],
        doc_len: NDArray[np.int32],
        vocab_size: int,
        weights: Sequence[float],
        alt_weights: Sequence[float] | None = None,
    ) -> None:
        self.n_fields = len(fields)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.alt_weights: NDArray[np.float64] | None = (
            None if alt_weights is None else np.asarray(alt_weights, dtype=np.float64)
        )
        self.alt_contrib: NDArray[np.float32] | None = None
        self._assemble(fields, doc_len, vocab_size)
        self._recompute()

    # ------------------------------------------------------------------ construction

    def _assemble(
        self, fields: Sequence[FieldArrays], doc_len: NDArray[np.int32], vocab_size: int
    ) -> None:
        n = int(doc_len.shape[1]) if doc_len.ndim == 2 else 0
        self.n_docs = n
        self.vocab_size = vocab_size
        self.saved_weighting = None  # it described the postings before this change
        self.doc_len: NDArray[np.int32] = np.ascontiguousarray(doc_len, dtype=np.int32)
        stride = np.int64(max(n, 1))
        keys: list[NDArray[np.int64]] = []
        self.tfs: list[NDArray[np.uint8]] = []
        self.df: NDArray[np.int32] = np.zeros((self.n_fields, vocab_size), dtype=np.int32)
        for f in range(len(fields)):
            terms, docs, tfs = fields[f]
            if isinstance(fields, list):  # consumed: see the class docstring
                fields[f] = _EMPTY_FIELD
            # (term, document) is unique within a field, so sorting the key with the
            # frequency in its low byte orders the frequencies too: an in-place sort, no
            # argsort permutation and no gathered copies (arrays byte-identical, tested)
            key = terms.astype(np.int64)
            key *= stride
            key += docs
            key <<= 8
            key |= np.minimum(tfs, MAX_TF)
            key.sort(kind="stable")  # timsort: one pass when already in order (a build)
            self.tfs.append(key.astype(np.uint8))  # the low byte
            key >>= 8
            keys.append(key)
            del key
            self.df[f] = np.bincount(terms, minlength=vocab_size)[:vocab_size]
            del terms, docs, tfs
        pairs = _union(keys)
        # where each term's pairs start, by bisection: no per-pair temporaries
        bounds = np.arange(vocab_size + 1, dtype=np.int64) * stride
        self.indptr: NDArray[np.int64] = np.searchsorted(pairs, bounds).astype(np.int64)
        self.docs: NDArray[np.int32] = np.empty(len(pairs), dtype=np.int32)
        self.masks: NDArray[np.uint8] = np.zeros(len(pairs), dtype=np.uint8)
        for lo in range(0, len(pairs), _CHUNK):  # blocks: temporaries of 0.5 MB
            self.docs[lo : lo + _CHUNK] = pairs[lo : lo + _CHUNK] % stride
        for f in range(len(keys)):
            for lo in range(0, len(keys[f]), _CHUNK):
                self.masks[np.searchsorted(pairs, keys[f][lo : lo + _CHUNK])] |= np.uint8(1 << f)
            keys[f] = _EMPTY_KEYS
        self._tfptr: NDArray[np.int64] | None = None

    @classmethod
    def from_arrays(
        cls,
        arrays: Mapping[str, NDArray[np.generic]],
        tfs: Sequence[NDArray[np.uint8]],
        vocab_size: int,
        weights: Sequence[float],
    ) -> FieldPostings:
        """Wrap arrays saved from another index (``docs``, ``masks``, ``contrib``,
        ``indptr``, ``df``, ``doc_len``; see :mod:`skilldeck.core.search.persist`), which
        has checked their dtypes, shapes and consistency. Only the per-field statistics
        are recomputed (a few ms); ``contrib`` is taken as saved: recomputing it costs
        0.13 s at 10k skills (measured), reading it back about 5 ms."""
        self = cls.__new__(cls)
        self.n_fields = len(tfs)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.alt_weights = None
        self.alt_contrib = None
        self.vocab_size = vocab_size
        self.doc_len = arrays["doc_len"]  # type: ignore[assignment]
        self.n_docs = int(self.doc_len.shape[1])
        self.docs = arrays["docs"]  # type: ignore[assignment]
        self.masks = arrays["masks"]  # type: ignore[assignment]
        self.indptr = arrays["indptr"]  # type: ignore[assignment]
        self.df = arrays["df"]  # type: ignore[assignment]
        self.tfs = list(tfs)
        self._tfptr = None
        self._statistics()
        self.contrib = arrays["contrib"]  # type: ignore[assignment]
        return self

    def _statistics(self) -> None:
        """Average lengths, average idf and each term's ranking idf, from ``df``/``doc_len``."""
        n = self.n_docs
        self.avgdl = np.zeros(self.n_fields, dtype=np.float64)
        self.avg_idf = np.zeros(self.n_fields, dtype=np.float64)
        term_idf = np.zeros(self.vocab_size, dtype=np.float64)
        for f in range(self.n_fields):
            _, rank_idf, self.avg_idf[f] = idf_table(self.df[f], n)
            np.maximum(term_idf, np.where(self.df[f] > 0, rank_idf, 0.0), out=term_idf)
            total = int(self.doc_len[f].sum())
            self.avgdl[f] = total / n if n else 0.0
        self.term_idf: NDArray[np.float64] = term_idf

    def _recompute(self) -> None:
        self._statistics()
        if self.alt_weights is None:
            (self.contrib,) = self._contributions([self.weights])
            self.alt_contrib = None
        else:
            self.contrib, self.alt_contrib = self._contributions([self.weights, self.alt_weights])

    def _contributions(
        self, weight_sets: Sequence[NDArray[np.float64]]
    ) -> list[NDArray[np.float32]]:
        """Per weighting, every pair's weighted BM25 summed over the fields (float32)."""
        totals = [np.zeros(len(self.docs), dtype=np.float64) for _ in weight_sets]
        terms = self.pair_terms() if len(self.docs) else np.zeros(0, dtype=np.int32)
        for f in range(self.n_fields):
            if not len(self.tfs[f]):
                continue
            _, rank_idf, _ = idf_table(self.df[f], self.n_docs)
            norm = K1 * (1 - B + B * self.doc_len[f] / self.avgdl[f])
            bit, done = np.uint8(1 << f), 0
            for lo in range(0, len(self.docs), _CHUNK):  # a block of pairs at a time
                at = np.flatnonzero(self.masks[lo : lo + _CHUNK] & bit)
                at += lo
                tf = self.tfs[f][done : done + len(at)].astype(np.float64)
                done += len(at)
                part = tf * (K1 + 1) / (tf + norm[self.docs[at]])
                idf = rank_idf[terms[at]]
                for total, weights in zip(totals, weight_sets, strict=True):
                    total[at] += part * (weights[f] * idf)
        return [total.astype(np.float32) for total in totals]

    def set_alt_weights(self, weights: Sequence[float] | None) -> None:
        """Keep a second weighting of the fields (``alt_contrib``), or drop it with None.

        The array is as large as ``contrib`` (4 bytes a pair), so it is only held while a
        caller needs it; :meth:`rebuild` keeps it current. It is read from, or else kept
        in, :attr:`saved_weighting`: at 10k skills computing it took 52 ms (profiled),
        reading it back 11-22 ms; a one-shot hybrid search CPU p50 0.557 -> 0.531 s (25
        runs each, alternated, load 1.5-2.3).
        """
        if weights is None:
            self.alt_weights = None
            self.alt_contrib = None
            return
        vector = np.asarray(weights, dtype=np.float64)
        if len(vector) != self.n_fields:
            raise ValueError(f"expected {self.n_fields} field weights, got {len(vector)}")
        saved = self.saved_weighting
        contrib = saved.load(vector) if saved is not None else None
        if contrib is None:
            (contrib,) = self._contributions([vector])
            if saved is not None:
                saved.keep(vector, contrib)
        self.alt_weights, self.alt_contrib = vector, contrib

    def idf(
        self, f: int, terms: NDArray[np.int64] | int, *, exact: bool = True
    ) -> NDArray[np.float64]:
        """idf of ``terms`` in field ``f``: BM25Okapi's own, or with ``exact`` off the
        ranking variant (see :func:`idf_table`); 0 for terms absent from the field."""
        df = self.df[f][np.atleast_1d(terms)].astype(np.float64)
        n = self.n_docs
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        idf = np.where(idf < 0, EPSILON * self.avg_idf[f], idf)
        if not exact:
            idf = np.where(idf <= 0, MIN_RANK_IDF, idf)
        return np.where(df > 0, idf, 0.0)

    def norm(self, f: int, docs: NDArray[np.int64] | int) -> NDArray[np.float64]:
        """BM25 length norm ``k1 * (1 - b + b * len / avgdl)`` of ``docs`` in field ``f``."""
        lengths = self.doc_len[f][np.atleast_1d(docs)]
        if self.avgdl[f] <= 0:
            return np.zeros(len(lengths), dtype=np.float64)
        return np.asarray(K1 * (1 - B + B * lengths / self.avgdl[f]), dtype=np.float64)

    @property
    def tfptr(self) -> NDArray[np.int64]:
        """Per field, where each term's entries start in ``tfs[f]`` (built on first use)."""
        if self._tfptr is None:
            self._tfptr = np.zeros((self.n_fields, self.vocab_size + 1), dtype=np.int64)
            np.cumsum(self.df, axis=1, out=self._tfptr[:, 1:])
        return self._tfptr

    def pair_terms(self) -> NDArray[np.int32]:
        """The term id of every pair."""
        return np.repeat(np.arange(self.vocab_size, dtype=np.int32), np.diff(self.indptr))

    def field_positions(self, f: int) -> NDArray[np.intp]:
        """Positions of the pairs holding field ``f`` (aligned with ``tfs[f]``)."""
        return np.flatnonzero(self.masks & np.uint8(1 << f))

    def field_arrays(self) -> list[FieldArrays]:
        """Every field's postings as (term ids, document ids, frequencies)."""
        terms = self.pair_terms()
        out: list[FieldArrays] = []
        for f in range(self.n_fields):
            pos = self.field_positions(f)
            out.append((terms[pos], self.docs[pos], self.tfs[f].astype(np.int32)))
        return out

    def rebuild(
        self,
        remap: NDArray[np.int32],
        new_docs: Mapping[int, Sequence[Mapping[int, int]]],
        n_docs: int,
        vocab_size: int,
    ) -> None:
        """Renumber, drop, replace or add documents, keeping every other posting.

        Args:
            remap: Per existing document, its new id, or -1 to drop all its postings.
            new_docs: New id -> per field, its term frequencies (for new or replaced
                documents, whose old postings must be dropped through ``remap``).
            n_docs: Document count after the change.
            vocab_size: Vocabulary size after the change.
        """
        doc_len = np.zeros((self.n_fields, n_docs), dtype=np.int32)
        kept = remap >= 0
        doc_len[:, remap[kept]] = self.doc_len[:, kept]
        fields: list[FieldArrays] = []
        for f, (terms, docs, tfs) in enumerate(self.field_arrays()):
            new_ids = remap[docs]
            keep = new_ids >= 0
            t_parts = [terms[keep]]
            d_parts = [new_ids[keep].astype(np.int32)]
            f_parts = [tfs[keep]]
            for doc, per_field in new_docs.items():
                freqs = per_field[f]
                k = len(freqs)
                doc_len[f, doc] = sum(freqs.values())
                t_parts.append(np.fromiter(freqs.keys(), dtype=np.int32, count=k))
                f_parts.append(np.fromiter(freqs.values(), dtype=np.int32, count=k))
                d_parts.append(np.full(k, doc, dtype=np.int32))
            fields.append(
                (np.concatenate(t_parts), np.concatenate(d_parts), np.concatenate(f_parts))
            )
        self._assemble(fields, doc_len, vocab_size)
        self._recompute()

    # ------------------------------------------------------------------ querying

    def add_scores(
        self, scores: NDArray[np.float64], term: int, weight: float = 1.0, *, alt: bool = False
    ) -> int:
        """Add ``weight`` x the term's weighted BM25 to ``scores``; return its pair count.

        With ``alt`` the second weighting (``alt_contrib``) is used; it must be set.
        """
        if term >= self.vocab_size:
            return 0
        start, end = int(self.indptr[term]), int(self.indptr[term + 1])
        if start == end:
            return 0
        source = self.alt_contrib if alt else self.contrib
        if source is None:
            raise ValueError("no second field weighting is set")
        contrib = source[start:end]
        scores[self.docs[start:end]] += contrib if weight == 1.0 else contrib * weight
        return end - start

    def masks_of(self, term: int, docs: NDArray[np.int32]) -> NDArray[np.uint8]:
        """Field bits of ``term`` in each of ``docs`` (0 where absent)."""
        if term >= self.vocab_size or not len(docs):
            return np.zeros(len(docs), dtype=np.uint8)
        start, end = int(self.indptr[term]), int(self.indptr[term + 1])
        if start == end:
            return np.zeros(len(docs), dtype=np.uint8)
        ids = self.docs[start:end]
        pos = ids.searchsorted(docs)
        np.minimum(pos, end - start - 1, out=pos)
        out = self.masks[start:end][pos]
        out[ids[pos] != docs] = 0
        return out

    def field_tf(self, f: int, term: int, doc: int) -> int:
        """Frequency of ``term`` in field ``f`` of ``doc`` (0 when absent)."""
        if term >= self.vocab_size:
            return 0
        start, end = int(self.indptr[term]), int(self.indptr[term + 1])
        ids = self.docs[start:end]
        pos = int(np.searchsorted(ids, doc))
        if pos >= len(ids) or ids[pos] != doc:
            return 0
        bit = np.uint8(1 << f)
        if not self.masks[start + pos] & bit:
            return 0
        rank = int(np.count_nonzero(self.masks[start : start + pos] & bit))
        return int(self.tfs[f][int(self.tfptr[f, term]) + rank])

    def field_score(
        self, f: int, term: int, doc: int, weight: float = 1.0, *, exact: bool = False
    ) -> float:
        """Unweighted float64 BM25 of ``term`` in field ``f`` of ``doc``, times ``weight``.

        With ``exact`` the idf is BM25Okapi's own, otherwise the ranking variant.
        """
        tf = self.field_tf(f, term, doc)
        if not tf:
            return 0.0
        idf = float(self.idf(f, term, exact=exact)[0])
        return float(weight * idf * (tf * (K1 + 1) / (tf + float(self.norm(f, doc)[0]))))

    def field_view(self, f: int) -> BM25Postings:
        """Field ``f`` alone as a :class:`BM25Postings` (a copy; for tests and debugging)."""
        pos = self.field_positions(f)
        return BM25Postings.from_csr(
            self.tfptr[f].copy(),
            self.docs[pos],
            self.tfs[f].astype(np.int32),
            self.doc_len[f].copy(),
            self.vocab_size,
        )

    def nbytes(self) -> int:
        """Memory held by the arrays."""
        arrays: list[NDArray[np.generic]] = [
            self.docs,
            self.masks,
            self.contrib,
            *([] if self.alt_contrib is None else [self.alt_contrib]),
            self.indptr,
            self.df,
            self.doc_len,
            self.term_idf,
            *self.tfs,
        ]
        return int(sum(a.nbytes for a in arrays))


class FieldViews(Mapping[str, BM25Postings]):
    """Read-only mapping field name -> :class:`BM25Postings` view, built on access."""

    def __init__(self, postings: FieldPostings, names: Sequence[str]) -> None:
        self._postings = postings
        self._names = tuple(names)

    def __getitem__(self, name: str) -> BM25Postings:
        if name not in self._names:
            raise KeyError(name)
        return self._postings.field_view(self._names.index(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)
