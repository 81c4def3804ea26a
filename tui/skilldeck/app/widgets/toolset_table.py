"""Toolset tools a skill ships (``toolsets`` in its frontmatter) and whether they may mount."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable
from textual.worker import get_current_worker

from skilldeck.app.colors import WARNING, WARNING_STYLE
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean, literal
from skilldeck.core.errors import SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.execution import ToolsetToolStatus
    from skilldeck.core.model import Skill
    from skilldeck.core.sessions import SessionStore

STATE_STYLE = {
    "allowlist": "green",
    "approved": "green",
    "pending": WARNING_STYLE,
    "denied": "bold red",
    "not approved": WARNING,
    "exec off": "dim",
    "error": "bold red",
}
"""How each approval state of :data:`~skilldeck.core.execution.toolsets.STATES` is shown."""


class ToolsetTable(UsesDeck, DataTable[Text]):
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
        self._skill: Skill | None = None

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

    def load(
        self,
        skill: Skill | None,
        settings: Settings,
        session_id: str | None,
        store: Callable[[], SessionStore],
    ) -> None:
        """Follow ``skill``: read its rows in a thread worker when it declares toolsets
        (the modules are read and hashed; approvals come from ``store()`` for
        ``session_id``). Rows read for a skill no longer followed are dropped."""
        self._skill = skill
        if skill is not None and skill.toolsets:
            self._read(skill, settings, session_id, store)

    @work(thread=True, exclusive=True, group="toolsets", exit_on_error=False)
    def _read(
        self,
        skill: Skill,
        settings: Settings,
        session_id: str | None,
        store: Callable[[], SessionStore],
    ) -> None:
        from skilldeck.core.execution import toolset_status

        worker = get_current_worker()
        try:
            rows = toolset_status(settings, skill, store() if session_id else None, session_id)
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._rows_read, skill, rows, session_id)

    def _rows_read(
        self, skill: Skill, rows: list[ToolsetToolStatus], session_id: str | None
    ) -> None:
        if self._skill is skill:
            self.show(rows, session_id)

    def action_review(self) -> None:
        """Announce the highlighted row's module for review."""
        if 0 <= self.cursor_row < len(self.statuses):
            self.post_message(self.Review(self.statuses[self.cursor_row]))
