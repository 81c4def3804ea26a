"""A bar chart of loads and silent misses per day (plotext, through textual-plotext)."""

from __future__ import annotations

from textual_plotext import PlotextPlot


class UsageChart(PlotextPlot):
    """Loads and silent misses for each day of the window, side by side."""

    DEFAULT_CSS = """
    UsageChart {
        height: 14;
        min-height: 8;
    }
    """

    def show(self, days: list[str], loads: list[int], misses: list[int]) -> None:
        """Draw the bars for ``days`` (``YYYY-MM-DD``, oldest first)."""
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("Loads and silent misses per day")
        labels = [day[5:] for day in days]  # MM-DD: the year is in the title bar
        if labels:
            # textual-plotext's stub types ``multiple_bar`` like ``bar`` (one ``label``, one
            # ``color``); plotext itself takes one of each per series.
            plt.multiple_bar(  # type: ignore[call-arg]
                labels,
                [loads, misses],
                labels=["loads", "silent misses"],
                color=["green", "orange"],  # type: ignore[arg-type]
            )
            top = max([*loads, *misses, 1])
            step = max(1, top // 5)
            plt.yticks(list(range(0, top + 1, step)))  # counts: whole numbers only
        self.refresh()
