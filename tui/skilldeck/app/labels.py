"""Short labels the terminal UI shows for sources and paths."""

from __future__ import annotations

import os
from pathlib import Path

from skilldeck.core.model import Source

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
