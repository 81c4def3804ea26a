"""Live changes: the TUI polls the workspace's one change check (what the MCP server
polls), so registry, tools and config edits reach it without a restart; and typing
re-ranks on the event loop without waiting for a worker."""

from __future__ import annotations

import json
from pathlib import Path

from apptools import (
    main_screen,
    names,
    new_app,
    ready,
    rows_for,
    showing,
    status,
    toast,
    wait_for,
)

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList, row_markers
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.config import config_path


def row_of(app: SkilldeckApp, name: str) -> str:
    """The marker cells of ``name``'s row in the results list."""
    results = main_screen(app).query_one(ResultsList)
    for hit in results.hits:
        if hit.skill.name == name:
            return row_markers(hit.skill, app.workspace).plain
    raise AssertionError(f"{name} is not listed")


async def test_registry_edit_disables_a_skill_without_restart(
    skills_root: Path, tmp_path: Path
) -> None:
    registry = tmp_path / "registry.json"
    app = new_app([skills_root], watch=True, watch_interval=0.05)
    app.workspace.settings.registry_path = registry
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert row_of(app, "pdf-forms")[2] == " "
        before = status(app)
        registry.write_text(json.dumps({"pdf-forms": {"enabled": False}}), encoding="utf-8")
        await wait_for(
            pilot,
            lambda: row_of(app, "pdf-forms")[2] == "⊘" and "disabled" in status(app),
            what="pdf-forms shown disabled, no restart",
            seen=lambda: (row_of(app, "pdf-forms"), status(app)),
        )
        assert status(app) != before


async def test_config_edit_says_a_restart_applies_it(skills_root: Path) -> None:
    app = new_app([skills_root], watch=True, watch_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        config = config_path()
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("confidence_threshold = 0.5\n", encoding="utf-8")
        await wait_for(pilot, lambda: app.workspace.settings_stale, what="the config seen stale")
        assert "restart" in await toast(pilot, "restart")


async def test_typing_ranks_at_once_when_the_index_is_ready(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        # No worker was needed: the list already answers the query typed.
        assert not [w for w in app.workers if w.group == "search" and not w.is_finished]
        screen = main_screen(app)
        assert screen.last_ranked is not None and screen.last_ranked.query == "pdf"
        assert (await rows_for(pilot, "pdf"))[0] == "pdf-forms"


async def test_typing_cancels_a_preview_still_rendering(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = main_screen(app)
        preview = screen.query_one(PreviewPane)
        other = app.workspace.catalog.get("git-release")
        assert other is not None and preview.skill is not other
        preview.show(other)  # starts rendering git-release's body
        assert preview.is_loading
        screen.query_one(SearchBox).value = "pdf"  # a keystroke lands meanwhile
        assert preview.skill is None  # the stale render was given up
        # the panes follow once typing pauses
        shown = await showing(pilot, "pdf-forms")
        current = screen.query_one(ResultsList).current
        assert current is not None and current.name == "pdf-forms"
        assert shown.skill is not None and shown.skill.path == current.path


async def test_a_skill_root_created_after_launch_is_watched(project: Path) -> None:
    """``mkdir ~/.claude/skills`` while the TUI runs: its skills are listed without
    ctrl+r (the stat baseline only covered the roots that existed at launch)."""
    app = new_app([], watch=True, watch_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert "late-comer" not in names(app)
        write_skill(
            Path.home() / ".claude" / "skills",
            "late-comer",
            description="Arrives after launch. Use when testing new roots.",
        )
        await wait_for(pilot, lambda: "late-comer" in names(app), what="late-comer listed")
        assert app.is_running
