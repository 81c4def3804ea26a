"""Pilot tests of the main screen's keys: the footer's order and labels, fast typing,
keys right after a move into the results, the tab keys, and what fits at 80x24."""

from __future__ import annotations

from pathlib import Path

from apptools import burst, focused, main_screen, new_app, ready, screen_is, value_is, wait_for
from rich.cells import cell_len
from textual.widgets import Input, TabbedContent
from textual.widgets._footer import FooterKey

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.screens.help_screen import HelpScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.resources_list import ResourcesList
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox

SMALL = (80, 24)


def footer(app: SkilldeckApp) -> list[tuple[str, str]]:
    """(key shown, label) of each footer entry, left to right."""
    keys = sorted(app.screen.query(FooterKey), key=lambda k: k.region.x)
    return [(k.key_display, k.description) for k in keys]


async def footer_shows(app: SkilldeckApp, pilot: object, entry: tuple[str, str]) -> None:
    """Wait until the footer lists ``entry`` (it is rebuilt after the bindings change)."""
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: entry in footer(app),
        what=f"{entry} in the footer",
        seen=lambda: footer(app),
    )


def search_box(app: SkilldeckApp) -> SearchBox:
    return main_screen(app).query_one("#search", SearchBox)


async def test_small_screen_search_placeholder_keeps_whole_words(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        search = app.screen.query_one("#search", Input)
        assert cell_len(search.placeholder) <= search.content_region.width
        assert "F1 help" in search.placeholder
        assert search.render_line(0).text.strip() == search.placeholder
    wide = new_app([skills_root])
    async with wide.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        assert wide.screen.query_one("#search", Input).placeholder.startswith("Search skills")


async def test_footer_lists_f_keys_in_order_and_fits_80_columns(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        keys = [k for k, _label in footer(app)]
        assert keys == ["f2", "f3", "f4", "f5", "f6", "f7", "f8", "^q"]
        await pilot.press("f2")
        await footer_shows(app, pilot, ("f2", "Rendered"))
        assert footer(app)[0] == ("f2", "Rendered")
        last = max(app.screen.query(FooterKey), key=lambda k: k.region.right)
        assert last.region.right <= SMALL[0] and last.description == "Quit"
        await pilot.press("f1")  # not listed here, still works
        await screen_is(pilot, HelpScreen)
    wide = new_app([skills_root])
    async with wide.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        keys = [k for k, _label in footer(wide)]
        assert keys == ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "^q"]


async def test_raw_key_is_labelled_with_the_view_it_switches_to(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        preview = app.screen.query_one(PreviewPane)
        assert ("f2", "Raw") in footer(app)
        await pilot.press("down", "f2")
        await footer_shows(app, pilot, ("f2", "Rendered"))
        assert preview.raw
        await pilot.press("tab")  # into the raw source: the letter key shows
        await footer_shows(app, pilot, ("r", "Rendered"))
        await pilot.press("r")
        await footer_shows(app, pilot, ("r", "Raw"))
        assert not preview.raw
        await pilot.press("r", "r")  # at full speed: raw, then rendered again
        await footer_shows(app, pilot, ("r", "Raw"))
        assert not preview.raw


async def test_ctrl_u_then_fast_typing_keeps_the_new_text(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"abc")
        box = search_box(app)
        await value_is(pilot, box, "abc")
        burst(app, [("ctrl+u", "\x15"), *((c, c) for c in "exel")])
        await value_is(pilot, box, "exel")
        burst(app, [("backspace", "\x7f"), ("backspace", "\x7f"), ("z", "z")])
        await value_is(pilot, box, "exz")


async def test_keys_right_after_down_go_to_the_results(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        preview = main_screen(app).query_one(PreviewPane)
        burst(app, [*((c, c) for c in "release"), ("down", None), ("f2", None)])
        await wait_for(pilot, lambda: preview.raw, what="f2 acted on the results")
        assert search_box(app).value == "release"
        assert isinstance(app.focused, ResultsList)
        # Letters typed in the results list go back to the query, in order.
        burst(app, [("down", None), *((c, c) for c in " notes"), ("up", None)])
        await value_is(pilot, search_box(app), "release notes")
        await focused(pilot, SearchBox)


async def test_tabs_from_the_search_box_and_one_tab_into_the_pane(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        await value_is(pilot, search_box(app), "pdf")
        tabs = app.screen.query_one("#tabs", TabbedContent)
        await pilot.press("alt+2")
        await wait_for(pilot, lambda: tabs.active == "tab-diagnostics", what="Diagnostics")
        burst(app, [("cent_sign", "¢")])  # what a terminal's alt+4 arrives as
        await wait_for(pilot, lambda: tabs.active == "tab-files", what="the Files tab")
        assert search_box(app).value == "pdf"
        await pilot.press("down", "tab")
        await focused(pilot, ResourcesList)
        await pilot.press("shift+tab", "1")
        await wait_for(pilot, lambda: tabs.active == "tab-preview", what="the Preview tab")


async def test_narrow_screen_keeps_quit_tabs_and_names(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("down")
        await focused(pilot, ResultsList)
        shot = app.export_screenshot()
        assert "Quit" in shot and "Explain" in shot and "git-release" in shot
        await pilot.press("f5")
        await screen_is(pilot, SessionsScreen)
        assert "Quit" in app.export_screenshot()
