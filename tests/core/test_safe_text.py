"""The terminal sanitiser: escapes and bidi controls never reach a terminal raw."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skilldeck.core.safe_text import for_terminal, is_safe_name


def test_plain_text_unchanged() -> None:
    assert (
        for_terminal("pdf-forms: fill PDF forms — naïve ✓") == "pdf-forms: fill PDF forms — naïve ✓"
    )


def test_escape_sequences_shown_escaped() -> None:
    assert for_terminal("a\x1b[2Jb\x1b]0;title\x07") == "a\\x1b[2Jb\\x1b]0;title\\x07"
    assert for_terminal("c1\x9bm") == "c1\\x9bm"
    assert for_terminal("line\nnext\ttab") == "line\\nnext\\ttab"


def test_multiline_keeps_newlines_and_tabs_only() -> None:
    assert for_terminal("a\n\tb\x1b[31m\r", multiline=True) == "a\n\tb\\x1b[31m\\r"


def test_bidi_overrides_made_visible() -> None:
    assert for_terminal("abc\u202egnp.exe") == "abc<U+202E>gnp.exe"
    assert for_terminal("\u2066x\u2069") == "<U+2066>x<U+2069>"


@given(st.text())
def test_output_never_holds_controls(text: str) -> None:
    shown = for_terminal(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in shown)
    assert "\u202e" not in shown


def test_safe_names() -> None:
    assert is_safe_name("Bash(git push:*)")
    assert not is_safe_name("Bash\x1b[2J")
    assert not is_safe_name("")
    assert not is_safe_name("x" * 201)
