"""Why the highlighted skill ranked where it did for the current query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from skilldeck.app.colors import WARNING
from skilldeck.app.deck import UsesDeck
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
            style=WARNING,
        )
        return head
    head.append(f"\n{clean(skill.name)}", style="bold")
    head.append(f" ranked #{rank} of {response.total} · score {result.score:.3f} · ")
    head.append(
        "confident" if result.confident else "not confident",
        style="green" if result.confident else WARNING,
    )
    if response.clustered:
        head.append(
            "\nSeveral results score close to the top: the choice is ambiguous.", style=WARNING
        )
    signals = score_table(result.signals, result.score)
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


def score_table(signals: Mapping[str, float], score: float) -> Table:
    """How the signals add up to ``score``: each weighted signal's score times its share of
    the weights, their sum (the weighted mean), then the shown score; the raw per-field
    BM25 figures underneath."""
    from skilldeck.core.search import SEMANTIC_WEIGHTS, WEIGHTS  # numpy: not at start-up

    weights = SEMANTIC_WEIGHTS if "semantic" in signals else WEIGHTS
    used = [name for name in weights if name in signals]
    total_weight = sum(weights[name] for name in used) or 1.0
    table = Table(
        title="how the score adds up",
        title_justify="left",
        expand=False,
        box=None,
        padding=(0, 2, 0, 0),
    )
    table.add_column("signal", style="bold", no_wrap=True)
    table.add_column("score", justify="right")
    table.add_column("× weight", justify="right")
    table.add_column("= points", justify="right")
    mean = 0.0
    for name in sorted(used, key=lambda n: -weights[n] * signals[n]):
        share = weights[name] / total_weight
        points = share * signals[name]
        mean += points
        table.add_row(name, f"{signals[name]:.3f}", f"{share:.3f}", f"{points:.3f}")
    table.add_section()
    table.add_row("weighted mean", "", "", Text(f"{mean:.3f}", style="bold"))
    if signals.get("mention"):
        table.add_row(Text("named with $", style="green"), "", "", "1.000")
    elif signals.get("trigger"):
        table.add_row(Text("trigger fired", style="green"), "", "", Text("raised", style="dim"))
    table.add_row("calibrated score", "", "", Text(f"{score:.3f}", style="bold"))
    fields = [(name[5:], value) for name, value in signals.items() if name.startswith("bm25.")]
    if fields:
        raw = " · ".join(f"{field} {value:.2f}" for field, value in fields if field != "raw")
        table.caption = f"bm25 by field (raw): {raw}"
        table.caption_justify = "left"
        table.caption_style = "dim"
    return table


class ExplainView(UsesDeck, VerticalScroll):
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

    @work(thread=True, exclusive=True, group="explain", exit_on_error=False)
    def explain(self, workspace: Workspace, query: str, skill: Skill) -> None:
        """Explain ``query`` for ``skill`` in a thread worker, then show it."""
        try:
            response = explain(workspace, query)
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"explain failed: {exc}", severity="error")
            return
        renderable = explain_renderable(query, skill, response)
        self.app.call_from_thread(self.show, renderable)
