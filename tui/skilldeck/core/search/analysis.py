"""Turning skills into index arrays: field texts, bodies, tokens, surface words.

Used by :class:`~skilldeck.core.search.index.SearchIndex` to build and update its postings;
kept apart from the ranking so that each part stays readable.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.postings import FieldArrays, sorted_unique
from skilldeck.core.search.text import STOPWORDS, headings, raw_token_bytes, stem_word, words

FIELDS = ("name", "description", "tags", "headings", "body", "examples")
BODY_BYTES = 8192
BODY_MIN_BYTES = 1024
BODY_BUDGET = 64 * 1024 * 1024


def field_texts(skill: Skill, body: str) -> tuple[str, str, str, str, str, str]:
    """The texts of :data:`FIELDS`, in that order (``examples``: the requests of the
    skill's ``examples``, one a line; what it does is the description's business)."""
    tags = [*skill.tags, *skill.triggers.keywords, *skill.triggers.verbs]
    tools = [t.split("(", 1)[0] for t in (*skill.tool_names, *skill.allowed_tools)]
    return (
        skill.name.replace("-", " ").replace("_", " "),
        skill.description,
        " ".join(str(t) for t in (*tags, *tools)),
        "\n".join(headings(body)),
        body,
        "\n".join(e.request for e in skill.examples),
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
    a prefix). Behaves as a read-only mapping word -> number of skills using it.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self.words: list[str] = sorted(counts) if counts else []
        self.counts: NDArray[np.int32] = np.array(
            [counts[w] for w in self.words] if counts else [], dtype=np.int32
        )

    @classmethod
    def from_sorted(cls, words: list[str], counts: NDArray[np.int32]) -> SurfaceWords:
        """Wrap words already sorted (and distinct) with their counts (a saved index)."""
        self = cls()
        self.words = words
        self.counts = counts
        return self

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
        self.ptr = array("i", [0])
        self.terms = array("i")
        self.surface = array("i")
        self.surface_ids: dict[str, int] = {}

    def new(self, raw: bytes) -> int:
        """Analyse one raw token not seen before; return its id (0, 1, 2... in call order)."""
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
        return len(self.ptr) - 2


class RawIds(dict[bytes, int]):
    """Raw token -> provisional id, in order of first appearance: a miss (``__missing__``,
    called by ``dict.__getitem__`` only for unknown tokens) numbers the token and notes the
    (document, field) slot that met it first, so a hit costs one C-level dict lookup.

    :meth:`settle` then analyses the tokens met since its last call in the order the
    per-document build used (by slot, then bytes), so term and surface-word ids, and thus
    every array of the index, stay byte-identical to it (tested).
    """

    def __init__(self, tokens: Tokens) -> None:
        super().__init__()
        self.tokens = tokens
        self.slot = 0
        self.raws: list[bytes] = []
        self.first = array("q")
        self.canon = array("q")
        """Provisional id -> the token's id in :attr:`tokens` (for settled tokens)."""

    def __missing__(self, raw: bytes) -> int:
        rid = self[raw] = len(self.raws)
        self.raws.append(raw)
        self.first.append(self.slot)
        return rid

    def settle(self) -> NDArray[np.int32]:
        """Analyse the tokens met since the last call; return provisional -> token id."""
        r0, r1 = len(self.canon), len(self.raws)
        if r1 > r0:
            fresh = self.raws[r0:r1]
            slots = np.array(self.first[r0:r1], dtype=np.int64)
            canon = np.empty(r1 - r0, dtype=np.int64)
            for k in np.lexsort((np.array(fresh, dtype="S"), slots)).tolist():
                canon[k] = self.tokens.new(fresh[k])
            self.canon.extend(canon.tolist())
        return np.array(self.canon, dtype=np.int32)


_NONE = np.zeros(0, dtype=np.int32)
CHUNK_DOCS = 2048
"""Documents tokenised, then turned into postings, at once by :func:`index_arrays` (a
(term, document) pair never spans two chunks). Expanding all of a catalog at once kept
several int64 temporaries per token alive (peak RSS 334 MB at 10k skills, catalog
included); chunks of 2048 documents measured best (peak 205-225 MB now; 256, 1024 and
4096 were 10-20 MB worse). Arrays are byte-identical whatever the size (tested: 1, 3,
2048)."""


def index_arrays(
    skills: Sequence[Skill], vocab: dict[str, int], body_bytes: int | None
) -> tuple[NDArray[np.int32], list[FieldArrays], NDArray[np.int64], dict[str, int]]:
    """Per field (term, doc, tf) postings, lengths, surface-word document frequencies and
    surface word -> id, for ``skills`` (``vocab`` receives the terms; bodies are read up to
    ``body_bytes``, None: not at all).

    Each field's text becomes raw tokens (:func:`raw_token_bytes`) looked up in one
    :class:`RawIds` dict (a C-level hit, ~90 ns a token), and a chunk's (term, document)
    keys are counted with one numpy sort. Measured at 10k skills (/tmp/c10k, 4.3M tokens,
    3.4M distinct (document, token) pairs, so a per-document ``Counter`` saved only 20% of
    the expansion): the per-document ``Counter`` + id lists + ``array.extend`` it replaces
    took 1.3 s, this ~0.75 s; whole ``SearchIndex.build`` 3.5 -> 2.3 s (medians of five
    interleaved runs on a loaded 2-core machine), arrays byte-identical.
    """
    n = len(skills)
    tokens = Tokens(vocab)
    raw = RawIds(tokens)
    doc_len = np.zeros((len(FIELDS), n), dtype=np.int32)
    parts: list[list[FieldArrays]] = [[] for _ in FIELDS]
    stride = np.int64(max(n, 1))
    surface_counts: list[NDArray[np.int64]] = []
    for lo in range(0, n, CHUNK_DOCS):
        hi = min(n, lo + CHUNK_DOCS)
        ids, lens = _tokenise(skills, lo, hi, raw, body_bytes)
        canon = raw.settle()
        surface_keys: list[NDArray[np.int64]] = []
        for f in range(len(FIELDS)):
            rid = canon[np.array(ids[f], dtype=np.int32)]
            ids[f] = []
            docs = np.repeat(np.arange(lo, hi, dtype=np.int32), np.array(lens[f], dtype=np.int32))
            field, surface = _chunk_postings(tokens, rid, docs, n)
            del rid, docs
            parts[f].append(field)
            doc_len[f, lo:hi] = np.bincount(field[1] - lo, weights=field[2], minlength=hi - lo)
            surface_keys.append(surface)
        keys = sorted_unique(np.concatenate(surface_keys))
        surface_counts.append(np.bincount(keys // stride).astype(np.int64))
    surface_df = np.zeros(len(tokens.surface_ids), dtype=np.int64)
    for counts in surface_counts:
        surface_df[: len(counts)] += counts
    fields: list[FieldArrays] = []
    for f in range(len(FIELDS)):  # one field's chunks at a time, freed once joined
        chunks, parts[f] = parts[f] or [(_NONE, _NONE, _NONE)], []
        fields.append(tuple(np.concatenate([c[i] for c in chunks]) for i in range(3)))  # type: ignore[arg-type]
        del chunks
    return doc_len, fields, surface_df, fresh_keys(tokens.surface_ids)


def _tokenise(
    skills: Sequence[Skill], lo: int, hi: int, raw: RawIds, body_bytes: int | None
) -> tuple[list[list[int]], list[list[int]]]:
    """Provisional raw token ids of each field of documents ``lo..hi``, one flat list per
    field, and each document's token count per field."""
    get = raw.__getitem__
    ids: list[list[int]] = [[] for _ in FIELDS]
    lens: list[list[int]] = [[] for _ in FIELDS]
    width = len(FIELDS)
    for doc in range(lo, hi):
        skill = skills[doc]
        body = read_body(skill, body_bytes) if body_bytes is not None else ""
        for f, text in enumerate(field_texts(skill, body)):
            raw.slot = doc * width + f
            found = raw_token_bytes(text)
            ids[f].extend(map(get, found))
            lens[f].append(len(found))
    return ids, lens


def _chunk_postings(
    tokens: Tokens, rid: NDArray[np.int32], docs: NDArray[np.int32], n: int
) -> tuple[FieldArrays, NDArray[np.int64]]:
    """One field of one chunk: tokens ``rid`` (token ids) of documents ``docs`` as sorted
    (term, doc, tf) postings, and the distinct surface-word keys ``surface id * n + doc``.

    Per-token temporaries are int32 and made in place where possible (a chunk's body
    holds ~0.9M tokens at 10k skills)."""
    stride = np.int64(max(n, 1))
    terms, source, surface = _expand(tokens, rid)
    doc_of = docs[source]
    del source
    key = terms.astype(np.int64)
    del terms
    key *= stride
    key += doc_of
    key.sort()
    if len(key):
        fresh = np.empty(len(key), dtype=bool)
        fresh[0] = True
        np.not_equal(key[1:], key[:-1], out=fresh[1:])
        starts = np.flatnonzero(fresh)
        del fresh
        tf = np.diff(starts, append=len(key)).astype(np.int32)
        key = key[starts]
        del starts
    else:
        tf = _NONE
    has = surface >= 0
    skeys = surface[has].astype(np.int64)
    skeys *= stride
    skeys += doc_of[has]
    del has, surface, doc_of
    term_ids, doc_ids = np.divmod(key, stride)
    return (term_ids.astype(np.int32), doc_ids.astype(np.int32), tf), sorted_unique(skeys)


def _expand(
    tokens: Tokens, rid: NDArray[np.int32]
) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]:
    """Raw tokens ``rid`` expanded to their words: term ids, the position in ``rid`` of
    each, surface word ids (-1: none)."""
    ptr = np.frombuffer(tokens.ptr, dtype=np.int32)
    first = ptr[rid]
    lens = ptr[rid + 1]
    lens -= first
    source = np.repeat(np.arange(len(rid), dtype=np.int32), lens)
    starts = np.cumsum(lens, dtype=np.int32)
    starts -= lens
    del lens
    flat = np.arange(len(source), dtype=np.int32)
    flat -= starts[source]
    flat += first[source]
    del first, starts
    terms = np.frombuffer(tokens.terms, dtype=np.int32)[flat]
    surface = np.frombuffer(tokens.surface, dtype=np.int32)[flat]
    return terms, source, surface


def fresh_keys(mapping: dict[str, int]) -> dict[str, int]:
    """The same str -> id mapping (ids must be 0..n-1 in order) on new, packed objects."""
    if not mapping:
        return {}
    return dict(zip("\0".join(mapping).split("\0"), range(len(mapping)), strict=True))
