"""Pilot tests for the rough edges a new user found (issue #13) and for hostile text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptools import build_root, new_app, plain, settle, text_of
from textual import events
from textual.widgets import Input, OptionList, Static, TabbedContent, TextArea

from conftest import write_skill
from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.ranked import Hit, Ranked
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.resources_list import ResourcesList
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.sessions import SessionStore


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


def status_of(app: object) -> str:
    return text_of(app.screen.query_one("#status", Static))  # type: ignore[attr-defined]


def names(app: object) -> list[str]:
    return [h.skill.name for h in app.screen.query_one(ResultsList).hits]  # type: ignore[attr-defined]


def header(app: object) -> str:
    return text_of(app.screen.query_one("#frontmatter", Static))  # type: ignore[attr-defined]


async def test_disabling_updates_the_header_at_once(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down")
        await settle(pilot)
        assert "status      enabled" in header(app)
        await pilot.press("f7", "y")
        await settle(pilot)
        assert "disabled (registry)" in header(app)
        await pilot.press("f7", "y")
        await settle(pilot)
        assert "status      enabled" in header(app)
    # Re-enabling removes the entry instead of writing "enabled": true.
    registry = json.loads(app.workspace.settings.registry_file.read_text(encoding="utf-8"))
    assert registry == {"skills": {}}


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


async def test_hostile_values_show_literally(tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    write_skill(
        root,
        "evil",
        description='"Clears \\e[2J the screen [bold red]x[/] \\e]0;pwned\\a. Use when testing."',
        extra='version: "[link=http://x]v1[/link]"\nallowed-tools: "Bash\\e[31m"\n',
        folder="evil\x1b[2Jdir",
    )
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        shown = header(app)
        assert "[bold red]x[/]" in shown and "[link=http://x]v1[/link]" in shown
        assert "\\x1b[2J" in shown and "\x1b" not in shown
        row = str(app.screen.query_one(ResultsList).get_option_at_index(0).prompt)
        assert "\x1b" not in row
        app.notify("[bold]literal[/bold] \x1b[2J")
        await pilot.pause()
        assert "\x1b" not in app.export_screenshot()


async def test_tabs_from_the_search_box_and_one_tab_into_the_pane(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf")
        await settle(pilot)
        tabs = app.screen.query_one("#tabs", TabbedContent)
        await pilot.press("alt+2")
        assert tabs.active == "tab-diagnostics"
        burst(app, [("cent_sign", "¢")])  # what a terminal's alt+4 arrives as
        await settle(pilot)
        assert tabs.active == "tab-files"
        assert app.screen.query_one("#search", SearchBox).value == "pdf"
        await pilot.press("down", "tab")
        assert isinstance(app.focused, ResourcesList)
        await pilot.press("shift+tab", "1")
        assert tabs.active == "tab-preview"


async def test_empty_root_says_where_it_looked_and_how_to_add_a_skill(tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    app = new_app([empty])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        shown = header(app)
        assert "No skills found" in shown and "nothing-here" in shown
        assert "SKILL.md" in shown and "description:" in shown


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
        await settle(pilot)
        await pilot.press(*"pdf")
        await settle(pilot)
        hits = app.screen.query_one(ResultsList).hits
        assert [h.skill.shadowed for h in hits] == [False, False, True]
        row = str(app.screen.query_one(ResultsList).get_option_at_index(0).prompt)
        assert row.splitlines()[0].rstrip()[-4:].replace(".", "").isdigit()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        skill = hits[0].skill
        screen._show_status(Ranked("pdf forms", [Hit(skill, 0.56)], 61, 1.0))
        assert "61 matches · no confident match" in status_of(app)
        screen._show_status(Ranked("pdf forms", [Hit(skill, 0.9)], 61, 1.0))
        assert "no confident match" not in status_of(app)


async def test_sessions_confirm_widening_and_approve_exactly_the_highlighted(
    root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="strict", actor="agent")
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")  # cancelled: nothing changes
        await settle(pilot)
        assert store.get(session.id).mode == "strict"
        await pilot.press("m", "y")
        await settle(pilot)
        assert store.get(session.id).mode == "approval"
        store.check(session.id, "WebFetch", actor="agent")
        app._poll_store()
        await settle(pilot)
        # A typed tool does not override the request highlighted in the focused queue.
        screen.query_one("#tool", Input).value = "Read"
        pending = screen.query_one("#pending", OptionList)
        pending.focus()
        await pilot.press("a")
        await settle(pilot)
        assert store.get(session.id).approved == ["WebFetch"]
        for tool in ("Bash(git push:*)", "Bash"):
            store.check(session.id, tool, actor="agent")
        app._poll_store()
        await settle(pilot)
        pending.focus()
        pending.highlighted = 1  # "Bash": approving it settles the git push request too
        await pilot.press("a")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        assert "Bash(git push:*)" in text_of(dialog.query_one("#question", Static))
        await pilot.press("n")
        await settle(pilot)
        assert store.get(session.id).pending == ["Bash(git push:*)", "Bash"]
    store.close()


async def test_review_rows_wrap_under_the_message_and_keep_every_word(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "vague", description="Helps.")
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        findings = screen.query_one("#findings", OptionList)
        rows = [findings.get_option_at_index(i).prompt for i in range(findings.option_count)]
        messages = [d.message for _s, d in screen._findings]
        long = max(messages, key=len)
        assert len(long) > 60
        row = next(r for r in rows if long[:20] in plain(r, width=76).replace("\n", " "))
        lines = plain(row, width=76).splitlines()
        assert len(lines) > 1
        indent = lines[0].index(long[:10])
        assert all(line.startswith(" " * indent) for line in lines[1:])
        flat = " ".join(line.strip() for line in lines)
        assert all(word in flat for word in long.split())
        placeholder = screen.query_one("#code-filter", Input)
        assert placeholder.content_region.width >= len(placeholder.placeholder)


async def test_keys_right_after_down_go_to_the_results(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(app, [*((c, c) for c in "release"), ("down", None), ("f2", None)])
        await settle(pilot)
        assert app.screen.query_one("#search", SearchBox).value == "release"
        assert isinstance(app.focused, ResultsList)
        assert app.screen.query_one(PreviewPane).raw
        # Letters typed in the results list go back to the query, in order.
        burst(app, [("down", None), *((c, c) for c in " notes"), ("up", None)])
        await settle(pilot)
        assert app.screen.query_one("#search", SearchBox).value == "release notes"
        assert isinstance(app.focused, SearchBox)


async def test_narrow_screen_keeps_quit_tabs_and_names(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down")
        await settle(pilot)
        shot = app.export_screenshot()
        assert "Quit" in shot and "Explain" in shot and "git-release" in shot
        await pilot.press("f5")
        await settle(pilot)
        assert "Quit" in app.export_screenshot()


async def test_review_rows_keep_every_word_when_the_list_scrolls(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    # Names of 20-29 characters put rows right at the list's width (with and without
    # a scrollbar); thirty more make the list scroll.
    for n in range(20, 30):
        write_skill(root, f"a{n}-" + "x" * (n - 4), description="Helps.")
    for i in range(30):
        write_skill(root, f"z{i:02d}", description="Helps.")
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f4")
        await settle(pilot)
        findings = app.screen.query_one("#findings", OptionList)
        assert findings.max_scroll_y > 0  # the scrollbar is there
        lines = [findings.render_line(y).text for y in range(findings.size.height - 1)]
        flat = " ".join(" ".join(lines).split())
        # Every SL001 row on screen (the last may be cut by the screen) ends with its last
        # word; with rows measured at one width and drawn at another, some lost it.
        rows = flat.split("aim for at least 40")[1:-1]
        assert len(rows) > 3
        assert all("does and when" in row for row in rows)
