"""Make untrusted text safe to show on a terminal.

Folder names, frontmatter values, tool names sent by MCP clients and file contents can
hold escape sequences (clear the screen, set the window title, recolour the terminal) or
bidirectional overrides that make text read differently from what it is. Every text face
passes such text through :func:`for_terminal` before printing it; JSON output does not need
it (JSON escapes control characters itself).
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_BLOCK = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\x1b"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """``text`` with C0/C1 control characters (ESC included) shown escaped (``\\x1b``) and
    bidirectional controls made visible (``<U+202E>``).

    Args:
        text: Untrusted text.
        multiline: Keep newlines and tabs (a file body); otherwise they are escaped too
            (a name, a table cell).
    """
    pattern = _UNSAFE_BLOCK if multiline else _UNSAFE_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_shown, text)


def is_safe_name(text: str, max_length: int = 200) -> bool:
    """True for a name (tool, skill, script) with no control or bidi characters and at most
    ``max_length`` characters."""
    return 0 < len(text) <= max_length and _UNSAFE_LINE.search(text) is None
