"""SL202: descriptions so alike that matching cannot tell the skills apart.

Similarity is the Jaccard index of the descriptions' content-word sets. Pairs are found with
*prefix filtering* (Chaudhuri et al., 2006): order every word by rarity, keep for each
skill only the prefix of its rarest ``|A| - ceil(t*|A|) + 1`` words, and compare only skills
whose prefixes share a word. Two sets with Jaccard >= t always do, so the result is exact
while the work stays near O(n·k) for real catalogs (rare words have short posting lists).
Posting lists and candidates are bounded so that a catalog of thousands of identical
descriptions cannot go quadratic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from skilldeck.core.model import Skill

_WORD = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    """a about above after again all also an and any are as at be been before being below
    between both but by can could did do does doing down during each few for from further
    had has have having he her here hers how i if in into is it its itself just me more most
    my no nor not now of off on once only or other our ours out over own same she should so
    some such than that the their theirs them then there these they this those through to
    too under until up very was we were what when where which while who whom why will with
    would you your yours use used uses using user users skill skills when whenever asks ask
    e g eg ie etc via""".split()  # noqa: SIM905
)


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Lowercased words of ``text`` without stopwords or one-letter tokens, plural 's' cut."""
    return frozenset(
        _stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS
    )


def _stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard index of two sets (0 when both are empty)."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


@dataclass(frozen=True, slots=True)
class Overlap:
    """The most similar other skill for one skill.

    Attributes:
        other: The other skill.
        score: Jaccard index of the two descriptions' word sets.
        count: How many skills reach the threshold in all.
    """

    other: Skill
    score: float
    count: int


MIN_WORDS = 3
#: Above this many skills, a candidate must share two prefix words, not one (approximate,
#: but keeps 100k-skill catalogs fast; real near-duplicates share most of their words).
EXACT_LIMIT = 20000


def find_overlaps(
    skills: list[Skill], threshold: float = 0.8, max_candidates: int = 200
) -> dict[Path, Overlap]:
    """For each skill, its most similar peer at or above ``threshold`` (keyed by path).

    Exact (prefix filtering) up to :data:`EXACT_LIMIT` skills; beyond it, pairs must share
    two of their rarest words. At most ``max_candidates`` peers are verified per skill.
    """
    threshold = min(max(threshold, 0.01), 1.0)
    words = [content_words(s.description) for s in skills]
    sizes = [len(ws) for ws in words]
    df: Counter[str] = Counter(w for ws in words for w in ws)
    need = 2 if len(skills) > EXACT_LIMIT else 1
    postings: dict[str, list[int]] = {}
    best: dict[int, tuple[float, int]] = {}
    counts: Counter[int] = Counter()
    for i, ws in enumerate(words):
        size = sizes[i]
        if size < MIN_WORDS:
            continue
        ordered = sorted(ws, key=lambda w: (df[w], w)) if size > 1 else list(ws)
        prefix = ordered[: size - math.ceil(threshold * size) + 1]
        low, high = threshold * size, size / threshold
        shared: Counter[int] = Counter()
        for w in prefix:
            plist = postings.get(w)
            if plist:
                for j in plist[-max_candidates:]:
                    if low <= sizes[j] <= high:
                        shared[j] += 1
        required = min(need, len(prefix))
        verified = 0
        for j, n in shared.items():
            if n < required:
                continue
            verified += 1
            if verified > max_candidates:
                break
            score = jaccard(ws, words[j])
            if score >= threshold:
                for a, b in ((i, j), (j, i)):
                    counts[a] += 1
                    if score > best.get(a, (-1.0, 0))[0]:
                        best[a] = (score, b)
        for w in prefix:
            postings.setdefault(w, []).append(i)
    return {skills[i].path: Overlap(skills[j], score, counts[i]) for i, (score, j) in best.items()}


def overlaps_with(skill: Skill, others: list[Skill], threshold: float = 0.8) -> Overlap | None:
    """The most similar of ``others`` to ``skill`` at or above ``threshold`` (linear scan)."""
    mine = content_words(skill.description)
    if len(mine) < MIN_WORDS:
        return None
    found: list[tuple[float, Skill]] = []
    for other in others:
        if other.path == skill.path:
            continue
        theirs = content_words(other.description)
        if len(theirs) < MIN_WORDS:
            continue
        score = jaccard(mine, theirs)
        if score >= threshold:
            found.append((score, other))
    if not found:
        return None
    score, other = max(found, key=lambda pair: pair[0])
    return Overlap(other, score, len(found))
