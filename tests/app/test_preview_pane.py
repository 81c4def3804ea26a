"""Pilot tests of the preview pane: the frontmatter header, the body (rendered, cheaper
renderer, raw), links, hostile text and the empty-catalog hint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptools import (
    header,
    main_screen,
    new_app,
    painted,
    plain,
    ready,
    rows_for,
    screen_is,
    showing,
    text_of,
    toast,
    wait_for,
)
from textual.widgets import Markdown, Static, TextArea

from conftest import write_skill
from skilldeck.app.dialogs.resource_dialog import ResourceDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.widgets.diagnostics_list import DiagnosticsList
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList


async def test_preview_frontmatter_markdown_and_raw_toggle(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        preview = await showing(pilot, "pdf-forms")
        table = text_of(app.screen.query_one("#frontmatter", Static))
        assert "Fills and flattens PDF forms" in table
        assert app.screen.query_one("#md", Markdown).display
        await pilot.press("f2")
        await wait_for(pilot, lambda: preview.raw, what="the raw view")
        raw = app.screen.query_one("#raw", TextArea)
        assert raw.show_line_numbers and raw.read_only
        assert raw.text.startswith("---\nname: pdf-forms")


async def test_large_body_uses_the_cheaper_renderer(tmp_path: Path) -> None:
    root = tmp_path / "big"
    body = "# Big\n\n" + "\n".join(f"- item {i} with some words" for i in range(900))
    write_skill(root, "big-skill", description="A big one. Use when testing size.", body=body)
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await showing(pilot, "big-skill")  # the only row is highlighted: its body shows
        assert not app.screen.query_one("#md", Markdown).display
        assert app.screen.query_one("#md-plain", Static).display


async def test_links_in_the_preview_open_files_safely(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        md = app.screen.query_one("#md", Markdown)
        md.post_message(Markdown.LinkClicked(md, "references/guide.md"))
        dialog = await screen_is(pilot, ResourceDialog)
        content = dialog.query_one("#content", TextArea)
        await wait_for(pilot, lambda: "case sensitive" in content.text, what="the file's text")
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)
        md.post_message(Markdown.LinkClicked(md, "../../../etc/passwd"))
        dialog = await screen_is(pilot, ResourceDialog)
        facts = dialog.query_one("#facts", Static)
        await wait_for(pilot, lambda: "INVALID_PARAM" in text_of(facts), what="the refusal")
        assert dialog.query_one("#content", TextArea).text == ""
        assert not re.search(r"▊ *1 ", painted(app, dialog))  # no numbered empty text


async def test_broken_yaml_skill_says_invalid_not_enabled(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*"broken", "down")
        await showing(pilot, "broken-yaml")
        text = header(app)
        assert "invalid" in text and "enabled" not in text
        await pilot.press("/", "ctrl+u", *"pdf-forms", "down")
        await showing(pilot, "pdf-forms")
        assert "enabled" in header(app) and "invalid" not in header(app)


async def test_preview_shows_parameters_and_examples(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "csv-report",
        description="Builds a CSV report. Use when asked for a report.",
        extra="parameters:\n  - name: month\n    type: string\n    required: true\n"
        "    description: Which month\n  - name: rows\n    type: integer\n    default: 50\n"
        "examples:\n  - request: Report for May\n    does: Builds may.csv\n",
    )
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("down")
        await showing(pilot, "csv-report")
        text = header(app)
        assert "month string required  Which month" in text
        assert "rows integer = 50" in text
        assert "“Report for May” → Builds may.csv" in text


async def test_header_and_body_change_together(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = main_screen(app)
        preview = screen.query_one(PreviewPane)
        skills = {s.name: s for s in app.workspace.catalog.skills}
        screen.show_skill(skills["pdf-forms"])
        await showing(pilot, "pdf-forms")
        screen.show_skill(skills["git-release"])
        # The header names git-release at once; pdf-forms's body is covered until
        # git-release's is in place.
        assert "git-release" in header(app)
        assert preview.is_loading
        await showing(pilot, "git-release")
        assert "Step 3: do the thing" in preview.query_one("#raw", TextArea).text


async def test_hostile_values_show_literally(tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    write_skill(
        root,
        "evil",
        description='"Clears \\e[2J the screen [bold red]x[/] \\e]0;pwned\\a. Use when testing."',
        extra='version: "[link=http://x]v1[/link]"\nallowed-tools: "Bash\\e[31m"\n',
        folder="evil-dir",  # (a control character in a folder name keeps it out: SV601)
    )
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("down")
        await showing(pilot, "evil")
        shown = header(app)
        assert "[bold red]x[/]" in shown and "[link=http://x]v1[/link]" in shown
        assert "\\x1b[2J" in shown and "\x1b" not in shown
        row = str(app.screen.query_one(ResultsList).get_option_at_index(0).prompt)
        assert "\x1b" not in row
        app.notify("[bold]literal[/bold] \x1b[2J")
        shown = await toast(pilot, "literal")
        assert shown == "[bold]literal[/bold] \\x1b[2J"  # escaped, never parsed
        assert all(not n.markup for n in app._notifications)


async def test_empty_root_says_where_it_looked_and_how_to_add_a_skill(tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    app = new_app([empty])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await wait_for(
            pilot, lambda: "No skills found" in header(app), what="the empty-catalog hint"
        )
        shown = header(app)
        assert "nothing-here" in shown
        assert "SKILL.md" in shown and "description:" in shown


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_no_match_leaves_no_line_number_in_the_raw_view(
    skills_root: Path, size: tuple[int, int]
) -> None:
    """Issue 35's stray "1": in the raw view (F2, or after a jump to a diagnostic) a query
    that matches nothing emptied the source view, whose gutter still numbered its one empty
    line. With no skill the pane says why and shows no body view."""
    app = new_app([skills_root])
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.press("down")
        preview = await showing(pilot, "broken-yaml")
        await pilot.press("f2")
        await wait_for(pilot, lambda: preview.raw, what="the raw view")
        await pilot.press("/", *"use when")
        assert await rows_for(pilot, "use when") == []
        shown = painted(app, preview)
        assert "No skill matches 'use when'" in shown
        assert not re.search(r"\d", shown), shown
        findings = main_screen(app).query_one(DiagnosticsList)  # not "✔ No findings."
        assert plain(findings.get_option_at_index(0).prompt) == "No skill selected."
        await pilot.press("escape", "down")  # a skill again: its source, numbered
        await showing(pilot, "broken-yaml")
        assert preview.raw and re.search(r"^ *1 ", painted(app, preview), re.MULTILINE)
