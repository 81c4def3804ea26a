"""Text processing for search: tokenising, stopwords, a light stemmer, headings.

The stemmer is a small suffix stripper in the spirit of Harman's "S" stemmer extended
with ``-ing``/``-ed``/``-ion``/``-ment`` and a final ``-e`` drop, so that ``write``,
``writes``, ``writing`` and ``written``-like forms of one verb meet on one stem
(``writ``), and ``deploy``/``deploying``/``deployment`` on ``deploy``. Porter was not
used: it over-conflates (``general``/``generous``) and is much longer to carry; typos
and the remaining morphology are handled by the fuzzy correction step instead.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_MIXED = re.compile(r"[A-Za-z0-9]+")
RAW_TOKEN = _MIXED
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)

STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "etc",
        "few",
        "for",
        "from",
        "further",
        "get",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "like",
        "make",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "need",
        "needs",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "per",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "us",
        "use",
        "used",
        "uses",
        "using",
        "very",
        "via",
        "want",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "skill",
        "skills",
        "task",
        "tasks",
        "e",
        "g",
        "ie",
        "eg",
    ]
)


def _has_vowel(text: str) -> bool:
    return any(c in "aeiouy" for c in text)


def stem_word(word: str) -> str:
    """Light stem of a lower-case word (see the module docstring for the rules)."""
    w = word
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed", "ion", "ment"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


stem = lru_cache(maxsize=8192)(stem_word)
""":func:`stem_word` with a small memo for queries and triggers (index builds call
:func:`stem_word` once per distinct token and need no memo)."""

_NOT_ALNUM = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122) else 32 for c in range(256)
)


def raw_token_bytes(text: str) -> list[bytes]:
    """The runs of ASCII letters and digits of ``text`` (as :data:`RAW_TOKEN` finds them),
    as bytes: a byte translation and a split, several times faster than the regex."""
    return text.encode("utf-8", "replace").translate(_NOT_ALNUM).split()


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words, camelCase parts added after the whole word."""
    out: list[str] = []
    for raw in _MIXED.findall(text):
        low = raw.lower()
        out.append(low)
        if not raw.islower() and not raw.isupper():
            parts = _CAMEL.findall(raw)
            if len(parts) > 1:
                out.extend(p.lower() for p in parts)
    return out


def common_only(query: str) -> list[str]:
    """The words of ``query`` when every one is a stopword (``use when``: words nearly
    every description has, never indexed), else []."""
    found = words(query)
    return found if found and all(w in STOPWORDS for w in found) else []


def tokenize(text: str) -> list[str]:
    """Index/query tokens: words minus stopwords, stemmed."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


HEADING_SCAN_HASHES = 128
"""Bodies with at most this many ``#`` find their headings by trying :data:`_HEADING` only
near each ``#``; others scan the whole text (see :func:`headings`)."""


def headings(body: str) -> list[str]:
    """Markdown ATX headings of a body, in order (what ``_HEADING.finditer`` finds).

    A heading match starts at most 3 characters before its first ``#``, so the pattern is
    only tried there (``Pattern.match`` at a position still honours ``^``): the same list
    (tested against ``finditer`` on random texts). Measured per body (best of 5): 41 ->
    27 us on the 10k synthetic bodies (~4.5 KB), 131 -> 90 us on the 372 real skills (~7.6
    KB, 38 ``#`` each at the median); a body with more ``#`` than the bound is scanned
    (each ``#`` costs up to four anchored tries).
    """
    if body.count("#") > HEADING_SCAN_HASHES:
        return [m.group(1) for m in _HEADING.finditer(body)]
    out: list[str] = []
    match = _HEADING.match
    pos = 0
    at = body.find("#")
    while at >= 0:
        found = None
        for start in range(max(pos, at - 3), at + 1):
            found = match(body, start)
            if found is not None:
                break
        if found is None:
            at = body.find("#", at + 1)
        else:
            out.append(found.group(1))
            pos = found.end()
            at = body.find("#", pos)
    return out


def normalize(text: str) -> str:
    """Lower-case words joined by single spaces (for fuzzy name matching)."""
    return " ".join(_WORD.findall(text.lower()))
