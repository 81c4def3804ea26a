"""The ``?`` help screen: keys, row markers and where things come from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.color import Color, ColorParseError
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from skilldeck.app.labels import SOURCE_BADGE
from skilldeck.app.widgets.results_list import BADGE_STYLE, MARKERS
from skilldeck.core.model import Source

KEYS: tuple[tuple[str, str], ...] = (
    ("type", "search (every keystroke re-ranks); ↓ or enter: go to the results"),
    ("↑ ↓ pgup pgdn", "move in the results; the panes follow the highlighted skill"),
    ("letters", "typed in the results go on the end of the search, as in fzf"),
    ("/", "back to the search box; esc clears it"),
    ("alt+1 … alt+5", "Preview · Diagnostics · Tools · Files · Explain tabs (from anywhere)"),
    ("1 … 5", "the same tabs, outside the search box; tab moves into the shown pane"),
    ("F2 (r)", "toggle the rendered markdown / raw source with line numbers"),
    ("enter on a finding", "jump to its line in the raw source"),
    ("enter on a file", "open a resource file (read safely through the core)"),
    ("enter on a toolset", "read the toolset module and hash, then approve / deny"),
    ("F3 (x)", "explain why the highlighted skill ranked where it did"),
    ("F4 (v)", "review mode: every finding of every skill, grouped"),
    ("F5 (s)", "sessions: approve / deny tools (scripts: text and hash first), policy mode"),
    ("F6 (l)", "force-load the highlighted skill into a session (as operator)"),
    ("F7 (e)", "enable / disable the skill in the governance registry"),
    ("F8", "updates: installed skills, fetch, diff and new findings, approve / reject"),
    ("F9", "usage: loads and silent misses per day, misses (enter: open), never used"),
    ("F10", "remote skills: origin, review state; enter previews, a approves what is shown"),
    ("(r x l e v s)", "the letters act from a detail pane; search box and results type them"),
    ("dialogs that write", "ignore keys for 0.3 s after they open (keys typed before them)"),
    ("ctrl+p", "command palette: skills and actions by name"),
    ("ctrl+t", "light / dark theme"),
    ("ctrl+r", "rescan the skill folders"),
    ("F1 or ?", "this help"),
    ("ctrl+q", "quit"),
)


def _rich_color(value: str) -> str:
    """``value`` when Rich can paint it (``#FEA62B``), else dim (``auto 60%``)."""
    try:
        Color.parse(value)
    except ColorParseError:
        return "dim"
    return value.lower()


def help_renderable(variables: Mapping[str, str] | None = None) -> Group:
    """Keys and marker legend.

    Args:
        variables: The theme's colour variables (``warning`` -> ``#ffa62b``), so each
            marker glyph has the colour it has in the results list.
    """
    keys = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    keys.add_column(style="bold cyan", no_wrap=True)
    keys.add_column()
    for key, what in KEYS:
        keys.add_row(key, what)
    markers = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    markers.add_column(no_wrap=True)
    markers.add_column()
    colors = variables or {}
    for glyph, style, meaning in MARKERS:
        markers.add_row(Text(glyph, style=_rich_color(colors.get(style[1:], ""))), meaning)
    sources = Text()
    for n, source in enumerate((Source.BUNDLED, Source.USER, Source.PROJECT, Source.EXPLICIT)):
        _bold, dollar, variable = BADGE_STYLE[source].partition("$")
        color = _rich_color(colors.get(variable, "")) if dollar else ""
        sources.append(" < " if n else "")
        sources.append(SOURCE_BADGE[source], style=f"bold {color}".strip())
    sources.append(": a higher source wins a name clash; the loser stays listed as shadowed.")
    return Group(
        Text("Keys", style="bold underline"),
        keys,
        Text(""),
        Text("Row markers", style="bold underline"),
        markers,
        Text(""),
        Text("Source badges", style="bold underline"),
        sources,
        Text(""),
        Text("Mouse: click rows, tabs and buttons; scroll with the wheel.", style="dim"),
    )


class HelpScreen(ModalScreen[None]):
    """What every key does."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 1 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "Close", id="help.close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Skilldeck help"
            yield Static(help_renderable(self.app.theme_variables))

    def action_close(self) -> None:
        """Close help."""
        self.dismiss(None)
