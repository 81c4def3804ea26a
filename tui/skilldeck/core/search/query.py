"""Stage 1 of a search: the query's words as weighted term ids.

Exact words weigh 1 (:data:`FILLER_WORDS`, the small talk of a request, weigh
:data:`FILLER_WEIGHT`); the word being typed also stands for its most common completions;
unknown words are replaced by their typo corrections (rapidfuzz), weighted by similarity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz, process

from skilldeck.core.search.analysis import ParsedQuery
from skilldeck.core.search.text import STOPWORDS, stem, words

if TYPE_CHECKING:
    from skilldeck.core.search.index import SearchIndex

PREFIX_WEIGHT = 0.8
PREFIX_EXPANSIONS = 6
MIN_PREFIX = 3
FUZZY_LIMIT = 2
CORRECTION_CACHE = 50_000
FILLER_WEIGHT = 0.3
"""Weight of a :data:`FILLER_WORDS` word (and of what stands for it)."""
FILLER_WORDS = frozenset(
    """
    able anything anyone best curious detailed everything find give good great help
    information info interested kind know latest let looking lot lots many much new
    possible provide really recommend recommendation recommendations show someone
    something specific suggest suggestion suggestions tell thing things trying way
    wondering
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
"""Words that requests are made of whatever they ask for ("can you help me find some
good information about..."): a match on them says little about which skill is meant.
Chosen as plain English small talk, not from any evaluation set; a query made of them
only still ranks by them (every word is down-weighted alike)."""


def _pool(index: SearchIndex, word: str) -> list[str]:
    """Alphabetic vocabulary words of 3+ letters with ``word``'s first letter and within two
    letters of its length, by length then alphabetically (memoised). Words sharing a first
    letter are contiguous in the sorted vocabulary, so one slice holds them all: no table
    to build when an index is loaded (grouping the whole vocabulary cost 14 ms at 10k)."""
    key = f"\0pool{word[0]}{len(word)}"
    cached = index.correction_cache.get(key)
    if cached is not None:
        return [w for w, _ in cached]
    surface = index.surface_df
    lo, hi = surface.prefix_range(word[0])
    by_size: dict[int, list[str]] = {}
    low, high = max(3, len(word) - 2), len(word) + 2
    for other in surface.words[lo:hi]:
        if low <= len(other) <= high and other.isalpha():
            by_size.setdefault(len(other), []).append(other)
    pool = _live(index, [w for size in range(low, high + 1) for w in by_size.get(size, ())])
    index.correction_cache[key] = [(w, 0.0) for w in pool]
    return pool


def corrections(index: SearchIndex, word: str) -> list[tuple[str, float]]:
    """Vocabulary words within a typo of ``word``: (word, similarity 0-1), best first.

    Only words of similar length (within two letters) and the same first letter are
    compared (``fuzz.ratio``, cutoff 80, 85 for four letters): typos rarely hit the
    first letter, and this keeps a correction under a millisecond at 100k skills. The
    answer is memoised per word, so a query typed one key at a time pays once a word.
    """
    cached = index.correction_cache.get(word)
    if cached is not None:
        return cached
    out: list[tuple[str, float]] = []
    if word.isalpha() and len(word) >= 4:
        cutoff = 85.0 if len(word) <= 4 else 80.0
        pool = _pool(index, word)
        found = process.extract(word, pool, scorer=fuzz.ratio, limit=8, score_cutoff=cutoff)
        if found:
            best = found[0][1]
            close = [(w, float(sc)) for w, sc, _ in found if sc >= best - 3]
            close.sort(key=lambda x: (-x[1], -index.surface_df.get(x[0], 0), x[0]))
            out = [(w, sc / 100.0) for w, sc in close[:FUZZY_LIMIT]]
    if len(index.correction_cache) > CORRECTION_CACHE:
        index.correction_cache.clear()
    index.correction_cache[word] = out
    return out


def _live(index: SearchIndex, found: list[str]) -> list[str]:
    """``found`` without words only dropped skills used (see
    :meth:`SearchIndex.reindex <skilldeck.core.search.index.SearchIndex.reindex>`); an
    index fully built since (no ``drift``) has none, so nothing is checked."""
    if not index.drift:
        return found
    return [w for w in found if _has_postings(index, stem(w))]


def _has_postings(index: SearchIndex, term: str) -> bool:
    tid = index.vocab.get(term)
    indptr = index.postings.indptr
    return tid is not None and tid + 1 < len(indptr) and bool(indptr[tid] != indptr[tid + 1])


def completions(index: SearchIndex, prefix: str) -> list[str]:
    """The most common vocabulary words starting with ``prefix`` (not itself)."""
    key = f"\0prefix{prefix}"
    cached = index.correction_cache.get(key)
    if cached is not None:
        return [w for w, _ in cached]
    surface = index.surface_df
    lo, hi = surface.prefix_range(prefix)
    if index.drift:  # most common first, skipping words no skill has any more
        found = []
        for i in np.lexsort((np.arange(hi - lo), -surface.counts[lo:hi])).tolist():
            found += _live(index, [surface.words[lo + i]])
            if len(found) == PREFIX_EXPANSIONS:
                break
    elif hi - lo > PREFIX_EXPANSIONS:
        counts = surface.counts[lo:hi]
        top = np.argpartition(-counts, PREFIX_EXPANSIONS - 1)[:PREFIX_EXPANSIONS]
        top = top[np.lexsort((top, -counts[top]))]
        found = [surface.words[lo + int(i)] for i in top]
    else:
        found = surface.words[lo:hi]
    found = [w for w in found if w != prefix]
    index.correction_cache[key] = [(w, 0.0) for w in found]
    return found


def word_of(label: str) -> str:
    """The query word a term's label comes from (``typed`` for ``typed→word`` and for the
    completion ``typed…rest``)."""
    return label.split("→", 1)[0].split("…", 1)[0]


def word_weight(word: str) -> float:
    """A query word's own weight: 1, or :data:`FILLER_WEIGHT` for a filler word."""
    return FILLER_WEIGHT if word in FILLER_WORDS else 1.0


def parse_query(index: SearchIndex, query: str) -> ParsedQuery:
    """Stage 1: query term ids with weights, labels, settled and typed parts (see
    :meth:`SearchIndex.query_terms <skilldeck.core.search.index.SearchIndex.query_terms>`)."""
    all_words = words(query)
    typing = bool(query) and not query[-1].isspace()
    parsed = ParsedQuery({}, {}, 0, {}, {})
    vocab = index.vocab
    surface = index.surface_df

    def add(word: str, weight: float, label: str, part: dict[int, float]) -> bool:
        # a term only dropped skills had (no postings) is unknown, as after a full build
        if not _has_postings(index, stem(word)):
            return False
        tid = vocab[stem(word)]
        if weight > parsed.terms.get(tid, 0.0):
            parsed.terms[tid] = weight
            parsed.labels[tid] = label
        if weight > part.get(tid, 0.0):
            part[tid] = weight
        return True

    for i, word in enumerate(all_words):
        last = typing and i == len(all_words) - 1
        if word in STOPWORDS:
            if last and len(all_words) == 1 and len(word) >= MIN_PREFIX:
                # one common word being typed ("use"): it stands for its completions
                # ("user", "useful") as "us" stands for the names it starts; a query of
                # common words only otherwise matches nothing (SearchResponse.message)
                for other in completions(index, word):
                    add(other, PREFIX_WEIGHT, f"{word}…{other[len(word) :]}", parsed.tail)
            continue
        part = parsed.tail if last else parsed.fixed
        base = word_weight(word)
        exact = add(word, base, word, part)
        if last and len(word) >= MIN_PREFIX and not _live(index, [word] if word in surface else []):
            expansions = completions(index, word)
            for other in expansions:
                add(other, base * PREFIX_WEIGHT, f"{word}…{other[len(word) :]}", part)
            if expansions:
                continue
        if not exact:
            fixes = corrections(index, word)
            for other, similarity in fixes:
                add(other, base * similarity * similarity, f"{word}→{other}", part)
            if not fixes:
                parsed.unknown += 1
    return parsed
