"""Esc on the main screen: an empty search box with the cursor in it at once, from the box,
from the results and right after coming back from another screen; letters typed right
behind Esc are kept (Pilot; keys queued in one burst as a busy terminal delivers them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import (
    burst,
    focused,
    main_screen,
    new_app,
    ready,
    rows_for,
    screen_is,
    value_is,
)

import skilldeck.app.screens.main_screen as main_module
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.ranked import Ranked
from skilldeck.app.ranked import rank as real_rank
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.core.workspace import Workspace


def search_box(app: SkilldeckApp) -> SearchBox:
    return main_screen(app).query_one("#search", SearchBox)


def typed(text: str) -> list[tuple[str, str | None]]:
    return [(c, c) for c in text]


async def test_letters_right_after_esc_in_the_box_start_a_new_query(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        await rows_for(pilot, "pdf")
        burst(app, [("escape", "\x1b"), *typed("git")])
        await value_is(pilot, search_box(app), "git")
        assert await rows_for(pilot, "git")


async def test_esc_from_the_results_empties_the_box_and_keeps_what_follows(
    skills_root: Path,
) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await focused(pilot, ResultsList)
        burst(app, [("escape", "\x1b"), *typed("git")])
        await value_is(pilot, search_box(app), "git")
        await focused(pilot, SearchBox)


async def test_first_esc_after_sessions_empties_the_box(skills_root: Path) -> None:
    """Coming back from Sessions, the first Esc only focused the box and the next letters
    were appended to the old query (``pdfpdf-helper``)."""
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down", "f5")
        await screen_is(pilot, SessionsScreen)
        await pilot.press("escape")
        await focused(pilot, ResultsList)
        await pilot.press("escape", *"git")
        await value_is(pilot, search_box(app), "git")


async def test_esc_and_a_letter_read_together_are_both_kept(skills_root: Path) -> None:
    """On a busy machine Esc and the next letter arrive in one read, which the terminal
    parser reports as alt+shift+g: the box is emptied and the letter typed."""
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        burst(app, [("alt+shift+g", "G"), *typed("it")])
        await value_is(pilot, search_box(app), "Git")


async def test_esc_lists_the_catalog_without_ranking_or_counting_it_again(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc repaints from the listing kept for this catalog: no ranking of every skill and
    no counting on the event loop (each took 15-40 ms at 10k skills, seconds under load)."""
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf")
        await rows_for(pilot, "pdf")
        calls: list[str] = []
        real_counts = Workspace.listed_counts

        def rank(workspace: Workspace, query: str, *args: object, **kw: object) -> Ranked:
            calls.append(f"rank {query!r}")
            return real_rank(workspace, query, *args, **kw)  # type: ignore[arg-type]

        def listed_counts(self: Workspace) -> tuple[int, dict[str, int]]:
            calls.append("listed_counts")
            return real_counts(self)

        monkeypatch.setattr(main_module, "rank", rank)
        monkeypatch.setattr(Workspace, "listed_counts", listed_counts)
        await pilot.press("escape")
        listing = await rows_for(pilot, "")
        assert len(listing) == 4 and calls == []


async def test_esc_and_a_letter_read_together_in_the_results(skills_root: Path) -> None:
    """Back from Sessions the results have the focus: Esc and ``p`` in one read (alt+p)
    typed ``p`` onto the old query (``pdfpdf``)."""
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down", "f5")
        await screen_is(pilot, SessionsScreen)
        await pilot.press("escape")
        await focused(pilot, ResultsList)
        burst(app, [("alt+p", "p"), *typed("df")])
        await value_is(pilot, search_box(app), "pdf")
        await focused(pilot, SearchBox)
