"""Approve or deny a tool the operator typed (Sessions: ``t``, a name, Enter)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Static

from skilldeck.app.dialogs.guarded import GuardedDialog
from skilldeck.app.labels import clean

APPROVE, DENY = "approve", "deny"
"""What the dialog answers (None: the operator decided nothing)."""


class ToolDecisionDialog(GuardedDialog[str | None]):
    """Approve or deny ``tool`` for a session; dismisses with :data:`APPROVE`,
    :data:`DENY` or None (keys typed before it was shown are ignored)."""

    DEFAULT_CSS = """
    ToolDecisionDialog {
        align: center middle;
    }
    ToolDecisionDialog > Vertical {
        width: 64;
        max-width: 95%;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 1 2;
    }
    ToolDecisionDialog #title {
        text-style: bold;
        margin-bottom: 1;
    }
    ToolDecisionDialog Horizontal {
        height: auto;
        align-horizontal: right;
        margin-top: 1;
    }
    ToolDecisionDialog Button {
        margin-left: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="tool-decision.cancel"),
        Binding("a", "approve", "Approve", id="tool-decision.approve"),
        Binding("d", "deny", "Deny", id="tool-decision.deny"),
    ]

    def __init__(self, tool: str, session_id: str) -> None:
        super().__init__()
        self.tool = tool
        """The tool as typed."""
        self.session_id = session_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Tool {clean(self.tool)}", id="title", markup=False)
            yield Static(
                f"Approve or deny {clean(self.tool)} in session {clean(self.session_id)}?",
                id="question",
                markup=False,
            )
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel")
                yield Button("Deny (d)", id="deny", variant="error")
                yield Button("Approve (a)", id="approve", variant="success")

    def on_mount(self) -> None:
        self.focus_after_guard(self.query_one("#approve", Button))

    def action_approve(self) -> None:
        """Approve the tool."""
        self.dismiss(APPROVE)

    def action_deny(self) -> None:
        """Deny the tool."""
        self.dismiss(DENY)

    def action_cancel(self) -> None:
        """Decide nothing."""
        self.dismiss(None)
