"""The footer of the main screen: Textual's, rebuilt only when the keys it lists change."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Footer


class DeckFooter(Footer):
    """Textual's :class:`~textual.widgets.Footer`, whose rebuild is skipped when the keys
    it would list are those it lists already.

    Textual rebuilds the footer (every key a new widget, styled again) after each focus
    change and each ``refresh_bindings``; a launch at 10k skills asked for 7 rebuilds, of
    which 4 listed the same keys (about 20 ms each on the event loop, while the first rows
    wait: ``tests/benchmarks/bench_felt.py``).
    """

    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)
        self._listed: tuple[bool, tuple[tuple[Binding, bool, str], ...]] | None = None

    def _keys(self) -> tuple[bool, tuple[tuple[Binding, bool, str], ...]]:
        """What :meth:`compose` would list: whether the bindings are known yet, and each
        shown binding with its state."""
        if not self._bindings_ready:
            return (False, ())
        active = self.screen.active_bindings.values()
        return (True, tuple((b, on, tip) for _node, b, on, tip in active if b.show))

    async def recompose(self) -> None:
        """Rebuild the keys, unless they are the ones listed now."""
        keys = self._keys()
        if keys == self._listed and self.is_mounted:
            return
        self._listed = keys
        await super().recompose()
