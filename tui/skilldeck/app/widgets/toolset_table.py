"""Toolset tools a skill ships (``toolsets`` in its frontmatter) and whether they may mount."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from skilldeck.app.labels import clean, literal

if TYPE_CHECKING:
    from skilldeck.core.execution.toolsets import ToolsetToolStatus

STATE_STYLE = {
    "allowlist": "green",
    "approved": "green",
    "pending": "bold yellow",
    "denied": "bold red",
    "not approved": "yellow",
    "exec off": "dim",
    "error": "bold red",
}
"""How each approval state of :data:`~skilldeck.core.execution.toolsets.STATES` is shown."""


class ToolsetTable(DataTable[Text]):
    """The toolset tools of the highlighted skill with their approval state for the
    current session. Enter on a row asks to review its module (:class:`Review`)."""

    DEFAULT_CSS = """
    ToolsetTable {
        height: auto;
        max-height: 60%;
        border-top: solid $primary-background-lighten-2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "review",
            "Review module",
            id="toolsets.review",
            tooltip="Read the toolset module and its hash, then approve or deny it",
        ),
    ]

    class Review(Message):
        """The operator wants to read (and decide on) the module of a toolset tool."""

        def __init__(self, status: ToolsetToolStatus) -> None:
            super().__init__()
            self.status = status
            """The row chosen."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.statuses: list[ToolsetToolStatus] = []
        """The statuses shown, in row order."""

    def on_mount(self) -> None:
        self.add_columns("Toolset tool", "State", "Description", "Module")

    def show(self, rows: list[ToolsetToolStatus] | None, session_id: str | None = None) -> None:
        """Fill the table; None means still reading."""
        self.clear()
        self.statuses = list(rows or [])
        if rows is None:
            self.border_title = "Toolset tools"
            self.add_row(Text("reading toolsets…", style="dim"), Text(""), Text(""), Text(""))
            return
        for row in self.statuses:
            name = row.name or f"{row.skill} ({row.module})"
            note = row.error if row.state == "error" else row.description
            self.add_row(
                literal(name, style="bold"),
                Text(row.state, style=STATE_STYLE.get(row.state, "")),
                literal(note or "-", style="red" if row.state == "error" else ""),
                literal(row.module, style="dim"),
            )
        where = f"session {clean(session_id)}" if session_id else "no session selected"
        self.border_title = f"Toolset tools · {where} · enter: review module"

    def action_review(self) -> None:
        """Announce the highlighted row's module for review."""
        if 0 <= self.cursor_row < len(self.statuses):
            self.post_message(self.Review(self.statuses[self.cursor_row]))
