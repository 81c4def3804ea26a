"""The search box: an Input that repaints without a screen reflow on every keystroke."""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input


class SearchBox(Input):
    """The query input of the main screen.

    Textual's Input records each keystroke's new text width as a layout change, which
    reflows the whole screen before anything else happens (about 3-5 ms CPU of every
    keystroke at 10k skills, `tests/benchmarks/bench_tui.py`). The box has a fixed size,
    so the text width only matters for horizontal scrolling: it is recorded without the
    reflow and the box alone repaints.
    """

    def _watch_value(self, value: str) -> None:
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
            self.refresh()
        super()._watch_value(value)
