"""Pilot tests of the main screen: search, results, status line, detail tabs, live
changes, the palette and the mouse."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from apptools import (
    focused,
    header,
    main_screen,
    names,
    new_app,
    plain,
    ready,
    rows_for,
    screen_is,
    status,
    toast,
    value_is,
    wait_for,
)
from textual.widgets import Input, Static, TabbedContent

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.ranked import RESULT_LIMIT, Hit, Ranked
from skilldeck.app.screens.help_screen import HelpScreen
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.widgets.results_list import MORE_ID, ResultsList, row_markers
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.cli.main import main as cli_main
from skilldeck.core.search import too_common


def active_tab(app: SkilldeckApp) -> str:
    return main_screen(app).query_one("#tabs", TabbedContent).active


async def test_start_lists_all_sorted_with_search_focused(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert isinstance(app.screen, MainScreen)
        await focused(pilot, Input, "search")
        assert names(app) == ["broken-yaml", "git-release", "pdf-forms", "vague"]
        assert status(app).startswith("3 skills (+1 invalid)")  # as `skilldeck list` counts
        assert app.screen.query_one("#progress").display is False


async def test_typing_reranks_and_stale_answers_are_dropped(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"release")
        assert (await rows_for(pilot, "release"))[0] == "git-release"
        assert status(app).startswith("1 match")
        screen = main_screen(app)
        stale = Ranked("pdf", [Hit(app.workspace.all_sorted()[2])], 1, 0.1)
        screen._apply(stale, None, app.catalog_version)
        assert names(app)[0] == "git-release"
        await pilot.press("escape")
        assert len(await rows_for(pilot, "")) == 4


async def test_debounced_typing_settles_on_the_last_query(skills_root: Path) -> None:
    app = new_app([skills_root], debounce=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        assert (await rows_for(pilot, "pdf"))[0] == "pdf-forms"


async def test_results_are_capped_with_more_row(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(RESULT_LIMIT + 30):
        write_skill(root, f"skill-{i:04d}", description=f"Skill number {i}. Use when testing.")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        results = app.screen.query_one(ResultsList)
        # The rows past the first screenful are added once typing pauses.
        await wait_for(
            pilot,
            lambda: results.option_count == RESULT_LIMIT + 1,
            what=f"{RESULT_LIMIT} rows and the +N more row",
            seen=lambda: f"{results.option_count} options",
        )
        assert len(results.hits) == RESULT_LIMIT
        last = results.get_option_at_index(results.option_count - 1)
        assert last.id == MORE_ID and "+30 more" in str(last.prompt)
        assert status(app).startswith(f"{RESULT_LIMIT + 30} skills")


async def test_row_markers_show_errors_warnings_tools_disabled_shadowed(
    skills_root: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    write_skill(other, "pdf-forms", description="A second pdf-forms. Use when shadowing.")
    registry = tmp_path / "registry.json"
    app = new_app([skills_root, other])
    app.workspace.settings.registry_path = registry
    registry.write_text('{"vague": {"enabled": false}}', encoding="utf-8")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        state = app.workspace
        marks = {(s.name, s.root): row_markers(s, state).plain for s in state.all_sorted()}
        assert marks[("broken-yaml", skills_root)][0] == "✖"
        assert marks[("vague", skills_root)][1] == "▲"
        assert marks[("vague", skills_root)][2] == "⊘"
        assert marks[("git-release", skills_root)][4] == "⚠"
        assert marks[("pdf-forms", skills_root)][3] == "◐"
        assert marks[("pdf-forms", other)][3] == " "


async def test_live_change_reindexes_the_changed_skill(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        path = write_skill(
            skills_root, "zebra-care", description="Feeds zebras. Use when a zebra is hungry."
        )
        await app.apply_changes([path])
        assert "zebra-care" in await rows_for(pilot, "")
        await pilot.press(*"zebra")
        assert (await rows_for(pilot, "zebra"))[0] == "zebra-care"
        path.unlink()
        await app.apply_changes([path])
        assert "zebra-care" not in await rows_for(pilot, "zebra")


async def test_file_watcher_picks_up_a_new_skill(skills_root: Path) -> None:
    app = new_app([skills_root], watch=True, watch_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        write_skill(skills_root, "watched-skill", description="Appears live. Use when watching.")
        await wait_for(
            pilot,
            lambda: "watched-skill" in names(app),
            what="the new skill listed by the change check",
        )


async def test_help_palette_theme_and_quit(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await screen_is(pilot, HelpScreen)
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: app.theme == "textual-light", what="the light theme")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: app.theme == "textual-dark", what="the dark theme")
        await palette(pilot, "git-rel", "git-release")
        await screen_is(pilot, MainScreen)
        await wait_for(
            pilot,
            lambda: (
                (current := main_screen(app).current) is not None and current.name == "git-release"
            ),
            what="git-release highlighted",
        )
        await palette(pilot, "review mode", "Review mode")
        await screen_is(pilot, ReviewScreen)
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)
        await palette(pilot, "explain ranking", "Explain ranking")
        await wait_for(pilot, lambda: active_tab(app) == "tab-explain", what="the Explain tab")
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def palette(pilot: Any, typed: str, first: str) -> None:
    """Open the command palette, type ``typed``, wait for a first hit containing ``first``
    and run it."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    palette = await screen_is(pilot, CommandPalette)
    await pilot.press(*typed)
    commands = palette.query_one(CommandList)

    def first_hit() -> str:
        if commands.option_count == 0 or commands.highlighted is None:
            return ""
        return plain(commands.get_option_at_index(commands.highlighted).prompt)

    await wait_for(
        pilot, lambda: first in first_hit(), what=f"{first!r} offered first", seen=first_hit
    )
    await pilot.press("enter")


async def test_small_terminal_and_mouse(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        results = app.screen.query_one(ResultsList)
        await pilot.click(ResultsList, offset=(10, 3))
        await wait_for(
            pilot,
            lambda: results.current is not None and results.current.name == "git-release",
            what="git-release highlighted by the click",
        )
        await pilot.click("#tabs Tab#--content-tab-tab-diagnostics")
        await wait_for(pilot, lambda: active_tab(app) == "tab-diagnostics", what="Diagnostics")


async def test_missing_root_becomes_a_notification(tmp_path: Path) -> None:
    app = new_app([tmp_path / "nowhere"])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert names(app) == []
        assert "SD201" in await toast(pilot, "SD201")


async def test_reordered_rows_reuse_renders_and_click_the_right_skill(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        results = app.screen.query_one(ResultsList)
        hits = list(results.hits)
        await wait_for(
            pilot,
            lambda: len(results._strip_cache) >= len(hits),
            what="every row rendered once",
        )
        cached = len(results._strip_cache)
        reversed_hits = hits[::-1]
        results.show(reversed_hits, len(reversed_hits), app.workspace)
        await wait_for(
            pilot,
            lambda: reversed_hits[0].skill.name in "".join(s.text for s in results.render_line(0)),
            what="the reordered first row painted",
        )
        # Same rows: only the two whose highlight changed (old and new first row) are drawn.
        assert len(results._strip_cache) == cached + 2
        assert [h.skill.name for h in results.hits] == [h.skill.name for h in reversed_hits]
        for row, hit in ((0, reversed_hits[0]), (2, reversed_hits[1])):
            await pilot.click(ResultsList, offset=(10, row))
            await wait_for(
                pilot,
                lambda hit=hit: (
                    results.current is not None  # type: ignore[misc]
                    and results.current.name == hit.skill.name
                ),
                what=f"{hit.skill.name} highlighted by the click on row {row}",
            )


async def test_typing_repaints_the_search_box_without_a_screen_reflow(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        box = app.screen.query_one("#search", SearchBox)
        layouts = 0
        original = box.refresh

        def counting(*regions: Any, **kwargs: Any) -> SearchBox:
            nonlocal layouts
            layouts += bool(kwargs.get("layout"))
            return original(*regions, **kwargs)

        box.refresh = counting  # type: ignore[method-assign]
        await pilot.press(*"zz")
        await value_is(pilot, box, "zz")
        assert layouts == 0
        long = "pdf form filling with many words " * 3
        await pilot.press(*long)
        await value_is(pilot, box, "zz" + long)
        await wait_for(
            pilot,
            lambda: box.scroll_offset.x > 0,
            what="the box scrolled to keep the cursor in view",
        )
        assert box.virtual_size.width > box.content_region.width  # wider than the box
        assert box.cursor_screen_offset.x < box.region.right


async def test_store_repair_notice_is_shown_once(skills_root: Path, tmp_path: Path) -> None:
    from skilldeck.core.store import LocalStore

    home = tmp_path / "home"
    home.mkdir()
    (home / "store.sqlite3").write_bytes(b"not a database at all" * 100)
    store = LocalStore.open(home)
    app = new_app([skills_root], store=store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert "rebuilt" in await toast(pilot, "local store")
        shown = [n.message for n in app._notifications if "local store" in n.message]
        assert len(shown) == 1
        assert names(app) == ["broken-yaml", "git-release", "pdf-forms", "vague"]


async def test_skill_count_matches_skilldeck_list(
    skills_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = tmp_path / "later"
    write_skill(later, "pdf-forms", description="A copy that wins. Use when testing shadows.")
    assert cli_main(["--root", str(skills_root), "--root", str(later), "list"]) == 0
    listed = re.search(r"^(\d+) skill\(s\)", capsys.readouterr().out, re.M)
    assert listed
    app = new_app([skills_root, later])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        line = status(app)
        assert line.startswith(f"{listed.group(1)} skills (+")
        assert "1 shadowed" in line and "1 invalid" in line
        assert len(names(app)) == int(listed.group(1)) + 2
    small = new_app([skills_root, later])
    async with small.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        widget = small.screen.query_one("#status", Static)
        expected = f"{listed.group(1)} skills (+2 not usable)"  # no room for reasons, time
        await wait_for(
            pilot,
            lambda: widget.render_line(0).text.strip() == expected,
            what=f"the status line painted as {expected!r}",
            seen=lambda: widget.render_line(0).text.strip(),
        )


async def test_results_show_scores_demote_shadowed_and_say_no_confident_match(
    tmp_path: Path,
) -> None:
    low, high = tmp_path / "low", tmp_path / "high"
    desc = "Fills and flattens PDF forms. Use when the user asks to fill a PDF form."
    write_skill(low, "pdf-forms", desc)
    write_skill(high, "pdf-forms", desc)
    write_skill(high, "pdf-merge", "Merges PDF files into one. Use when combining PDF files.")
    app = new_app([low, high])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        await rows_for(pilot, "pdf")
        results = main_screen(app).query_one(ResultsList)
        assert [h.skill.shadowed for h in results.hits] == [False, False, True]
        row = str(results.get_option_at_index(0).prompt)
        assert row.splitlines()[0].rstrip()[-4:].replace(".", "").isdigit()
        screen = main_screen(app)
        skill = results.hits[0].skill
        screen._show_status(Ranked("pdf forms", [Hit(skill, 0.56)], 61, 1.0))
        assert "61 matches · no confident match" in status(app)
        screen._show_status(Ranked("pdf forms", [Hit(skill, 0.9)], 61, 1.0))
        assert "no confident match" not in status(app)


def test_a_sort_that_ends_after_discovery_is_not_kept(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing sorted in one thread while discovery swaps a new catalog in from another
    (a search worker at start-up, before the first discovery is in) is not cached for the
    new catalog: the TUI showed an empty list for good (``assert [] == [names]``)."""
    import skilldeck.core.workspace.workspace as module
    from skilldeck.core.config import load_settings
    from skilldeck.core.workspace import Workspace
    from skilldeck.core.workspace.views import sort_key

    workspace = Workspace(load_settings(), [skills_root])
    workspace.discover()
    swapped = False

    def swap_while_sorting(skill: Any) -> Any:
        nonlocal swapped
        if not swapped:
            swapped = True
            write_skill(skills_root, "late-skill", description="Found late. Use when racing.")
            workspace.discover()  # what the discovery thread does meanwhile
        return sort_key(skill)

    monkeypatch.setattr(module, "sort_key", swap_while_sorting)
    workspace.all_sorted()  # sorts the catalog it started with
    monkeypatch.setattr(module, "sort_key", sort_key)
    assert "late-skill" in [s.name for s in workspace.all_sorted()]


@pytest.mark.parametrize(
    ("size", "said"),
    [((120, 36), "0 matches · too common to search for"), ((80, 24), "0 matches · too common")],
)
async def test_a_query_of_common_words_says_why_nothing_matches(
    skills_root: Path,
    capsys: pytest.CaptureFixture[str],
    size: tuple[int, int],
    said: str,
) -> None:
    """``use when`` (every word too common to be indexed) said only "0 matches": the status
    line says why as far as it fits, and the preview says it whole, in the CLI's words."""
    assert cli_main(["--root", str(skills_root), "search", "--no-semantic", "use when"]) == 0
    cli_said = capsys.readouterr().out.strip()
    why = too_common("use when")
    assert cli_said == f"no skill matches 'use when': {why}"
    app = new_app([skills_root], deterministic=True)  # no timing on the line
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        await rows_for(pilot, "pdf")
        await pilot.press("ctrl+u", *"use when")
        assert await rows_for(pilot, "use when") == []
        widget = main_screen(app).query_one("#status", Static)
        await wait_for(
            pilot,
            lambda: widget.render_line(0).text.strip() == said,
            what=f"the status line painted as {said!r}",
            seen=lambda: widget.render_line(0).text.strip(),
        )
        await wait_for(pilot, lambda: why in header(app), what="the preview saying why")
        assert header(app).startswith(f"No skill matches 'use when': {why}.")
        await pilot.press("ctrl+u", *"zzqx")  # no match, for no reason it can name
        assert await rows_for(pilot, "zzqx") == []
        await wait_for(
            pilot, lambda: header(app).startswith("No skill matches 'zzqx'."), what="the hint"
        )
        assert "too common" not in status(app)
