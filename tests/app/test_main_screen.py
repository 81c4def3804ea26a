"""Pilot tests of the main screen: search, results, preview, diagnostics, tools, files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from apptools import build_root, new_app, settle, text_of
from textual.widgets import Input, Markdown, Static, TabbedContent, TextArea

from conftest import write_skill
from skilldeck.app.dialogs.resource_dialog import ResourceDialog
from skilldeck.app.ranked import RESULT_LIMIT, Hit, Ranked
from skilldeck.app.screens.help_screen import HelpScreen
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.widgets.diagnostics_list import DiagnosticsList
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import MORE_ID, REST_DELAY, ResultsList, row_markers
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.app.widgets.tools_table import ToolsTable


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path / "skills")


def names(app: object) -> list[str]:
    screen = app.screen  # type: ignore[attr-defined]
    return [h.skill.name for h in screen.query_one(ResultsList).hits]


def status(app: object) -> str:
    return text_of(app.screen.query_one("#status", Static))  # type: ignore[attr-defined]


async def test_start_lists_all_sorted_with_search_focused(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert isinstance(app.focused, Input) and app.focused.id == "search"
        assert names(app) == ["broken-yaml", "git-release", "pdf-forms", "vague"]
        assert status(app).startswith("3 skills (+1 invalid)")  # as `skilldeck list` counts
        assert app.screen.query_one("#progress").display is False


async def test_typing_reranks_and_stale_answers_are_dropped(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"release")
        await settle(pilot)
        assert names(app)[0] == "git-release"
        assert status(app).startswith("1 match")
        screen = app.screen
        assert isinstance(screen, MainScreen)
        stale = Ranked("pdf", [Hit(app.workspace.all_sorted()[2])], 1, 0.1)
        screen._apply(stale, None)
        assert names(app)[0] == "git-release"
        await pilot.press("escape")
        await settle(pilot)
        assert len(names(app)) == 4


async def test_debounced_typing_settles_on_the_last_query(root: Path) -> None:
    app = new_app([root], debounce=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf")
        await pilot.pause(0.1)
        await settle(pilot)
        assert names(app)[0] == "pdf-forms"


async def test_results_are_capped_with_more_row(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(RESULT_LIMIT + 30):
        write_skill(root, f"skill-{i:04d}", description=f"Skill number {i}. Use when testing.")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultsList)
        await pilot.pause(REST_DELAY + 0.1)
        assert len(results.hits) == RESULT_LIMIT
        assert results.option_count == RESULT_LIMIT + 1
        last = results.get_option_at_index(results.option_count - 1)
        assert last.id == MORE_ID and "+30 more" in str(last.prompt)
        assert status(app).startswith(f"{RESULT_LIMIT + 30} skills")


async def test_row_markers_show_errors_warnings_tools_disabled_shadowed(
    root: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    write_skill(other, "pdf-forms", description="A second pdf-forms. Use when shadowing.")
    registry = tmp_path / "registry.json"
    app = new_app([root, other])
    app.workspace.settings.registry_path = registry
    registry.write_text(json.dumps({"vague": {"enabled": False}}), encoding="utf-8")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        state = app.workspace
        marks = {(s.name, s.root): row_markers(s, state).plain for s in state.all_sorted()}
        assert marks[("broken-yaml", root)][0] == "✖"
        assert marks[("vague", root)][1] == "▲"
        assert marks[("vague", root)][2] == "⊘"
        assert marks[("git-release", root)][4] == "⚠"
        assert marks[("pdf-forms", root)][3] == "◐"
        assert marks[("pdf-forms", other)][3] == " "


async def test_preview_frontmatter_markdown_and_raw_toggle(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down")
        await settle(pilot)
        preview = app.screen.query_one(PreviewPane)
        assert preview.skill is not None and preview.skill.name == "pdf-forms"
        table = text_of(app.screen.query_one("#frontmatter", Static))
        assert "Fills and flattens PDF forms" in table
        assert app.screen.query_one("#md", Markdown).display
        await pilot.press("f2")
        await settle(pilot)
        raw = app.screen.query_one("#raw", TextArea)
        assert preview.raw and raw.show_line_numbers and raw.read_only
        assert raw.text.startswith("---\nname: pdf-forms")


async def test_large_body_uses_the_cheaper_renderer(tmp_path: Path) -> None:
    root = tmp_path / "big"
    body = "# Big\n\n" + "\n".join(f"- item {i} with some words" for i in range(900))
    write_skill(root, "big-skill", description="A big one. Use when testing size.", body=body)
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#md", Markdown).display
        plain = app.screen.query_one("#md-plain", Static)
        assert plain.display


async def test_selecting_a_diagnostic_jumps_to_its_line(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"vague", "down", "2")
        await settle(pilot)
        tabs = app.screen.query_one("#tabs", TabbedContent)
        assert tabs.active == "tab-diagnostics"
        diagnostics = app.screen.query_one(DiagnosticsList)
        codes = [d.code for d in diagnostics.diagnostics]
        assert "SL103" in codes
        diagnostics.focus()
        diagnostics.highlighted = codes.index("SL103")
        await pilot.press("enter")
        await settle(pilot)
        assert tabs.active == "tab-preview"
        raw = app.screen.query_one("#raw", TextArea)
        assert app.screen.query_one(PreviewPane).raw
        assert raw.cursor_location[0] == 6  # line 7, 0-based
        assert "missing.md" in raw.selected_text


async def test_tools_pane_shows_availability(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"release", "down", "3")
        await settle(pilot)
        table = app.screen.query_one(ToolsTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows == [["NoSuchTool", "missing", "required", "-"]]
        await pilot.press("escape", "escape")
        await pilot.press(*"pdf form", "down")
        await settle(pilot)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert {r[0]: r[1] for r in rows} == {"Read": "available", "Bash": "available"}
        assert all(r[3] == "preset" for r in rows)


async def test_resource_file_opens_in_a_dialog(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "4")
        await settle(pilot)
        resources = app.screen.query_one("#resources")
        resources.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ResourceDialog)
        assert "case sensitive" in app.screen.query_one("#content", TextArea).text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_explain_shows_signals_for_the_highlighted_result(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf form", "down", "f3")
        await settle(pilot)
        assert app.screen.query_one("#tabs", TabbedContent).active == "tab-explain"
        text = text_of(app.screen.query_one("#explain-text", Static))
        assert "pdf-forms" in text and "ranked #1" in text and "signal" in text


async def test_explain_follows_the_highlight(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"release notes pdf", "down", "f3")
        await settle(pilot)
        first = text_of(app.screen.query_one("#explain-text", Static))
        await pilot.press("down")
        await settle(pilot)
        second = text_of(app.screen.query_one("#explain-text", Static))
        assert "ranked #2" in second or "not among" in second, second
        assert "still building" not in second
        assert first != second


async def test_live_change_reindexes_the_changed_skill(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        path = write_skill(
            root, "zebra-care", description="Feeds zebras. Use when a zebra is hungry."
        )
        await app.apply_changes([path])
        await settle(pilot)
        assert "zebra-care" in names(app)
        await pilot.press(*"zebra")
        await settle(pilot)
        assert names(app)[0] == "zebra-care"
        path.unlink()
        await app.apply_changes([path])
        await settle(pilot)
        assert "zebra-care" not in names(app)


async def test_file_watcher_picks_up_a_new_skill(root: Path) -> None:
    app = new_app([root], watch=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for attempt in range(200):  # up to ~10 s on a busy machine
            if attempt % 40 == 0:  # (re)write: the watcher may have started after a write
                write_skill(
                    root,
                    "watched-skill",
                    description=f"Appears live ({attempt}). Use when watching.",
                )
            await pilot.pause(0.05)
            if app.workspace.catalog.get("watched-skill") is not None:
                break
        await settle(pilot)
        assert "watched-skill" in names(app)


async def test_help_palette_theme_and_quit(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"git-rel")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        current = app.screen.query_one(ResultsList).current
        assert current is not None and current.name == "git-release"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"review mode")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"explain ranking")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.query_one("#tabs", TabbedContent).active == "tab-explain"
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_small_terminal_and_mouse(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultsList)
        await pilot.click(ResultsList, offset=(10, 3))
        await settle(pilot)
        assert results.current is not None and results.current.name == "git-release"
        await pilot.click("#tabs Tab#--content-tab-tab-diagnostics")
        assert app.screen.query_one("#tabs", TabbedContent).active == "tab-diagnostics"


async def test_missing_root_becomes_a_notification(tmp_path: Path) -> None:
    app = new_app([tmp_path / "nowhere"])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert names(app) == []
        assert any("SD201" in n.message for n in app._notifications)


async def test_links_in_the_preview_open_files_safely(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down")
        await settle(pilot)
        md = app.screen.query_one("#md", Markdown)
        md.post_message(Markdown.LinkClicked(md, "references/guide.md"))
        await settle(pilot)
        assert isinstance(app.screen, ResourceDialog)
        assert "case sensitive" in app.screen.query_one("#content", TextArea).text
        await pilot.press("escape")
        md.post_message(Markdown.LinkClicked(md, "../../../etc/passwd"))
        await settle(pilot)
        assert isinstance(app.screen, ResourceDialog)
        assert "INVALID_PARAM" in text_of(app.screen.query_one("#facts", Static))
        assert app.screen.query_one("#content", TextArea).text == ""


async def test_reordered_rows_reuse_renders_and_click_the_right_skill(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        results = app.screen.query_one(ResultsList)
        hits = list(results.hits)
        assert len(results._strip_cache) >= len(hits)
        cached = len(results._strip_cache)
        reversed_hits = hits[::-1]
        results.show(reversed_hits, len(reversed_hits), app.workspace)
        await pilot.pause()
        # Same rows: only the two whose highlight changed (old and new first row) are drawn.
        assert len(results._strip_cache) == cached + 2
        assert [h.skill.name for h in results.hits] == [h.skill.name for h in reversed_hits]
        first_line = "".join(s.text for s in results.render_line(0))
        assert reversed_hits[0].skill.name in first_line
        await pilot.click(ResultsList, offset=(10, 0))
        await settle(pilot)
        assert results.current is not None
        assert results.current.name == reversed_hits[0].skill.name
        await pilot.click(ResultsList, offset=(10, 2))
        await settle(pilot)
        assert results.current.name == reversed_hits[1].skill.name


async def test_typing_repaints_the_search_box_without_a_screen_reflow(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#search", SearchBox)
        layouts = 0
        original = box.refresh

        def counting(*regions: Any, **kwargs: Any) -> SearchBox:
            nonlocal layouts
            layouts += bool(kwargs.get("layout"))
            return original(*regions, **kwargs)

        box.refresh = counting  # type: ignore[method-assign]
        await pilot.press(*"zz")
        await pilot.pause()
        assert box.value == "zz" and layouts == 0
        long = "pdf form filling with many words " * 3
        await pilot.press(*long)
        await settle(pilot)
        assert box.value == "zz" + long
        assert box.virtual_size.width > box.content_region.width  # wider than the box
        assert box.scroll_offset.x > 0  # ...so it scrolled to keep the cursor in view
        assert box.cursor_screen_offset.x < box.region.right


async def test_store_repair_notice_is_shown_once(root: Path, tmp_path: Path) -> None:
    from skilldeck.core.store import LocalStore

    home = tmp_path / "home"
    home.mkdir()
    (home / "store.sqlite3").write_bytes(b"not a database at all" * 100)
    store = LocalStore.open(home)
    app = new_app([root], store=store)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = [n.message for n in app._notifications if "local store" in n.message]
        assert len(shown) == 1 and "rebuilt" in shown[0]
        assert names(app) == ["broken-yaml", "git-release", "pdf-forms", "vague"]
