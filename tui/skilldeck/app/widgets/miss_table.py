"""The silent misses: skill, request, session, when; Enter asks to open the skill with the
request in the search box."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from skilldeck.app.labels import clean
from skilldeck.core.usage import SilentMiss

REQUEST_WIDTH = 60
"""Characters of a request shown in its cell (the whole text goes to the search box)."""


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment).strftime("%m-%d %H:%M")


class MissTable(DataTable[Text | str]):
    """One row per (skill, session) silent miss, newest first."""

    DEFAULT_CSS = """
    MissTable {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open_miss",
            "Open skill",
            id="usage.open-miss",
            tooltip="Show the skill on the main screen with this request in the search box",
        ),
    ]

    class Open(Message):
        """Open ``skill`` with ``query`` in the search box."""

        def __init__(self, skill: str, query: str) -> None:
            super().__init__()
            self.skill = skill
            self.query = query

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._misses: list[SilentMiss] = []

    def on_mount(self) -> None:
        self.add_columns("skill", "request", "session", "when")

    @property
    def misses(self) -> list[SilentMiss]:
        """The misses shown, top first."""
        return list(self._misses)

    def show(self, misses: list[SilentMiss]) -> None:
        """Show ``misses`` (newest first), keeping the cursor on the same row if it is
        still there."""
        keep = self._misses[self.cursor_row] if self._misses and self.row_count else None
        self._misses = list(misses)
        self.clear()
        for miss in self._misses:
            query = miss.requests[-1][0]
            more = f" (+{len(miss.requests) - 1})" if len(miss.requests) > 1 else ""
            shown = clean(query)
            if len(shown) > REQUEST_WIDTH:
                shown = shown[: REQUEST_WIDTH - 1] + "…"
            self.add_row(
                Text(clean(miss.skill), style="bold"),
                Text(shown + more),
                Text(clean(miss.session[:12]), style="dim"),
                _when(miss.last),
            )
        if keep is not None:
            for i, miss in enumerate(self._misses):
                if (miss.skill, miss.session) == (keep.skill, keep.session):
                    self.move_cursor(row=i)
                    break

    def action_open_miss(self) -> None:
        """Ask to open the highlighted miss's skill with its latest request."""
        if not self._misses or self.cursor_row >= len(self._misses):
            return
        miss = self._misses[self.cursor_row]
        self.post_message(self.Open(miss.skill, miss.requests[-1][0]))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_miss()
