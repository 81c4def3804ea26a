"""Tests for the token estimate."""

from __future__ import annotations

import math

from skilldeck.core.tokens import estimate_tokens


def test_empty_is_zero() -> None:
    assert estimate_tokens("") == 0


def test_prose_uses_chars_over_four() -> None:
    text = "internationalization " * 10
    assert estimate_tokens(text) == math.ceil(len(text) / 4)


def test_short_words_use_word_rate() -> None:
    text = "a b c d e f g h i j"
    assert estimate_tokens(text) == math.ceil(10 * 1.3)


def test_rounds_up_and_is_positive_for_any_text() -> None:
    assert estimate_tokens("x") == 2
    assert estimate_tokens(" ") == 1


def test_monotonic_in_appended_text() -> None:
    base = "Read the file, then run the tests.\n"
    assert estimate_tokens(base * 2) >= estimate_tokens(base)
    assert estimate_tokens(base * 100) > estimate_tokens(base * 10)
