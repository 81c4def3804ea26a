"""Why the highlighted skill ranked where it did for the current query."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from skilldeck.app.labels import clean, literal
from skilldeck.app.ranked import explain
from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.search import SearchResponse
    from skilldeck.core.workspace import Workspace

HINT = "Type a query, highlight a result and press x to see why it ranked there."


def explain_renderable(query: str, skill: Skill, response: SearchResponse | None) -> RenderableType:
    """Per-signal scores and matched terms for ``skill`` in ``response``."""
    if response is None:
        return Text(
            HINT if not query.strip() else "The search index is still building.", style="dim"
        )
    rank = None
    result = None
    for i, candidate in enumerate(response.results, 1):
        if candidate.skill.path == skill.path:
            rank, result = i, candidate
            break
    head = Text()
    head.append("query ", style="dim")
    head.append(repr(query.strip()), style="bold")
    if result is None:
        head.append(
            f"\n{clean(skill.name)} is not among the {len(response.results)} best matches.",
            style="yellow",
        )
        return head
    head.append(f"\n{clean(skill.name)}", style="bold")
    head.append(f" ranked #{rank} of {response.total} · score {result.score:.3f} · ")
    head.append(
        "confident" if result.confident else "not confident",
        style="green" if result.confident else "yellow",
    )
    if response.clustered:
        head.append(
            "\nSeveral results score close to the top: the choice is ambiguous.", style="yellow"
        )
    signals = Table(
        title="signals", title_justify="left", expand=False, box=None, padding=(0, 2, 0, 0)
    )
    signals.add_column("signal", style="bold")
    signals.add_column("score", justify="right")
    for name, value in sorted(result.signals.items(), key=lambda kv: -kv[1]):
        signals.add_row(name, f"{value:.3f}")
    matched = Table(
        title="matched terms", title_justify="left", expand=True, box=None, padding=(0, 2, 0, 0)
    )
    matched.add_column("where", style="bold", no_wrap=True)
    matched.add_column("terms", ratio=1)
    for where, terms in result.matched.items():
        if terms:
            matched.add_row(literal(where), literal(", ".join(terms)))
    if not result.matched:
        matched.add_row("-", Text("no term matched directly", style="dim"))
    return Group(head, Text(""), signals, Text(""), matched)


class ExplainView(VerticalScroll):
    """Scrollable search explanation."""

    DEFAULT_CSS = """
    ExplainView {
        height: 1fr;
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(HINT, style="dim"), id="explain-text")

    def show(self, renderable: RenderableType) -> None:
        """Replace the explanation."""
        self.query_one("#explain-text", Static).update(renderable)

    @work(thread=True, exclusive=True, group="explain")
    def explain(self, workspace: Workspace, query: str, skill: Skill) -> None:
        """Explain ``query`` for ``skill`` in a thread worker, then show it."""
        try:
            response = explain(workspace, query)
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"explain failed: {exc}", severity="error")
            return
        renderable = explain_renderable(query, skill, response)
        self.app.call_from_thread(self.show, renderable)
