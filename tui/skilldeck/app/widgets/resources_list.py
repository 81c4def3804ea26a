"""Resource files of the highlighted skill; choosing one opens it."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from skilldeck.app.labels import clean
from skilldeck.core.model import Skill


class ResourcesList(OptionList):
    """Files inside the skill folder (tier 3 resources)."""

    DEFAULT_CSS = """
    ResourcesList, ResourcesList:focus {
        height: 1fr;
        border: none;
    }
    """

    class Open(Message):
        """Open one resource file."""

        def __init__(self, skill: Skill, rel_path: str) -> None:
            super().__init__()
            self.skill = skill
            self.rel_path = rel_path

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._skill: Skill | None = None

    def show(self, skill: Skill | None) -> None:
        """List the resources of ``skill``."""
        self._skill = skill
        if skill is None or not skill.resources:
            self.set_options([Option(Text("No resource files.", style="dim"), disabled=True)])
            return
        options = [Option(Text(f"▸ {clean(name)}"), id=name) for name in skill.resources]
        if skill.resources_truncated:
            options.append(Option(Text("… more files not listed", style="dim"), disabled=True))
        self.set_options(options)
        self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Ask the screen to open the chosen file."""
        event.stop()
        if self._skill is not None and event.option.id:
            self.post_message(self.Open(self._skill, event.option.id))
