"""An Input whose placeholder is the longest of several wordings that fits its width."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual.widgets import Input


def fitting(wordings: Sequence[str], width: int) -> str:
    """The first of ``wordings`` (longest first) that fits ``width`` cells, else the last:
    a placeholder is never cut in the middle of a word."""
    for wording in wordings:
        if cell_len(wording) <= width:
            return wording
    return wordings[-1] if wordings else ""


class FittedInput(Input):
    """An Input that shortens its placeholder on narrow terminals.

    Args:
        placeholders: Wordings from the longest to the shortest; the first is shown until
            the box is laid out.
        *args, **kwargs: As for Input.
    """

    def __init__(self, *args: Any, placeholders: Sequence[str] = (), **kwargs: Any) -> None:
        if placeholders:
            kwargs["placeholder"] = placeholders[0]
        super().__init__(*args, **kwargs)
        self._placeholders = tuple(placeholders)

    def on_resize(self) -> None:
        """Pick the wording that fits the new width."""
        if self._placeholders:
            self.placeholder = fitting(self._placeholders, self.content_region.width)
