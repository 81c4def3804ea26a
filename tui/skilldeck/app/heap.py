"""Garbage collection kept off the typing path.

With 10k skills loaded, CPython's automatic full collections (the oldest generation) walk
every catalog and index object: measured 150-450 ms pauses landing on random keystrokes
(``tests/benchmarks/bench_tui.py``). The app therefore freezes what it keeps for its whole
life (catalog, index) once they are built, and runs full collections itself when nobody
has typed or clicked for a moment. Young-generation collections still run as usual, and
reference counting frees everything that is not part of a cycle at once.
"""

from __future__ import annotations

import gc
import time

IDLE_AFTER = 1.0
"""Seconds without input before a deferred full collection runs."""
LONGEST_DEFERRAL = 60.0
"""A full collection runs at least this often while the app is busy, idle or not."""
_NEVER = 1_000_000_000


def settle() -> None:
    """Collect once, then take everything alive now out of future collections."""
    gc.collect()
    gc.freeze()


def release() -> None:
    """Undo :func:`settle`: frozen objects become collectable again (when the app ends)."""
    gc.unfreeze()


class IdleCollector:
    """Defers full collections to moments when the user is not typing."""

    def __init__(
        self, idle_after: float = IDLE_AFTER, longest_deferral: float = LONGEST_DEFERRAL
    ) -> None:
        self.idle_after = idle_after
        self.longest_deferral = longest_deferral
        self.collections = 0
        """Full collections run by :meth:`tick` so far."""
        self._saved: tuple[int, int, int] | None = None
        self._last_input = time.monotonic()
        self._last_collection = self._last_input
        self._dirty = False
        self._settle = False

    @property
    def active(self) -> bool:
        """Whether automatic full collections are deferred now."""
        return self._saved is not None

    def start(self) -> None:
        """Stop automatic full collections (young generations are untouched)."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            young, middle, _old = self._saved
            gc.set_threshold(young, middle, _NEVER)

    def stop(self) -> None:
        """Give the collector its automatic full collections back."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def touch(self) -> None:
        """Note user input (a key press or a click)."""
        self._last_input = time.monotonic()
        self._dirty = True

    def quiet_for(self) -> float:
        """Seconds since the last key press or click."""
        return time.monotonic() - self._last_input

    def settle_when_idle(self) -> None:
        """Have the next idle :meth:`tick` :func:`settle` (what was just built is kept for
        the app's life): at 10k skills that takes 0.2-0.3 s in the TUI, which the status
        line waited for after every stage ran (measured with timestamps in tmux, as
        ``tests/benchmarks/bench_felt.py`` runs it); full collections are off until then
        (:meth:`start`), so nothing else pays for it. Not before :data:`IDLE_AFTER` has
        passed, so the screen shows the stages' result first."""
        self._settle = True
        self._dirty = True
        self._last_collection = time.monotonic()  # not before the screen shows the result

    def tick(self) -> bool:
        """Run a full collection if one is due and nobody is typing (:func:`settle` if one
        was asked for); True if it ran."""
        if not self._dirty or self._saved is None:
            return False
        now = time.monotonic()
        idle = now - max(self._last_input, self._last_collection) >= self.idle_after
        overdue = now - self._last_collection >= self.longest_deferral
        if not (idle or overdue):
            return False
        if self._settle:
            self._settle = False
            settle()
        else:
            gc.collect()
        self._dirty = False
        self._last_collection = time.monotonic()
        self.collections += 1
        return True
