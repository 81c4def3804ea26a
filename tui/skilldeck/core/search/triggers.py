"""Explicit activation: ``triggers`` keywords/verbs/patterns and explicit mentions.

Keywords and verbs are matched as whole words (compared stem by stem, so ``deploy`` also
fires on ``deploying``) through one phrase table shared by all skills, so the cost of a
query does not grow with the number of skills. Patterns are regexes compiled once; a bad
pattern is skipped and remembered in :attr:`TriggerTable.errors`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skilldeck.core.search.text import stem, words

_DOLLAR = re.compile(r"(?<![\w$])\$([A-Za-z0-9][A-Za-z0-9_.:-]*)")
_USE_THE = re.compile(
    r"\buse\s+(?:the\s+)?[`'\"]?([A-Za-z0-9][A-Za-z0-9_.:-]*)[`'\"]?\s+skill\b", re.IGNORECASE
)
MAX_PHRASE_WORDS = 6
MAX_PATTERN_INPUT = 2000


def mentioned_names(query: str) -> list[str]:
    """Skill names explicitly requested: ``$name`` or "use the name skill" (lower-cased)."""
    names = [m.group(1) for m in _DOLLAR.finditer(query)]
    names += [m.group(1) for m in _USE_THE.finditer(query)]
    return [n.lower().rstrip(".:") for n in names]


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(text))[:MAX_PHRASE_WORDS]


@dataclass
class TriggerTable:
    """All skills' triggers, for matching a query against every skill at once."""

    phrases: dict[tuple[str, ...], dict[int, str]] = field(default_factory=dict)
    patterns: dict[int, list[tuple[str, re.Pattern[str]]]] = field(default_factory=dict)
    errors: list[tuple[int, str, str]] = field(default_factory=list)

    def add(
        self, doc: int, keywords: tuple[str, ...], verbs: tuple[str, ...], patterns: tuple[str, ...]
    ) -> None:
        """Register one skill's triggers under document id ``doc``."""
        for text in (*keywords, *verbs):
            key = _phrase(str(text))
            if key:
                self.phrases.setdefault(key, {})[doc] = str(text)
        compiled: list[tuple[str, re.Pattern[str]]] = []
        for pattern in patterns:
            try:
                compiled.append((str(pattern), re.compile(str(pattern), re.IGNORECASE)))
            except (re.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
                self.errors.append((doc, str(pattern), str(exc)))
        if compiled:
            self.patterns[doc] = compiled

    def remove(self, doc: int) -> None:
        """Forget one document's triggers."""
        for key in [k for k, docs in self.phrases.items() if doc in docs]:
            del self.phrases[key][doc]
            if not self.phrases[key]:
                del self.phrases[key]
        self.patterns.pop(doc, None)
        self.errors = [e for e in self.errors if e[0] != doc]

    def remap(self, mapping: dict[int, int]) -> None:
        """Renumber documents (``mapping`` old -> new; missing ones are dropped)."""
        self.phrases = {
            k: {mapping[d]: t for d, t in docs.items() if d in mapping}
            for k, docs in self.phrases.items()
        }
        self.phrases = {k: v for k, v in self.phrases.items() if v}
        self.patterns = {mapping[d]: p for d, p in self.patterns.items() if d in mapping}
        self.errors = [(mapping[d], p, e) for d, p, e in self.errors if d in mapping]

    def match(self, query: str) -> dict[int, list[str]]:
        """Documents whose triggers fire on ``query``, with what fired."""
        hits: dict[int, list[str]] = {}
        if self.phrases:
            stems = [stem(w) for w in words(query)]
            for i in range(len(stems)):
                for j in range(i + 1, min(len(stems), i + MAX_PHRASE_WORDS) + 1):
                    docs = self.phrases.get(tuple(stems[i:j]))
                    if docs:
                        for doc, text in docs.items():
                            hits.setdefault(doc, []).append(text)
        if self.patterns:
            text = query[:MAX_PATTERN_INPUT]
            for doc, compiled in self.patterns.items():
                for source, regex in compiled:
                    if regex.search(text):
                        hits.setdefault(doc, []).append(f"/{source}/")
        return hits
