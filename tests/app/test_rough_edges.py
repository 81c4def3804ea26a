"""Pilot tests for the rough edges a new user found (issue #13) and for hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import build_root, new_app, settle, text_of
from textual import events
from textual.widgets import Static, TextArea

from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.search_box import SearchBox


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path / "skills")


def burst(app: object, keys: list[tuple[str, str | None]]) -> None:
    """Queue key events at once, as a terminal delivers fast typing in one read."""
    for key, char in keys:
        app.post_message(events.Key(key, char))  # type: ignore[attr-defined]


async def test_ctrl_u_then_fast_typing_keeps_the_new_text(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"abc")
        await settle(pilot)
        burst(app, [("ctrl+u", "\x15"), *((c, c) for c in "exel")])
        await settle(pilot)
        assert app.screen.query_one("#search", SearchBox).value == "exel"
        burst(app, [("backspace", "\x7f"), ("backspace", "\x7f"), ("z", "z")])
        await settle(pilot)
        assert app.screen.query_one("#search", SearchBox).value == "exz"


def header(app: object) -> str:
    return text_of(app.screen.query_one("#frontmatter", Static))  # type: ignore[attr-defined]


async def test_disabling_updates_the_header_at_once(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down")
        await settle(pilot)
        assert "status      enabled" in header(app)
        await pilot.press("e", "y")
        await settle(pilot)
        assert "disabled (registry)" in header(app)
        await pilot.press("e", "y")
        await settle(pilot)
        assert "status      enabled" in header(app)


async def test_header_and_body_change_together(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        preview = screen.query_one(PreviewPane)
        skills = {s.name: s for s in app.workspace.catalog.skills}
        screen.show_skill(skills["pdf-forms"])
        await settle(pilot)
        assert not preview.is_loading
        screen.show_skill(skills["git-release"])
        # The header names git-release at once; pdf-forms's body is covered until
        # git-release's is in place.
        assert "git-release" in header(app)
        assert preview.is_loading
        await settle(pilot)
        assert not preview.is_loading
        assert "Step 3: do the thing" in preview.query_one("#raw", TextArea).text
