"""Live changes: the TUI polls the workspace's one change check (what the MCP server
polls), so registry, tools and config edits reach it without a restart; and typing
re-ranks on the event loop without waiting for a worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptools import build_root, new_app, settle, text_of
from textual.widgets import Static

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList, row_markers
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.config import config_path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path / "skills")


async def wait_until(app: SkilldeckApp, pilot: object, check: object, seconds: float = 10) -> None:
    """Pause until ``check()`` holds (the poll runs every ``watch_interval``)."""
    for _ in range(int(seconds / 0.05)):
        if check():  # type: ignore[operator]
            return
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("the change never reached the app")


def row_of(app: SkilldeckApp, name: str) -> str:
    """The marker cells of ``name``'s row in the results list."""
    results = app.screen.query_one(ResultsList)
    for hit in results.hits:
        if hit.skill.name == name:
            return row_markers(hit.skill, app.workspace).plain
    raise AssertionError(f"{name} is not listed")


async def test_registry_edit_disables_a_skill_without_restart(root: Path, tmp_path: Path) -> None:
    registry = tmp_path / "registry.json"
    app = new_app([root], watch=True, watch_interval=0.05)
    app.workspace.settings.registry_path = registry
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert row_of(app, "pdf-forms")[2] == " "
        before = text_of(app.screen.query_one("#status", Static))
        registry.write_text(json.dumps({"pdf-forms": {"enabled": False}}), encoding="utf-8")

        def disabled() -> bool:
            skill = app.workspace.catalog.get("pdf-forms")
            return skill is not None and not skill.enabled

        await wait_until(app, pilot, disabled)
        await settle(pilot)
        assert row_of(app, "pdf-forms")[2] == "⊘"  # the row shows it, no restart
        after = text_of(app.screen.query_one("#status", Static))
        assert "disabled" in after and after != before


async def test_config_edit_says_a_restart_applies_it(root: Path) -> None:
    app = new_app([root], watch=True, watch_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        config = config_path()
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("confidence_threshold = 0.5\n", encoding="utf-8")
        await wait_until(app, pilot, lambda: app.workspace.settings_stale)
        await settle(pilot)
        await wait_until(
            app, pilot, lambda: any("restart" in n.message for n in app._notifications)
        )


async def test_typing_ranks_at_once_when_the_index_is_ready(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf")
        # No worker was needed: the list already answers the query typed.
        assert not [w for w in app.screen.workers if w.group == "search" and not w.is_finished]
        names = [h.skill.name for h in app.screen.query_one(ResultsList).hits]
        assert names[0] == "pdf-forms"


async def test_typing_cancels_a_preview_still_rendering(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        preview = screen.query_one(PreviewPane)
        other = app.workspace.catalog.get("git-release")
        assert other is not None and preview.skill is not other
        preview.show(other)  # starts rendering git-release's body
        assert preview.is_loading
        screen.query_one(SearchBox).value = "pdf"  # a keystroke lands meanwhile
        assert preview.skill is None  # the stale render was given up
        await settle(pilot)
        await pilot.pause(0.5)  # the panes follow once typing pauses
        await settle(pilot)
        current = screen.query_one(ResultsList).current
        assert current is not None and current.name == "pdf-forms"
        assert preview.skill is not None and preview.skill.path == current.path
        assert not preview.is_loading
