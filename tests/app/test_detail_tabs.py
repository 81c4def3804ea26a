"""Pilot tests of the main screen's detail tabs: diagnostics, tools, files and explain."""

from __future__ import annotations

import re
from pathlib import Path

from apptools import (
    focused,
    main_screen,
    new_app,
    plain,
    ready,
    screen_is,
    showing,
    text_of,
    value_is,
    wait_for,
)
from textual.widgets import Input, Static, TabbedContent, TextArea

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.dialogs.resource_dialog import ResourceDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.widgets.diagnostics_list import DiagnosticsList
from skilldeck.app.widgets.explain_view import HINT as EXPLAIN_HINT
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.resources_list import ResourcesList
from skilldeck.app.widgets.tools_table import ToolsTable
from skilldeck.core.tools import ToolAvailability
from skilldeck.core.tools.model import ToolStatus


def active_tab(app: SkilldeckApp) -> str:
    return main_screen(app).query_one("#tabs", TabbedContent).active


def explanation(app: SkilldeckApp) -> str:
    return text_of(main_screen(app).query_one("#explain-text", Static))


def explained(app: SkilldeckApp) -> bool:
    """The Explain tab shows an explanation (not the hint shown before one is asked)."""
    return active_tab(app) == "tab-explain" and EXPLAIN_HINT not in explanation(app)


def tool_rows(app: SkilldeckApp) -> list[list[str]]:
    table = main_screen(app).query_one(ToolsTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_selecting_a_diagnostic_jumps_to_its_line(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"vague", "down", "2")
        await showing(pilot, "vague")
        await wait_for(pilot, lambda: active_tab(app) == "tab-diagnostics", what="Diagnostics")
        diagnostics = app.screen.query_one(DiagnosticsList)
        codes = [d.code for d in diagnostics.diagnostics]
        assert "SL103" in codes
        diagnostics.focus()
        await focused(pilot, DiagnosticsList)
        diagnostics.highlighted = codes.index("SL103")
        await pilot.press("enter")
        raw = app.screen.query_one("#raw", TextArea)
        await wait_for(
            pilot,
            lambda: active_tab(app) == "tab-preview" and raw.cursor_location[0] == 6,
            what="the raw source at line 7",
            seen=lambda: f"tab {active_tab(app)}, cursor {raw.cursor_location}",
        )
        assert main_screen(app).query_one("#raw", TextArea).has_focus
        assert "missing.md" in raw.selected_text


async def test_tools_pane_shows_availability(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"release", "down", "3")
        await showing(pilot, "git-release")
        assert active_tab(app) == "tab-tools"
        assert tool_rows(app) == [["NoSuchTool", "missing", "required", "-"]]
        await pilot.press("escape", "escape")
        await value_is(pilot, app.screen.query_one("#search", Input), "")
        await pilot.press(*"pdf form", "down")
        await showing(pilot, "pdf-forms")
        rows = tool_rows(app)
        assert {r[0]: r[1] for r in rows} == {"Read": "available", "Bash": "available"}
        assert all(r[3] == "preset" for r in rows)


async def test_resource_file_opens_in_a_dialog(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down", "4")
        await showing(pilot, "pdf-forms")
        await wait_for(pilot, lambda: active_tab(app) == "tab-files", what="the Files tab")
        app.screen.query_one("#resources").focus()
        await focused(pilot, ResourcesList)
        await pilot.press("enter")
        dialog = await screen_is(pilot, ResourceDialog)
        content = dialog.query_one("#content", TextArea)
        await wait_for(pilot, lambda: "case sensitive" in content.text, what="the file's text")
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)


async def test_explain_shows_signals_for_the_highlighted_result(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf form", "down", "f3")
        await wait_for(pilot, lambda: explained(app), what="the explanation")
        text = explanation(app)
        assert "pdf-forms" in text and "ranked #1" in text and "signal" in text


async def test_explain_follows_the_highlight(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"release notes pdf", "down", "f3")
        await wait_for(pilot, lambda: explained(app), what="the first result explained")
        first = explanation(app)
        assert "ranked #1" in first
        await pilot.press("down")
        await wait_for(
            pilot,
            lambda: explained(app) and explanation(app) != first,
            what="the explanation following the highlight",
        )
        second = explanation(app)
        assert "ranked #2" in second or "not among" in second, second
        assert "still building" not in second


async def test_enter_on_a_diagnostic_keeps_the_search_text(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"vague", "down", "2")
        await showing(pilot, "vague")
        await wait_for(pilot, lambda: active_tab(app) == "tab-diagnostics", what="Diagnostics")
        await pilot.press("tab", "enter")
        preview = main_screen(app).query_one(PreviewPane)
        await wait_for(pilot, lambda: preview.raw, what="the raw source at the finding's line")
        assert app.screen.query_one("#search", Input).value == "vague"


async def test_small_screen_tools_table_ends_long_names_with_an_ellipsis(
    skills_root: Path,
) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down", "3")
        await showing(pilot, "pdf-forms")
        table = app.screen.query_one(ToolsTable)
        entries = [
            ToolStatus("Read", False, "available", "preset"),
            ToolStatus("mcp__github_enterprise__create_pull_request", True, "available", "mcp:gh"),
            ToolStatus("Fetch", True, "available", "mcp:github-enterprise-server-eu"),
        ]
        table.show(ToolAvailability(entries=entries))
        await wait_for(pilot, lambda: table.row_count == 3, what="the three tools listed")
        columns = list(table.columns.values())
        used = sum(c.get_render_width(table) for c in columns)
        assert used <= table.scrollable_content_region.width
        assert [str(c.label) for c in columns] == ["Tool", "Status", "Required", "Source"]
        cells = [plain(cell) for cell in table.get_row_at(1)]
        assert cells[0].endswith("…") and cells[0].startswith("mcp__")
        assert plain(table.get_row_at(2)[3]).endswith("…")
        assert plain(table.get_row_at(0)[3]) == "preset"


async def test_explain_adds_the_weighted_signals_up_to_the_score(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"fill pdf form", "down", "f3")
        await wait_for(pilot, lambda: explained(app), what="the explanation")
        text = explanation(app)
        assert "how the score adds up" in text
        points = [
            float(m.group(1))
            for m in re.finditer(
                r"^(?:bm25|coverage|name)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", text, re.M
            )
        ]
        assert len(points) == 3
        mean = re.search(r"weighted mean\s+([\d.]+)", text)
        score = re.search(r"calibrated score\s+([\d.]+)", text)
        assert mean and score
        assert abs(sum(points) - float(mean.group(1))) < 0.002
        assert f"score {score.group(1)}" in text  # the same score as the headline
