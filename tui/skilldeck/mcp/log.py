"""The MCP server's diagnostic log: stderr, since stdout carries the protocol."""

from __future__ import annotations

import sys

from skilldeck.core.safe_text import for_terminal


def log(message: str) -> None:
    """One diagnostic line on stderr (stdout carries the protocol).

    Control and bidirectional characters (from skill files or clients) are shown escaped,
    so the operator's terminal cannot be driven through the log; tracebacks keep their
    line breaks.
    """
    text = for_terminal(message, multiline=True)
    print(f"skilldeck serve: {text}", file=sys.stderr, flush=True)
