"""SVG snapshots of the main screen, review mode and the dialogs.

Each test writes its skills to a folder of its own, ``/tmp/skilldeck-snap-<8 hex>``: a
path as long as :data:`SHOWN_ROOT`, which the screenshot shows in its place, so the SVGs
depend on neither the folder nor the host (and two runs never share a folder). Timings
and cursor blink are off (``deterministic=True``); each key waits until every worker is
done and the index is shown (:func:`apptools.settle`).
Update with ``pytest tests/app/test_snapshots.py --snapshot-update`` after checking the diff.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from apptools import new_app, settle
from textual.pilot import Pilot

from conftest import build_root
from skilldeck.app.app import SkilldeckApp

SnapCompare = Callable[..., bool]

SHOWN_ROOT = "/tmp/skilldeck-snapshot-root"
"""The skills root as the snapshots show it."""


@pytest.fixture
def snap_root() -> Iterator[Path]:
    """This test's skills folder, its path as long as :data:`SHOWN_ROOT`."""
    folder = (Path("/tmp") / f"skilldeck-snap-{secrets.token_hex(4)}").resolve()
    assert len(str(folder)) == len(SHOWN_ROOT), folder
    folder.mkdir()
    try:
        yield build_root(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def snap_app(monkeypatch: pytest.MonkeyPatch, snap_root: Path) -> SkilldeckApp:
    monkeypatch.delenv("NO_COLOR", raising=False)  # colours are part of what is checked
    app = new_app([snap_root], deterministic=True)
    export = app.export_screenshot

    def export_screenshot(*, title: str | None = None, simplify: bool = False) -> str:
        return export(title=title, simplify=simplify).replace(str(snap_root), SHOWN_ROOT)

    app.export_screenshot = export_screenshot  # type: ignore[method-assign]
    return app


def keys(*presses: str) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        await settle(pilot)
        for key in presses:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def test_main_screen(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(120, 40), run_before=keys("down", "down"))


def test_main_screen_small(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(80, 24), run_before=keys("v", "a", "g"))


def test_review_mode(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(120, 40), run_before=keys("down", "f4"))


def test_force_load_dialog(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(
        snap_app, terminal_size=(120, 40), run_before=keys(*"pdf", "down", "f6", *"a.pdf")
    )


def test_force_load_dialog_small(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    """One-line fields and buttons: the text keeps most of an 80x24 screen."""
    assert snap_compare(
        snap_app, terminal_size=(80, 24), run_before=keys(*"pdf", "down", "f6", *"a.pdf")
    )


def test_disable_confirm_dialog(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 30), run_before=keys(*"pdf", "down", "f7"))


def test_help_screen(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 36), run_before=keys("f1"))


def test_main_screen_light_theme(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 30), run_before=keys("down", "ctrl+t", "2"))
