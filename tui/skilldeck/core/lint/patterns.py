"""The text patterns lint's security and portability rules look for, shared with the
install review (which runs them over every text file of a skill)."""

from __future__ import annotations

import re

INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Invisible and bidirectional-control characters (SL301); also used on any text file."""
_JOINERS = frozenset("\u200c\u200d")

MACHINE_PATH = re.compile(
    r"(?<![\w.~$/-])(/Users/[^/\s'\"`)<>]+|/home/[^/\s'\"`)<>]+|[A-Za-z]:\\{1,2}[\w$.-][^\s'\"`)<>]*)"
)
"""An absolute, machine-specific path: /Users/…, /home/…, C:\\… (SL105)."""
PIPE_SHELL = re.compile(
    r"\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:ba|z|da|k|fi)?sh\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"
    r"|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*iex\b",
    re.IGNORECASE,
)
"""A download piped straight into a shell (SL302); also used on scripts and resources."""


def harmless_joiner(text: str, i: int) -> bool:
    """ZWJ/ZWNJ between non-ASCII characters (emoji sequences, Indic and Persian text)."""
    if text[i] not in _JOINERS:
        return False
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    return bool(before) and bool(after) and (ord(before) > 127 and ord(after) > 127)
