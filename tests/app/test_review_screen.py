"""Pilot tests of review mode: every finding grouped by rule or skill, the severity and
code filters, the badges, rows that wrap, and enter opening the skill at the line."""

from __future__ import annotations

import re
from pathlib import Path

from apptools import main_screen, new_app, plain, ready, screen_is, showing, text_of, wait_for
from rich.cells import cell_len
from textual.widgets import Input, OptionList, Static, TextArea

from conftest import write_skill
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.core.model import Severity


def review_rows(screen: ReviewScreen) -> list[str]:
    findings = screen.query_one("#findings", OptionList)
    return [plain(findings.get_option_at_index(i).prompt) for i in range(findings.option_count)]


def counts(screen: ReviewScreen) -> str:
    return text_of(screen.query_one("#review-counts", Static))


def badge(counts: str, glyph: str) -> int:
    match = re.search(rf"{glyph} (\d+)", counts)
    assert match, counts
    return int(match.group(1))


async def open_review(pilot: object) -> ReviewScreen:
    """f4 from the main screen; waits until the findings are listed."""
    await pilot.press("f4")  # type: ignore[attr-defined]
    screen = await screen_is(pilot, ReviewScreen)  # type: ignore[arg-type]
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: bool(screen._findings) and "finding" in counts(screen),
        what="the findings listed",
        seen=lambda: review_rows(screen)[:5],
    )
    return screen


async def rows_where(pilot: object, screen: ReviewScreen, check: object, what: str) -> list[str]:
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: check(review_rows(screen)),  # type: ignore[operator]
        what=what,
        seen=lambda: review_rows(screen)[:8],
    )
    return review_rows(screen)


async def test_review_groups_filters_and_opens_at_line(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("down")
        screen = await open_review(pilot)
        rows = review_rows(screen)
        assert rows[0].startswith("SD103")  # groups by rule: biggest first, then by code
        assert any("SL103" in r for r in rows)
        assert "✖ 1" in counts(screen) and "▲ 5" in counts(screen)
        await pilot.press("g")
        rows = await rows_where(pilot, screen, lambda r: r[0].startswith("broken-yaml"), "by skill")
        await pilot.press("2")  # hide warnings
        rows = await rows_where(
            pilot, screen, lambda r: not any("SL103" in x for x in r), "warnings hidden"
        )
        assert any("SD103" in r for r in rows)
        await pilot.press("2", "slash", *"SL10")
        rows = await rows_where(
            pilot,
            screen,
            lambda r: len([x for x in r if x.startswith("  ")]) == 1,
            "one finding of code SL10…",
        )
        assert "SL103" in next(r for r in rows if r.startswith("  "))
        await pilot.press("enter")  # back to the list
        findings = screen.query_one("#findings", OptionList)
        await wait_for(pilot, lambda: findings.has_focus, what="focus back on the findings")
        await pilot.press("enter")
        await screen_is(pilot, MainScreen)
        preview = await showing(pilot, "vague")
        raw = main_screen(app).query_one("#raw", TextArea)
        await wait_for(
            pilot,
            lambda: preview.raw and raw.cursor_location[0] == 6,
            what="the raw source at line 7",
            seen=lambda: (preview.raw, raw.cursor_location),
        )


async def test_small_screen_review_header_keeps_whole_words(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = await open_review(pilot)
        filters = screen.query_one("#review-filters", Static)
        line = plain(filters.content)
        assert cell_len(line) <= filters.content_region.width
        assert line.endswith(("grouped by rule", "open at line")), line


async def test_review_badges_count_what_the_filters_show(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = await open_review(pilot)

        def consistent() -> bool:
            text = counts(screen)
            shown = [d.severity for _s, d in screen._visible()]
            return (
                badge(text, "✖") == shown.count(Severity.ERROR)
                and badge(text, "▲") == shown.count(Severity.WARNING)
                and text.startswith(f"{len(shown)} finding")
            )

        assert consistent(), counts(screen)
        await pilot.press("2")  # warnings off
        await wait_for(pilot, lambda: badge(counts(screen), "▲") == 0, what="no warnings counted")
        assert consistent(), counts(screen)
        await pilot.press("2", "slash", *"SL10")  # warnings back, one code
        await wait_for(
            pilot,
            lambda: badge(counts(screen), "✖") == 0 and badge(counts(screen), "▲") == 1,
            what="one warning and no error counted",
            seen=lambda: counts(screen),
        )
        assert consistent(), counts(screen)


async def test_enter_on_a_finding_keeps_the_search_text(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        screen = await open_review(pilot)
        await pilot.press("slash", *"SL103")
        await rows_where(
            pilot,
            screen,
            lambda r: len(r) == 2 and r[0].startswith("SL103"),
            "the one SL103 finding",
        )
        await pilot.press("enter", "enter")  # the vague skill's link
        await screen_is(pilot, MainScreen)
        preview = await showing(pilot, "vague")
        await wait_for(pilot, lambda: preview.raw, what="the raw source")
        assert app.screen.query_one("#search", Input).value == "pdf"
        assert app.screen.query_one(ResultsList).current == preview.skill


async def test_review_rows_wrap_under_the_message_and_keep_every_word(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "vague", description="Helps.")
    app = new_app([root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("down")
        screen = await open_review(pilot)
        rows = screen.query_one("#findings", OptionList)
        prompts = [rows.get_option_at_index(i).prompt for i in range(rows.option_count)]
        messages = [d.message for _s, d in screen._findings]
        long = max(messages, key=len)
        assert len(long) > 60
        row = next(r for r in prompts if long[:20] in plain(r, width=76).replace("\n", " "))
        lines = plain(row, width=76).splitlines()
        assert len(lines) > 1
        indent = lines[0].index(long[:10])
        assert all(line.startswith(" " * indent) for line in lines[1:])
        flat = " ".join(line.strip() for line in lines)
        assert all(word in flat for word in long.split())
        placeholder = screen.query_one("#code-filter", Input)
        assert placeholder.content_region.width >= len(placeholder.placeholder)


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
        await ready(pilot)
        await pilot.press("down")
        screen = await open_review(pilot)
        findings = screen.query_one("#findings", OptionList)
        await wait_for(pilot, lambda: findings.max_scroll_y > 0, what="the scrollbar")
        lines = [findings.render_line(y).text for y in range(findings.size.height - 1)]
        flat = " ".join(" ".join(lines).split())
        # Every SL001 row on screen (the last may be cut by the screen) ends with its last
        # word; with rows measured at one width and drawn at another, some lost it.
        rows = flat.split("aim for at least 40")[1:-1]
        assert len(rows) > 3
        assert all("does and when" in row for row in rows)
