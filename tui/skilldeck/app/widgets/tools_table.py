"""Tools a skill refers to: available, missing or hidden; required or not; source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from skilldeck.app.colors import WARNING
from skilldeck.app.labels import clean

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolAvailability

STATUS_STYLE = {"available": "green", "missing": "bold red", "hidden": WARNING}

HEADERS = ("Tool", "Status", "Required", "Source")
STATUS_WIDTH = 9
"""``available``, the longest status."""
REQUIRED_WIDTH = 8
"""``required`` / ``optional``."""
MIN_SOURCE = 10
"""Cells the Source column keeps before tool names are shortened (``tools-file``)."""


def cut(value: str, width: int, style: str = "") -> Text:
    """``value`` in at most ``width`` cells, ending in "…" when it is cut."""
    text = Text(value, style=style, no_wrap=True, overflow="ellipsis")
    text.truncate(max(1, width), overflow="ellipsis")
    return text


class ToolsTable(DataTable[Text]):
    """Tool availability of the highlighted skill. The columns are sized to the pane on
    every fill and resize, so the Source column is never cut off at the edge: long tool
    names and sources end in "…" instead."""

    DEFAULT_CSS = """
    ToolsTable {
        height: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._availability: ToolAvailability | None = None
        self._note = ""

    def show(self, availability: ToolAvailability | None, loading: bool = False) -> None:
        """Fill the table from one skill's availability."""
        self._availability = availability
        if availability is None:
            self._note = "checking tools…" if loading else "no tool information"
        elif not availability.entries:
            self._note = "no tools referenced"
        else:
            self._note = ""
        self._fill()

    def on_resize(self) -> None:
        """Size the columns to the new width."""
        self._fill()

    def _fill(self) -> None:
        self.clear(columns=True)
        availability = self._availability
        if self._note or availability is None:
            self.add_columns(*HEADERS)
            self.add_row(Text(self._note, style="dim"), Text(""), Text(""), Text(""))
            return
        entries = availability.entries
        names = [clean(e.name) for e in entries]
        sources = [clean(e.source or "-") for e in entries]
        pad = 2 * self.cell_padding
        room = self.scrollable_content_region.width or 48
        fixed = STATUS_WIDTH + REQUIRED_WIDTH + 4 * pad
        longest_source = max(len(HEADERS[3]), *(len(s) for s in sources))
        tool = max(len(HEADERS[0]), *(len(n) for n in names))
        tool = max(len(HEADERS[0]), min(tool, room - fixed - min(MIN_SOURCE, longest_source)))
        source = max(len(HEADERS[3]), min(longest_source, room - fixed - tool))
        self.add_column(HEADERS[0], width=tool)
        self.add_column(HEADERS[1], width=STATUS_WIDTH)
        self.add_column(HEADERS[2], width=REQUIRED_WIDTH)
        self.add_column(HEADERS[3], width=source)
        for entry, name, where in zip(entries, names, sources, strict=True):
            self.add_row(
                cut(name, tool, "bold"),
                Text(entry.status, style=STATUS_STYLE.get(entry.status, "")),
                Text(
                    "required" if entry.required else "optional",
                    style="" if entry.required else "dim",
                ),
                cut(where, source, "dim"),
            )
