"""The base of dialogs that write state: keys typed before the dialog was shown do nothing.

Type-ahead aimed at the search box must never answer a question it did not see (``e``
then ``y`` typed as part of a query once disabled a skill). For :data:`GUARD_SECONDS`
after it is shown, such a dialog focuses nothing, drops every key and runs no action;
then its first control takes the focus. A key counts from when it was typed, not from
when it is handled: on a busy machine keys typed before the dialog showed can wait in
the queue past the guard, and are dropped all the same.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar, TypeVar

from textual import events
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button

from skilldeck.app.deck import UsesDeck

GUARD_SECONDS = 0.3
"""How long a writing dialog ignores keys after it is shown (the app's ``key_guard``)."""

ResultT = TypeVar("ResultT")


class GuardedDialog(UsesDeck, ModalScreen[ResultT]):
    """A modal screen that ignores keys for the app's ``key_guard`` seconds after it is
    mounted;
    subclasses call :meth:`focus_after_guard` from ``on_mount``."""

    AUTO_FOCUS: ClassVar[str | None] = ""  # nothing has the focus while keys are ignored

    _guard_until = math.inf
    """Keys typed before this moment are ignored (all of them until the guard ends: keys
    can arrive before the mount)."""

    def focus_after_guard(self, widget: Widget) -> None:
        """Ignore keys for the app's ``key_guard`` seconds from now, then give ``widget``
        the focus and answer the keys typed from then on.

        Args:
            widget: The control that answers keys afterwards.
        """
        delay = self.deck.key_guard
        if delay <= 0:
            self._guard_until = -math.inf
            widget.focus()
            return

        def ready() -> None:
            self._guard_until = time.monotonic()
            widget.focus()
            self.refresh_bindings()

        self.set_timer(delay, ready)

    @property
    def guarded(self) -> bool:
        """Whether keys are still ignored (the dialog was shown moments ago)."""
        return time.monotonic() < self._guard_until

    def typed_while_guarded(self, event: events.Key) -> bool:
        """Whether ``event`` was typed before keys were answered (the app drops it)."""
        return event.time < self._guard_until

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No action runs while keys are ignored."""
        return not self.guarded

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """A button runs the action named by its id (``approve`` runs ``action_approve``),
        unless keys are still ignored."""
        event.stop()
        if not self.guarded and event.button.id:
            await self.run_action(event.button.id)

    def on_key(self, event: events.Key) -> None:
        """Drop keys typed while the dialog was guarded."""
        if self.typed_while_guarded(event):
            event.stop()
            event.prevent_default()
