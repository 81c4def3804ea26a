"""Result rows keep one line for name and score and one for the description when the
list's scrollbar appears (Pilot at the size where they wrapped)."""

from __future__ import annotations

from pathlib import Path

from apptools import main_screen, new_app, ready, rows_for, wait_for

from conftest import write_skill
from skilldeck.app.widgets.results_list import ResultsList


async def test_rows_do_not_wrap_when_the_scrollbar_appears(tmp_path: Path) -> None:
    """Four matches fit without a scrollbar; the next key lists sixteen, which do not.
    Rows are cut to the list's width when they are listed: that width must not change
    when the scrollbar then appears, or the rows wrap (the score on a line of its own,
    the description pushed out) until they are cut again."""
    root = tmp_path / "skills"
    for n in range(16):
        word = "claude api" if n < 4 else "claude"
        write_skill(
            root,
            f"claude-helper-{n:02}",
            description=f"Helps with {word} work number {n}, a long description that "
            "fills the row to its end. Use when the user asks.",
        )
    app = new_app([root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"api")
        assert len(await rows_for(pilot, "api")) == 4
        results = main_screen(app).query_one(ResultsList)
        assert not results.show_vertical_scrollbar
        width = results.scrollable_content_region.width
        await pilot.press("ctrl+u", *"claude")
        assert len(await rows_for(pilot, "claude")) == 16
        await wait_for(pilot, lambda: results.show_vertical_scrollbar, what="the list's scrollbar")
        assert results.scrollable_content_region.width == width
        lines = [results.render_line(y).text for y in range(results.size.height)]
        heads = [line for line in lines if "claude-helper" in line]
        assert len(heads) == 15, lines  # a screenful of two-line rows
        assert all(line.rstrip()[-4:].replace(".", "").isdigit() for line in heads), heads
        assert results.virtual_size.height == 2 * 16
