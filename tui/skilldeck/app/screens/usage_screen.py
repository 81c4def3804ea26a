"""Usage (F9): loads and silent misses per day, the silent-miss table, never-used skills.

Reads :func:`skilldeck.core.usage.collect_usage` in a thread worker over the last
:data:`~skilldeck.app.widgets.use_sparkline.WINDOW_DAYS` days, and again whenever the
telemetry files or the session audit change (checked every :attr:`UsageScreen.poll`
seconds, and when the app's store poll sees the audit grow), so it follows agents as
they work. Enter on a silent miss shows its skill on the main screen with the request in
the search box: the operator sees why it did or did not rank.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Static
from textual.worker import get_current_worker

from skilldeck.app.colors import WARNING_STYLE
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean
from skilldeck.app.widgets.miss_table import MissTable
from skilldeck.app.widgets.usage_chart import UsageChart
from skilldeck.app.widgets.use_sparkline import WINDOW_DAYS
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.usage import UsageReport, collect_usage, telemetry_mark
from skilldeck.core.workspace import Workspace

MISS_ROWS = 200
"""Silent misses listed (the newest): a table of every row of a busy fleet would take
seconds to build on the event loop."""
MISSES_TITLE = "Silent misses (enter: open the skill with the request)"


def window_days(report: UsageReport) -> list[str]:
    """Every UTC day of the report's window, oldest first."""
    end = datetime.fromtimestamp(report.until, UTC).date()
    return [(end - timedelta(days=i)).isoformat() for i in range(WINDOW_DAYS - 1, -1, -1)]


def summary(report: UsageReport) -> Text:
    """One paragraph: totals, and what the report could not read."""
    skills = report.skills.values()
    text = Text()
    text.append(f"{sum(s.matched for s in skills)} confident matches", style="bold")
    text.append(f" · {sum(s.loads for s in skills)} loads", style="bold")
    text.append(f" · {len(report.silent_misses)} silent misses", style=WARNING_STYLE)
    gaps = len(report.unmatched)
    text.append(f" · {gaps} request{'s' if gaps != 1 else ''} matched nothing", style="bold")
    text.append(f" · last {WINDOW_DAYS} days", style="dim")
    for note in report.sources.notes:
        text.append(f"\n{clean(note)}", style=WARNING_STYLE)
    return text


def never_used_text(names: list[str]) -> Text:
    """The never-used skills, comma-separated (or a note when every skill was used)."""
    if not names:
        return Text("Every skill was matched or loaded.", style="dim")
    return Text(", ".join(clean(n) for n in names))


def unmatched_text(report: UsageReport, shown: int = 20) -> Text:
    """The requests no skill matched confidently, most frequent first, with the nearest
    skill (gaps in the catalog)."""
    if not report.unmatched:
        return Text("Every request found a confident match.", style="dim")
    text = Text()
    for i, entry in enumerate(report.unmatched[:shown]):
        if i:
            text.append("\n")
        text.append(f"{entry.count}× ", style="bold")
        text.append(clean(entry.query))
        if entry.best:
            text.append(f"  nearest {clean(entry.best)}", style="dim")
    return text


class UsageScreen(UsesDeck, Screen[None]):
    """How skills are really used: what an operator reads first thing in the morning."""

    DEFAULT_CSS = """
    UsageScreen #usage-body {
        height: 1fr;
    }
    UsageScreen #usage-summary {
        height: auto;
        padding: 0 1;
    }
    UsageScreen .section {
        padding: 0 1;
        text-style: bold;
        color: $text-muted;
    }
    UsageScreen #gaps {
        height: 7;
    }
    UsageScreen #gaps > Vertical {
        width: 1fr;
    }
    UsageScreen #gaps VerticalScroll {
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="usage.back"),
        Binding("f1", "app.help", "Help", id="usage.help"),
        Binding("f9", "close", "Back", show=False, id="usage.close-f9"),
        Binding("ctrl+r", "reload", "Reload", id="usage.reload"),
    ]

    poll: float = 1.0
    """Seconds between two checks of the telemetry files for new events."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.report: UsageReport | None = None
        """The report shown (None until the first read)."""
        self._mark: object = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Vertical(id="usage-body"):
            yield Static(Text("Reading usage…", style="dim"), id="usage-summary")
            yield UsageChart(id="usage-chart")
            yield Label(MISSES_TITLE, id="misses-title", classes="section")
            yield MissTable(id="misses")
            with Horizontal(id="gaps"):
                with Vertical():
                    yield Label("Never matched nor loaded", classes="section")
                    with VerticalScroll():
                        yield Static("", id="never-used")
                with Vertical():
                    yield Label("Requests nothing matched", classes="section")
                    with VerticalScroll():
                        yield Static("", id="unmatched")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "usage"
        self.query_one(MissTable).focus()
        self.watch(self.app, "store_version", self._audit_changed, init=False)
        self.set_interval(self.poll, self._check)
        self._load()

    def action_close(self) -> None:
        """Back to the previous screen."""
        self.dismiss()

    def action_reload(self) -> None:
        """Read usage again now."""
        self._mark = None
        self._load()

    def _audit_changed(self, _version: int) -> None:
        self._load()

    def _check(self) -> None:
        self._load(only_if_changed=True)

    @work(thread=True, exclusive=True, group="usage", exit_on_error=False)
    def _load(self, only_if_changed: bool = False) -> None:
        """Read the report (in a thread); with ``only_if_changed``, only when the telemetry
        files or the audit changed since the last read."""
        deck = self.deck
        settings = deck.settings
        try:
            store = deck.store
            mark = (telemetry_mark(settings.telemetry_dir), store.last_audit_id())
        except SkilldeckError:
            store, mark = None, (telemetry_mark(settings.telemetry_dir), -1)
        if only_if_changed and mark == self._mark:
            return
        names = [skill.name for skill in self.workspace.listed()]
        since = datetime.now(UTC) - timedelta(days=WINDOW_DAYS)
        report = collect_usage(settings, names, since=since, store=store)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, report, mark)

    def _show(self, report: UsageReport, mark: object) -> None:
        self.report, self._mark = report, mark
        self.query_one("#usage-summary", Static).update(summary(report))
        days = window_days(report)
        counts = [report.days.get(day) for day in days]
        loads = [c["loads"] if c else 0 for c in counts]
        missed = [c["silent_misses"] if c else 0 for c in counts]
        self.query_one(UsageChart).show(days, loads, missed)
        misses = report.silent_misses
        self.query_one(MissTable).show(misses[:MISS_ROWS])
        title = MISSES_TITLE
        if len(misses) > MISS_ROWS:
            title += f": the newest {MISS_ROWS} of {len(misses)} (usage --format json has all)"
        self.query_one("#misses-title", Label).update(title)
        self.query_one("#never-used", Static).update(never_used_text(report.never_used))
        self.query_one("#unmatched", Static).update(unmatched_text(report))

    @on(MissTable.Open)
    def _open_miss(self, event: MissTable.Open) -> None:
        skill = self.workspace.by_name(event.skill)
        if skill is None:
            self.notify(f"{event.skill} is not in the catalog any more", severity="warning")
            return
        self.deck.open_skill(skill, query=event.query)
