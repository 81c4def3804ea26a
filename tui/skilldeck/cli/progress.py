"""Feedback on long work: one self-erasing status line on a terminal's stderr.

The core says what long step runs now through a plain callable (``Workspace.progress``,
the ``progress`` arguments of the install operations); :class:`Progress` is that callable
for the CLI. A step shows only once it has run for :data:`DELAY` seconds, so quick
commands print nothing more; the line is erased when the step ends, before any result is
printed. Nothing is drawn when stderr is no terminal, with ``--format json`` or ``jsonl``,
with ``--quiet``, or with ``TERM=dumb`` (:func:`wanted`). ``SKILLDECK_PROGRESS_DELAY``
(seconds) changes the delay: ``0`` shows every step.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

from skilldeck.core.safe_text import for_terminal

DELAY = 1.0
"""Seconds a step runs before it is shown (shorter work stays silent)."""
_TICK = 0.1
_FRAMES = "|/-\\"


def wanted(stream: TextIO, *, quiet: bool, output_format: str | None) -> bool:
    """Whether progress may be drawn on ``stream``: a terminal, text output, not quiet."""
    if quiet or (output_format or "text") != "text" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _delay() -> float:
    """:data:`DELAY`, or ``SKILLDECK_PROGRESS_DELAY`` when it is a number."""
    try:
        return max(0.0, float(os.environ.get("SKILLDECK_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


class Progress:
    """A status line on ``stream`` for the step last named (``progress("reading…")``;
    ``progress("")`` ends it), redrawn by a daemon thread with a spinner and the seconds
    spent. Once a step was shown, the steps after it show at once (one long command).

    Args:
        stream: Where to draw (stderr).
        delay: Seconds a step runs before it is drawn (default: :func:`_delay`).
    """

    def __init__(self, stream: TextIO | None = None, delay: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.delay = _delay() if delay is None else delay
        self._lock = threading.Lock()
        self._text = ""
        self._since = 0.0
        self._drawn = False
        self._shown = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def __call__(self, text: str) -> None:
        """Show ``text`` as the step running now (``""``: no step; the line is erased)."""
        with self._lock:
            if text and not self._text:
                self._since = time.monotonic()
            self._text = for_terminal(text)
            if not text:
                self._erase()
                return
            if self._closed:
                return
            if self._shown or self.delay == 0:
                self._draw(0)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Erase the line and stop drawing."""
        with self._lock:
            self._closed = True
            self._text = ""
            self._erase()

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _width(self) -> int:
        """The terminal's columns (a longer line would wrap and not be erased)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return columns if columns > 1 else 80

    def _run(self) -> None:
        frame = 0
        while True:
            time.sleep(_TICK)
            with self._lock:
                if self._closed:
                    return
                elapsed = time.monotonic() - self._since
                if not self._text or (elapsed < self.delay and not self._shown):
                    continue
                frame += 1
                self._draw(frame)

    def _draw(self, frame: int) -> None:
        """Draw the current step (the lock is held)."""
        elapsed = time.monotonic() - self._since
        spinner = _FRAMES[frame % len(_FRAMES)]
        line = f"{spinner} {self._text} ({elapsed:.0f} s)"[: self._width() - 1]
        self.stream.write(f"\r{line}\x1b[K")
        self.stream.flush()
        self._drawn = self._shown = True
