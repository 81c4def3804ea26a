"""Tools a skill refers to: available, missing or hidden; required or not; source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from skilldeck.app.labels import literal

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolAvailability

STATUS_STYLE = {"available": "green", "missing": "bold red", "hidden": "yellow"}


class ToolsTable(DataTable[Text]):
    """Tool availability of the highlighted skill."""

    DEFAULT_CSS = """
    ToolsTable {
        height: 1fr;
    }
    """

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("Tool", "Status", "Required", "Source")

    def show(self, availability: ToolAvailability | None, loading: bool = False) -> None:
        """Fill the table from one skill's availability."""
        self.clear()
        if availability is None:
            note = "checking tools…" if loading else "no tool information"
            self.add_row(Text(note, style="dim"), Text(""), Text(""), Text(""))
            return
        if not availability.entries:
            self.add_row(Text("no tools referenced", style="dim"), Text(""), Text(""), Text(""))
            return
        for entry in availability.entries:
            self.add_row(
                literal(entry.name, style="bold"),
                Text(entry.status, style=STATUS_STYLE.get(entry.status, "")),
                Text(
                    "required" if entry.required else "optional",
                    style="" if entry.required else "dim",
                ),
                literal(entry.source or "-", style="dim"),
            )
