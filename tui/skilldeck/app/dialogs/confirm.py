"""A yes/no question."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Static

from skilldeck.app.dialogs.guarded import GuardedDialog


class ConfirmDialog(GuardedDialog[bool]):
    """Ask before doing something that writes state; dismisses with True or False (keys
    typed before it was shown are ignored, see :class:`GuardedDialog`)."""

    DEFAULT_CSS = """
    ConfirmDialog {
        align: center middle;
    }
    ConfirmDialog > Vertical {
        width: 64;
        max-width: 95%;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 1 2;
    }
    ConfirmDialog #title {
        text-style: bold;
        margin-bottom: 1;
    }
    ConfirmDialog Horizontal {
        height: auto;
        align-horizontal: right;
        margin-top: 1;
    }
    ConfirmDialog Button {
        margin-left: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel", id="confirm.cancel"),
        Binding("y", "confirm", "Confirm", id="confirm.yes"),
    ]

    def __init__(self, question: str, *, confirm: str = "OK", title: str = "Confirm") -> None:
        super().__init__()
        self._question = question
        self._confirm = confirm
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title, id="title")
            yield Static(self._question, id="question", markup=False)
            with Horizontal():
                yield Button("Cancel (n)", id="cancel")
                yield Button(f"{self._confirm} (y)", id="confirm", variant="warning")

    def on_mount(self) -> None:
        self.focus_after_guard(self.query_one("#confirm", Button))

    def action_cancel(self) -> None:
        """Answer no."""
        self.dismiss(False)

    def action_confirm(self) -> None:
        """Answer yes."""
        self.dismiss(True)
