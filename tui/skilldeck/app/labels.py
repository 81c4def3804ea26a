"""Short labels the terminal UI shows for sources and paths."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual.markup import escape as escape_markup

from skilldeck.core.model import Source
from skilldeck.core.safe_text import for_terminal

SOURCE_BADGE = {
    Source.BUNDLED: "bundled",
    Source.USER: "user",
    Source.PROJECT: "project",
    Source.EXPLICIT: "explicit",
}


def short_path(path: Path) -> str:
    """``path`` with ``SKILLDECK_HOME`` or the home folder written as a variable or ``~``."""
    text = str(path)
    state_home = os.environ.get("SKILLDECK_HOME")
    if state_home and text.startswith(state_home.rstrip(os.sep) + os.sep):
        return "$SKILLDECK_HOME" + text[len(state_home.rstrip(os.sep)) :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return text


def clean(value: object) -> str:
    """``value`` as one line of text with control characters shown escaped (``\\x1b``).

    Names, descriptions, paths and messages come from folders anyone could have written;
    pass them through this (or :func:`literal`) before they reach a widget.
    """
    return for_terminal(str(value))


def literal(value: object, style: str = "") -> Text:
    """``value`` as Rich text shown exactly: markup such as ``[bold]`` is not parsed and
    control characters are shown escaped."""
    return Text(clean(value), style=style)


def markup_free(value: object) -> str:
    """``value`` for places that parse Textual markup (notifications, palette help):
    control characters escaped and square brackets escaped."""
    return escape_markup(clean(value))
