"""The search box: an Input that repaints without a screen reflow on every keystroke and
applies its editing keys in the order they were typed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Input

from skilldeck.app.widgets.fitted_input import FittedInput

_IN_ORDER_ACTIONS = frozenset(
    {
        "cursor_left",
        "cursor_right",
        "cursor_left_word",
        "cursor_right_word",
        "delete_left",
        "delete_right",
        "delete_left_word",
        "delete_right_word",
        "delete_left_all",
        "delete_right_all",
        "home",
        "end",
    }
)


def _editing_keys() -> dict[str, str]:
    """Input's own editing keys (``ctrl+u``, ``backspace``, ``left``, ...) and their actions."""
    keys: dict[str, str] = {}
    for binding in Input.BINDINGS:
        if not isinstance(binding, Binding) or binding.action not in _IN_ORDER_ACTIONS:
            continue
        for key in binding.key.split(","):
            keys[key.strip()] = binding.action
    return keys


EDITING_KEYS = _editing_keys()
"""Keys the box applies at once rather than through the binding chain."""


def escape_merged(event: events.Key, pass_keys: frozenset[str] = frozenset()) -> bool:
    """Whether ``event`` is Esc and a letter or digit read as one alt+ key (typed fast,
    or on a busy machine, the terminal's ESC and the next letter arrive in one read)."""
    character = event.character
    return (
        event.key.startswith("alt+")
        and event.key not in pass_keys
        and character is not None
        and len(character) == 1
        and character.isalnum()
    )


class SearchBox(FittedInput):
    """The query input of the main screen.

    Textual's Input records each keystroke's new text width as a layout change, which
    reflows the whole screen before anything else happens (about 3-5 ms CPU of every
    keystroke at 10k skills, `tests/benchmarks/bench_tui.py`). The box has a fixed size,
    so the text width only matters for horizontal scrolling: it is recorded without the
    reflow and the box alone repaints.

    Editing keys such as ``ctrl+u`` reach an Input as bindings, which Textual looks up only
    after the key has bubbled to the app; letters typed right behind them are inserted
    first and then deleted with the rest ("abc", ctrl+u, "exel" typed at once left the box
    empty). The box applies those keys as they arrive, so the text follows the typing.
    """

    def __init__(self, *args: Any, pass_keys: Iterable[str] = (), **kwargs: Any) -> None:
        """Args as for :class:`FittedInput`; ``pass_keys``: printable keys the box leaves to
        the screen's bindings (the characters terminals send for alt+1..5), instead of
        typing them."""
        super().__init__(*args, **kwargs)
        self._pass_keys = frozenset(pass_keys)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Printable keys are typed, except the ``pass_keys``."""
        if key in self._pass_keys:
            return False
        return super().check_consume_key(key, character)

    def clear_query(self) -> None:
        """Empty the box (Esc)."""
        self.value = ""
        self.cursor_position = 0

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.value:
            # Cleared here, in typing order: as a screen binding, Esc is looked up only
            # after it has bubbled to the app, so letters typed right behind it were
            # inserted first and then cleared with the rest.
            event.stop()
            event.prevent_default()
            self.clear_query()
            return
        if escape_merged(event, self._pass_keys):
            # Esc and the next letter in one read (a busy machine) arrive as alt+letter:
            # what was typed is Esc, then the letter.
            event.stop()
            event.prevent_default()
            self.clear_query()
            self.insert_text_at_cursor(event.character or "")
            return
        action = EDITING_KEYS.get(event.key)
        if action is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        self._restart_blink()
        await self.run_action(action)

    def _watch_value(self, value: str) -> None:
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
            self.refresh()
        super()._watch_value(value)
