"""Show one resource file of a skill, read safely through the workspace's write door
(tier 3: confined to the skill folder, capped, the read recorded as the operator's)."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean
from skilldeck.app.widgets.preview_pane import language_for
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal


class ResourceDialog(UsesDeck, ModalScreen[None]):
    """A read-only view of one file inside the skill folder."""

    DEFAULT_CSS = """
    ResourceDialog {
        align: center middle;
    }
    ResourceDialog > Vertical {
        width: 90%;
        height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    ResourceDialog #title {
        text-style: bold;
    }
    ResourceDialog #facts {
        color: $text-muted;
        height: auto;
    }
    ResourceDialog TextArea {
        height: 1fr;
        visibility: hidden;  /* until there is a text: an empty one numbers its one line */
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="resource.close"),
    ]

    def __init__(self, skill: Skill, rel_path: str) -> None:
        super().__init__()
        self.skill = skill
        self.rel_path = rel_path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                f"{clean(self.skill.name)} / {clean(self.rel_path)}", id="title", markup=False
            )
            yield Static("reading…", id="facts")
            yield TextArea(
                "", read_only=True, show_line_numbers=True, soft_wrap=False, id="content"
            )

    def on_mount(self) -> None:
        self._read()

    @work(exclusive=True, exit_on_error=False)
    async def _read(self) -> None:
        facts = self.query_one("#facts", Static)
        door = self.deck.workspace.actions
        try:
            read = await asyncio.to_thread(
                door.read, self.skill, self.rel_path, actor="operator", source="tui"
            )
        except SkilldeckError as exc:
            facts.update(Text(f"{exc.code.value}: {clean(exc.message)}", style="bold red"))
            self.notify(exc.message, title="Cannot open file", severity="error")
            return
        resource = read.resource
        facts.update(
            f"{resource.size} bytes · {resource.mime}" + (" · binary" if resource.binary else "")
        )
        area = self.query_one("#content", TextArea)
        if resource.binary or resource.text is None:
            area.load_text(f"(binary file, {resource.size} bytes: not shown)")
        else:
            area.language = language_for(self.rel_path)
            area.load_text(for_terminal(resource.text, multiline=True))
        area.visible = True
        area.focus()

    def action_close(self) -> None:
        """Close the dialog."""
        self.dismiss(None)
