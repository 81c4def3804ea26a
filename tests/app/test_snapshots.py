"""SVG snapshots of the main screen, review mode and the dialogs.

Skills are written to a fixed root (:data:`apptools.SNAPSHOT_ROOT`) so no random temporary
path is painted; timings and cursor blink are off (``deterministic=True``).
Update with ``pytest tests/app/test_snapshots.py --snapshot-update`` after checking the diff.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from apptools import SNAPSHOT_ROOT, build_root, new_app, settle
from textual.pilot import Pilot

from skilldeck.app.app import SkilldeckApp

SnapCompare = Callable[..., bool]


@pytest.fixture
def snap_app(monkeypatch: pytest.MonkeyPatch) -> SkilldeckApp:
    monkeypatch.delenv("NO_COLOR", raising=False)  # colours are part of what is checked
    build_root(SNAPSHOT_ROOT)
    return new_app([SNAPSHOT_ROOT], deterministic=True)


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


def test_disable_confirm_dialog(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 30), run_before=keys(*"pdf", "down", "f7"))


def test_help_screen(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 36), run_before=keys("f1"))


def test_main_screen_light_theme(snap_compare: SnapCompare, snap_app: SkilldeckApp) -> None:
    assert snap_compare(snap_app, terminal_size=(100, 30), run_before=keys("down", "ctrl+t", "2"))
