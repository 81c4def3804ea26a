"""Diagnostics of one skill: code, severity colour, line, message."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from skilldeck.app.colors import WARNING_STYLE
from skilldeck.app.labels import clean
from skilldeck.core.model import Diagnostic, Severity

SEVERITY_STYLE = {
    Severity.ERROR: "bold red",
    Severity.WARNING: WARNING_STYLE,
    Severity.INFO: "bold blue",
}
SEVERITY_GLYPH = {Severity.ERROR: "✖", Severity.WARNING: "▲", Severity.INFO: "ℹ"}


def render_diagnostic(diag: Diagnostic, prefix: str = "") -> Text:
    """One finding on one line: glyph, code, line, message."""
    text = Text()
    text.append(f"{SEVERITY_GLYPH[diag.severity]} ", style=SEVERITY_STYLE[diag.severity])
    if prefix:
        text.append(clean(prefix), style="bold")
        text.append(" ")
    text.append(f"{diag.code:<6}", style=SEVERITY_STYLE[diag.severity])
    line = f"L{diag.line}" if diag.line else "  -"
    text.append(f" {line:>5} ", style="dim")
    text.append(clean(diag.message))
    return text


def _wrapped(diag: Diagnostic) -> Table:
    """One finding with its message wrapping under the message, not under the glyph."""
    head = render_diagnostic(Diagnostic(diag.code, diag.severity, "", diag.path, diag.line))
    row = Table.grid(expand=True)
    row.add_column(no_wrap=True)
    row.add_column(ratio=1, overflow="fold")
    row.add_row(head, Text(clean(diag.message)))
    return row


class DiagnosticsList(OptionList):
    """Findings of the highlighted skill; choosing one jumps to its line."""

    DEFAULT_CSS = """
    DiagnosticsList, DiagnosticsList:focus {
        height: 1fr;
        border: none;
        scrollbar-gutter: stable;  /* rows are measured and drawn at the same width */
    }
    """

    class JumpTo(Message):
        """Show the raw source at ``line``."""

        def __init__(self, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.diagnostic = diagnostic

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._diagnostics: list[Diagnostic] = []

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Findings shown."""
        return self._diagnostics

    def show(self, diagnostics: list[Diagnostic] | None) -> None:
        """Replace the findings (None: no skill is highlighted)."""
        self._diagnostics = diagnostics or []
        if diagnostics is None:
            self.set_options([Option(Text("No skill selected.", style="dim"), disabled=True)])
            return
        if not diagnostics:
            self.set_options([Option(Text("✔ No findings.", style="green"), disabled=True)])
            return
        self.set_options([Option(_wrapped(d)) for d in diagnostics])
        self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Ask the screen to jump to the finding's line."""
        event.stop()
        if event.option_index < len(self._diagnostics):
            self.post_message(self.JumpTo(self._diagnostics[event.option_index]))
