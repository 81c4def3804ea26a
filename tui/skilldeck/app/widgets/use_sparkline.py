"""One line in the preview pane: the skill's loads per day over the last two weeks.

The numbers come from :func:`skilldeck.core.usage.collect_usage`, computed in a thread
worker and kept until the telemetry files or the audit change (every skill the user
highlights reads the same report). Hidden while the skill has no use to show.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, Sparkline
from textual.worker import get_current_worker

from skilldeck.app.deck import UsesDeck
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.usage import UsageReport, collect_usage, telemetry_mark

WINDOW_DAYS = 14
"""Days the sparkline covers (the Usage screen's window too)."""


def day_series(
    daily: dict[str, int], days: int = WINDOW_DAYS, now: float | None = None
) -> list[int]:
    """``daily`` (``YYYY-MM-DD`` -> count) as one value per day of the last ``days`` UTC
    days, oldest first (0 for days without use)."""
    today = datetime.fromtimestamp(time.time() if now is None else now, UTC).date()
    return [daily.get((today - timedelta(days=i)).isoformat(), 0) for i in range(days - 1, -1, -1)]


class UseSparkline(UsesDeck, Horizontal):
    """Loads per day of one skill, as a Textual ``Sparkline`` with its total."""

    DEFAULT_CSS = """
    UseSparkline {
        height: 1;
        padding: 0 1;
        display: none;
    }
    UseSparkline.-used {
        display: block;
    }
    UseSparkline Label {
        width: auto;
        color: $text-muted;
        padding-right: 1;
    }
    UseSparkline Sparkline {
        width: 28;
        height: 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._name: str | None = None
        self._report: UsageReport | None = None
        self._mark: object = None

    def compose(self) -> ComposeResult:
        yield Label("", id="use-label")
        yield Sparkline([], id="use-spark")

    def show_for(self, name: str | None) -> None:
        """Show the use of the skill called ``name`` (None hides the line)."""
        self._name = name
        if name is None:
            self.set_class(False, "-used")
            return
        self._draw()
        self._refresh_report()

    @work(thread=True, exclusive=True, group="use-sparkline", exit_on_error=False)
    def _refresh_report(self) -> None:
        """Re-read usage when the telemetry files or the audit changed since the last read."""
        deck = self.deck
        settings = deck.settings
        try:
            store = deck.store
            mark = (telemetry_mark(settings.telemetry_dir), store.last_audit_id())
            if mark == self._mark:
                return
            since = datetime.now(UTC) - timedelta(days=WINDOW_DAYS)
            report = collect_usage(settings, [], since=since, store=store)
        except SkilldeckError:
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._update, report, mark)

    def _update(self, report: UsageReport, mark: object) -> None:
        self._report, self._mark = report, mark
        self._draw()

    def _draw(self) -> None:
        report, name = self._report, self._name
        usage = report.skills.get(name) if report is not None and name is not None else None
        if usage is None or not (usage.loads or usage.silent_misses):
            self.set_class(False, "-used")
            return
        series = day_series(dict(usage.daily_loads))
        misses = len(usage.silent_misses)
        text = f"{WINDOW_DAYS}d: {usage.loads} load{'s' if usage.loads != 1 else ''}"
        if misses:
            text += f", {misses} silent miss{'es' if misses != 1 else ''}"
        self.query_one("#use-label", Label).update(text)
        self.query_one("#use-spark", Sparkline).data = series
        self.set_class(True, "-used")
