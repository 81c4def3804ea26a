"""Turning skills into index arrays: field texts, bodies, tokens, surface words.

Used by :class:`~skilldeck.core.search.index.SearchIndex` to build and update its postings;
kept apart from the ranking so that each part stays readable.
"""

from __future__ import annotations

import bisect
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.postings import FieldArrays, sorted_unique, sum_by_key
from skilldeck.core.search.text import STOPWORDS, headings, stem_word, words

FIELDS = ("name", "description", "tags", "headings", "body")
BODY_BYTES = 8192
BODY_MIN_BYTES = 1024
BODY_BUDGET = 64 * 1024 * 1024


def field_texts(skill: Skill, body: str) -> tuple[str, str, str, str, str]:
    """The texts of :data:`FIELDS`, in that order."""
    tags = [*skill.tags, *skill.triggers.keywords, *skill.triggers.verbs]
    tools = [t.split("(", 1)[0] for t in (*skill.tool_names, *skill.allowed_tools)]
    return (
        skill.name.replace("-", " ").replace("_", " "),
        skill.description,
        " ".join(str(t) for t in (*tags, *tools)),
        "\n".join(headings(body)),
        body,
    )


def body_bytes_for(count: int) -> int:
    """Bytes of each body indexed for a catalog of ``count`` skills.

    :data:`BODY_BYTES` (8 KiB) while the total stays within :data:`BODY_BUDGET`, then less
    (never under 1 KiB), so that a 100k-skill index stays small enough to keep in memory.
    """
    if count <= 0:
        return BODY_BYTES
    return max(BODY_MIN_BYTES, min(BODY_BYTES, BODY_BUDGET // count))


def read_body(skill: Skill, max_bytes: int) -> str:
    """The first ``max_bytes`` of the skill's body, or '' when it cannot be read."""
    from skilldeck.core.discovery.frontmatter import read_body as read_file_body
    from skilldeck.core.errors import SkilldeckError

    try:
        return read_file_body(skill, max_bytes=max_bytes)
    except (SkilldeckError, OSError, ValueError):
        return ""


def required_tools(skill: Skill) -> tuple[str, ...]:
    """Names of the tools the skill requires (argument patterns dropped)."""
    return tuple(dict.fromkeys(t.name.split("(", 1)[0].strip() for t in skill.tools if t.required))


class SurfaceWords:
    """The vocabulary as written (lower-cased, unstemmed), with document frequencies.

    Kept sorted for prefix completion (a bisection gives the range of words starting with
    a prefix) and grouped by first letter and length for typo correction. Behaves as a
    read-only mapping word -> number of skills using it.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self.words: list[str] = sorted(counts) if counts else []
        self.counts: NDArray[np.int32] = np.array(
            [counts[w] for w in self.words] if counts else [], dtype=np.int32
        )
        self._by_length: dict[tuple[str, int], list[str]] | None = None

    @classmethod
    def from_sorted(cls, words: list[str], counts: NDArray[np.int32]) -> SurfaceWords:
        """Wrap words already sorted (and distinct) with their counts (a saved index)."""
        self = cls()
        self.words = words
        self.counts = counts
        return self

    @property
    def by_length(self) -> dict[tuple[str, int], list[str]]:
        """(first letter, length) -> the alphabetic words of 3+ letters so grouped, in
        order: the typo-correction pools (built on first use: 14 ms at 10k skills)."""
        if self._by_length is None:
            groups: dict[tuple[str, int], list[str]] = {}
            for word in self.words:
                if word.isalpha() and len(word) >= 3:
                    groups.setdefault((word[0], len(word)), []).append(word)
            self._by_length = groups
        return self._by_length

    def _find(self, word: str) -> int:
        i = bisect.bisect_left(self.words, word)
        return i if i < len(self.words) and self.words[i] == word else -1

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._find(word) >= 0

    def __len__(self) -> int:
        return len(self.words)

    def get(self, word: str, default: int = 0) -> int:
        """Number of skills using ``word``."""
        i = self._find(word)
        return int(self.counts[i]) if i >= 0 else default

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """Positions ``[lo, hi)`` of the words starting with ``prefix``."""
        lo = bisect.bisect_left(self.words, prefix)
        return lo, bisect.bisect_left(self.words, prefix + "\U0010ffff", lo)

    def add(self, words: Iterable[str]) -> None:
        """Count one more skill using each of ``words``."""
        fresh: list[str] = []
        for word in words:
            i = self._find(word)
            if i >= 0:
                self.counts[i] += 1
            else:
                fresh.append(word)
        if not fresh:
            return
        for word in sorted(fresh):
            i = bisect.bisect_left(self.words, word)
            self.words.insert(i, word)
            self.counts = np.insert(self.counts, i, 1)
            if self._by_length is not None and word.isalpha() and len(word) >= 3:
                bisect.insort(self._by_length.setdefault((word[0], len(word)), []), word)


@dataclass(slots=True)
class ParsedQuery:
    """A parsed query: term id -> weight, split into settled words and the word being typed."""

    terms: dict[int, float]
    labels: dict[int, str]
    unknown: int
    fixed: dict[int, float]
    tail: dict[int, float]


class Tokens:
    """Raw token -> (term ids, surface words), shared by one build or update."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.ids: dict[bytes, int] = {}
        self.ptr = array("q", [0])
        self.terms = array("i")
        self.surface = array("i")
        self.surface_ids: dict[str, int] = {}

    def new(self, raw: bytes) -> int:
        """Analyse one raw token not seen before; return its id."""
        vocab = self.vocab
        for word in words(raw.decode("ascii")):
            if word in STOPWORDS:
                continue
            term = stem_word(word)
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(vocab)
            self.terms.append(tid)
            if len(word) >= 2 and not word.isdigit():
                sid = self.surface_ids.setdefault(word, len(self.surface_ids))
            else:
                sid = -1
            self.surface.append(sid)
        self.ptr.append(len(self.terms))
        rid = self.ids[raw] = len(self.ids)
        return rid

    def ids_of(self, counter: Counter[bytes]) -> list[int]:
        """Ids of the raw tokens counted in ``counter`` (analysing new ones)."""
        found = list(map(self.ids.get, counter))
        if None in found:
            for raw in sorted(set(counter).difference(self.ids)):
                self.new(raw)
            found = list(map(self.ids.get, counter))
        return found  # type: ignore[return-value]


_NONE = np.zeros(0, dtype=np.int32)
CHUNK_DOCS = 2048
"""Documents expanded at once by :func:`postings_arrays`. Expanding all of a catalog at once
kept several int64 temporaries per raw token alive; in chunks of 2048 the build's peak RSS
at 10k skills went from 334 to 273 MB (catalog of 72 MB included; arrays byte-identical,
tested with chunks of 7, 2048 and everything)."""


def postings_arrays(
    tokens: Tokens,
    raw_ids: list[array[int]],
    raw_counts: list[array[int]],
    per_doc: list[array[int]],
    n: int,
) -> tuple[NDArray[np.int32], list[FieldArrays], NDArray[np.int64]]:
    """Per field (term, doc, tf) postings, lengths and surface-word document frequencies.

    Each field's raw tokens (ids into ``tokens``, with counts, document after document)
    are expanded to their term ids and summed per (term, document), vectorised over
    :data:`CHUNK_DOCS` documents at a time (a pair never spans two chunks).
    """
    stride = np.int64(max(n, 1))
    doc_len = np.zeros((len(FIELDS), n), dtype=np.int32)
    bounds = []
    for f in range(len(FIELDS)):
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(per_doc[f], dtype=np.int32), out=starts[1:])
        bounds.append(starts)
    parts: list[list[FieldArrays]] = [[] for _ in FIELDS]
    surface_df = np.zeros(len(tokens.surface_ids), dtype=np.int64)
    for lo in range(0, n, CHUNK_DOCS):
        hi = min(n, lo + CHUNK_DOCS)
        surface_keys: list[NDArray[np.int64]] = []
        for f in range(len(FIELDS)):
            a, b = int(bounds[f][lo]), int(bounds[f][hi])
            per = np.diff(bounds[f][lo : hi + 1])
            docs = np.repeat(np.arange(lo, hi, dtype=np.int64), per)
            terms, surface = _expand(tokens, np.frombuffer(raw_ids[f], dtype=np.int32)[a:b])
            counts = np.frombuffer(raw_counts[f], dtype=np.int32)[a:b]
            doc_of, count_of = docs[terms[1]], counts[terms[1]]
            pairs, tf = sum_by_key(terms[0].astype(np.int64) * stride + doc_of, count_of)
            doc_len[f, lo:hi] = np.bincount(doc_of - lo, weights=count_of, minlength=hi - lo)
            parts[f].append(
                (
                    (pairs // stride).astype(np.int32),
                    (pairs % stride).astype(np.int32),
                    tf.astype(np.int32),
                )
            )
            has = surface >= 0
            surface_keys.append(surface[has].astype(np.int64) * stride + doc_of[has])
            del pairs, tf, doc_of, count_of, surface, has
        keys = sorted_unique(np.concatenate(surface_keys))
        surface_df += np.bincount(keys // stride, minlength=len(surface_df))
    fields: list[FieldArrays] = []
    for f in range(len(FIELDS)):  # one field's chunks at a time, freed once joined
        chunks, parts[f] = parts[f] or [(_NONE, _NONE, _NONE)], []
        fields.append(tuple(np.concatenate([c[i] for c in chunks]) for i in range(3)))  # type: ignore[arg-type]
        del chunks
    return doc_len, fields, surface_df


def _expand(
    tokens: Tokens, rid: NDArray[np.int32]
) -> tuple[tuple[NDArray[np.int32], NDArray[np.intp]], NDArray[np.int32]]:
    """Raw tokens ``rid`` expanded to their words: ((term ids, raw token position of
    each), surface word ids (-1: none))."""
    ptr = np.frombuffer(tokens.ptr, dtype=np.int64)
    lens = ptr[1:][rid] - ptr[:-1][rid]
    source = np.repeat(np.arange(len(rid)), lens)
    starts = np.cumsum(lens) - lens
    flat = ptr[:-1][rid][source] + (np.arange(len(source)) - starts[source])
    terms = np.frombuffer(tokens.terms, dtype=np.int32)[flat]
    surface = np.frombuffer(tokens.surface, dtype=np.int32)[flat]
    return (terms, source), surface


def fresh_keys(mapping: dict[str, int]) -> dict[str, int]:
    """The same str -> id mapping (ids must be 0..n-1 in order) on new, packed objects."""
    if not mapping:
        return {}
    return dict(zip("\0".join(mapping).split("\0"), range(len(mapping)), strict=True))
