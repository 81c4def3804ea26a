"""Helpers for the terminal UI tests: a small skills root, and waits on explicit conditions.

A test waits for what it then checks (the rows shown for a query, a screen pushed, a
skill in the preview, a toast) with :func:`wait_for`: it polls between Pilot pauses and
fails after :data:`TIMEOUT` seconds naming the condition and what the app showed. The
timeout only bounds a failure: a wait returns as soon as its condition holds, on a fast
or a loaded machine alike. No test sleeps for a fixed time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from textual.css.query import QueryError
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.main import make_app
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList

TIMEOUT = 30.0
"""Seconds a wait may take before its test fails (a bound on failure, never a delay)."""

LONG_LIVED = frozenset({"sessions-live"})
"""Worker groups that run for as long as their screen (not waited for)."""

ScreenT = TypeVar("ScreenT", bound=Screen[Any])


# ----------------------------------------------------------------- reading the app


def main_screen(app: SkilldeckApp) -> MainScreen:
    """The main screen, under any dialogs or screens pushed on top of it."""
    for screen in reversed(app.screen_stack):
        if isinstance(screen, MainScreen):
            return screen
    raise AssertionError(f"no main screen in {[type(s).__name__ for s in app.screen_stack]}")


def names(app: SkilldeckApp) -> list[str]:
    """Names of the skills listed on the main screen, top first."""
    return [h.skill.name for h in main_screen(app).query_one(ResultsList).hits]


def text_of(widget: object) -> str:
    """Plain text of what a Static shows (Rich renderables included)."""
    from io import StringIO

    from rich.console import Console

    assert isinstance(widget, Static)
    console = Console(file=StringIO(), width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


def plain(renderable: object, width: int = 200) -> str:
    """Plain text of a Rich renderable or Textual content (lines joined, right-stripped)."""
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=width, record=True, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def painted(app: SkilldeckApp, widget: Widget) -> str:
    """What the terminal shows inside ``widget``'s region now (lines right-stripped):
    the cells the compositor paints there, whatever widget drew them."""
    from io import StringIO

    from rich.console import Console

    width, height = app.size
    console = Console(file=StringIO(), width=width, height=height, record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    lines = console.export_text().splitlines()
    box = widget.region
    return "\n".join(line[box.x : box.right].rstrip() for line in lines[box.y : box.bottom])


def status(app: SkilldeckApp) -> str:
    """The main screen's status line."""
    return text_of(main_screen(app).query_one("#status", Static))


def header(app: SkilldeckApp) -> str:
    """The preview's frontmatter table (or the hint shown in its place)."""
    return text_of(main_screen(app).query_one("#frontmatter", Static))


def busy_workers(app: SkilldeckApp) -> list[str]:
    """Workers still pending or running, by group and name (long-lived ones left out)."""
    return [
        f"{w.group}:{w.name}"
        for w in app.workers
        if not w.is_finished and w.group not in LONG_LIVED
    ]


def describe(app: SkilldeckApp) -> str:
    """What the app shows now, for a failed wait's message."""
    focused = app.focused
    where = f"{type(focused).__name__}#{focused.id}" if focused is not None else "nothing"
    parts = [
        f"screen {type(app.screen).__name__}",
        f"focus {where}",
        f"discoveries {app.discoveries}",
        f"stage {app.stage!r}" if app.discovering else "not discovering",
        f"busy workers {busy_workers(app)}",
    ]
    try:
        screen = main_screen(app)
        preview = screen.query_one(PreviewPane)
        parts += [
            f"query {screen.query_text!r}",
            f"rows {names(app)[:8]}",
            f"listed version {screen.listed_version} of {app.catalog_version}",
            f"preview {preview.skill.name if preview.skill else None}"
            f"{' (loading)' if preview.is_loading else ''}",
        ]
    except (AssertionError, QueryError):
        pass
    toasts = [n.message for n in app._notifications]
    parts.append(f"toasts {toasts[-3:]}")
    return "; ".join(parts)


# ----------------------------------------------------------------- waiting


async def wait_for(
    pilot: Pilot[int],
    condition: Callable[[], object],
    *,
    what: str,
    seen: Callable[[], object] | None = None,
    timeout: float = TIMEOUT,
) -> None:
    """Pause until ``condition()`` is true; fail after ``timeout`` seconds.

    Args:
        pilot: The running app's pilot.
        condition: Checked after each pause (a query that finds nothing counts as false).
        what: The condition in words, for the failure message.
        seen: What to report on failure (default: :func:`describe` of the app).
        timeout: Seconds before failing (bounds a failure only).
    """
    app = pilot.app
    assert isinstance(app, SkilldeckApp)
    deadline = time.monotonic() + timeout
    error = ""
    while True:
        await pilot.pause()
        try:
            if condition():
                return
            error = ""
        except QueryError as exc:
            error = f" ({type(exc).__name__}: {exc})"
        if time.monotonic() > deadline:
            shown = seen() if seen is not None else describe(app)
            raise AssertionError(f"waited {timeout:.0f} s for {what}{error}; seen: {shown}")


def is_ready(app: SkilldeckApp) -> bool:
    """Discovery finished every stage, the main screen lists the catalog it left for the
    query in the search box, and the detail panes show the highlighted row."""
    screen = main_screen(app)
    ranked = screen.last_ranked
    current = screen.query_one(ResultsList).current
    preview = screen.query_one(PreviewPane)
    shown = preview.skill.path if preview.skill is not None else None
    return (
        app.discoveries > 0
        and not app.discovering
        and screen.listed_version == app.catalog_version
        and ranked is not None
        and ranked.query == screen.query_text
        and shown == (current.path if current is not None else None)
        and not preview.is_loading
    )


async def ready(pilot: Pilot[int]) -> None:
    """Wait until the first index is shown (see :func:`is_ready`)."""
    app = pilot.app
    assert isinstance(app, SkilldeckApp)
    await wait_for(
        pilot, lambda: is_ready(app), what="discovery done, its listing and details shown"
    )


async def settle(pilot: Pilot[int]) -> None:
    """Wait until the app is ready (:func:`is_ready`) and no worker is pending or running:
    for snapshots, which must paint one fixed state."""
    app = pilot.app
    assert isinstance(app, SkilldeckApp)
    await wait_for(
        pilot,
        lambda: is_ready(app) and not busy_workers(app),
        what="the index shown and every worker finished",
    )


async def rows_for(pilot: Pilot[int], query: str) -> list[str]:
    """Wait until the main screen lists its answer to ``query`` (typed in the search box,
    ranked for the current catalog); the names listed, top first."""
    app = pilot.app
    assert isinstance(app, SkilldeckApp)

    def answered() -> bool:
        screen = main_screen(app)
        return screen.query_text == query and is_ready(app)

    await wait_for(pilot, answered, what=f"the rows listed for {query!r}")
    return names(app)


def shows(app: SkilldeckApp, name: str) -> bool:
    """Whether the preview shows skill ``name`` with its body in place."""
    preview = main_screen(app).query_one(PreviewPane)
    return preview.skill is not None and preview.skill.name == name and not preview.is_loading


async def showing(pilot: Pilot[int], name: str) -> PreviewPane:
    """Wait until the detail panes show skill ``name`` (body rendered); the preview."""
    app = pilot.app
    assert isinstance(app, SkilldeckApp)
    await wait_for(pilot, lambda: shows(app, name), what=f"the preview showing {name!r}")
    return main_screen(app).query_one(PreviewPane)


async def screen_is(pilot: Pilot[int], kind: type[ScreenT]) -> ScreenT:
    """Wait until the top screen is a mounted ``kind``; that screen."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, kind) and app.screen.is_mounted,
        what=f"the {kind.__name__} on top",
    )
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def focused(pilot: Pilot[int], kind: type[Widget], id: str | None = None) -> Widget:
    """Wait until a ``kind`` (with ``id``, if given) has the focus; that widget."""
    app = pilot.app

    def has_focus() -> bool:
        widget = app.focused
        return isinstance(widget, kind) and (id is None or widget.id == id)

    await wait_for(pilot, has_focus, what=f"focus on {kind.__name__}{f'#{id}' if id else ''}")
    widget = app.focused
    assert widget is not None
    return widget


async def toast(pilot: Pilot[int], containing: str) -> str:
    """Wait until a notification containing ``containing`` was shown; its text."""
    app = pilot.app

    def found() -> str | None:
        return next((n.message for n in app._notifications if containing in n.message), None)

    await wait_for(pilot, found, what=f"a notification containing {containing!r}")
    message = found()
    assert message is not None
    return message


async def value_is(pilot: Pilot[int], box: Input, value: str) -> None:
    """Wait until ``box`` holds ``value`` (every key typed into it arrived)."""
    await wait_for(
        pilot,
        lambda: box.value == value,
        what=f"{box.id or 'the input'} holding {value!r}",
        seen=lambda: f"{box.value!r}",
    )


# ----------------------------------------------------------------- the skills and the app


def new_app(roots: list[Path], **kwargs: object) -> SkilldeckApp:
    """The app as tests run it: no watcher, no polling timer, no debounce, no embeddings,
    and dialogs answer keys at once (``key_guard`` > 0 tests the real delay)."""
    options: dict[str, object] = {
        "watch": False,
        "poll_interval": 0,
        "debounce": 0,
        "key_guard": 0,
        "semantic": False,
    }
    options.update(kwargs)
    return make_app(roots, **options)  # type: ignore[arg-type]


def burst(app: SkilldeckApp, keys: list[tuple[str, str | None]]) -> None:
    """Queue key events at once, as a terminal delivers fast typing in one read."""
    from textual import events

    for key, char in keys:
        app.post_message(events.Key(key, char))


def age_files(root: Path) -> None:
    """Date everything under ``root`` 10 s back: files changed within a timestamp tick are
    read again at the next launch, and no early rows are kept for them."""
    when = time.time_ns() - 10_000_000_000
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(when, when))


async def launched_once(root: Path) -> list[str]:
    """Age ``root`` (:func:`age_files`), launch the app over it once so its store keeps the
    listing's first rows, and return the names it listed."""
    age_files(root)
    first = new_app([root])
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        return names(first)
