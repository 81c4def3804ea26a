"""What a launch spares the event loop: footer rebuilds that list the same keys, the
listing ranked again after stages that leave it as it was, and early rows waiting behind
the catalog being built (``tests/benchmarks/bench_felt.py`` measures the launch)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from apptools import TIMEOUT, launched_once, main_screen, names, new_app, ready, wait_for
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

import skilldeck.app.screens.main_screen as main_module
import skilldeck.core.discovery as discovery
from skilldeck.app.ranked import Ranked, rank
from skilldeck.core.workspace import Workspace


def _keys(footer: Footer) -> list[tuple[str, bool]]:
    return [(k.key, not k.has_class("-disabled")) for k in footer.query(FooterKey)]


async def test_the_footer_is_rebuilt_only_when_its_keys_change(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = main_screen(app)
        footer = screen.query_one(Footer)
        shown = list(footer.query(FooterKey))
        assert ("f2", True) in _keys(footer)  # a skill is highlighted: its actions are on
        screen.refresh_bindings()  # nothing it lists changed
        await pilot.pause()
        await pilot.pause()
        assert list(footer.query(FooterKey)) == shown  # the same widgets: not rebuilt
        await pilot.press("ctrl+u", "z", "z", "z", "q")  # no row: the skill actions go grey
        await wait_for(
            pilot, lambda: ("f2", False) in _keys(footer), what="F2 greyed in the footer"
        )
        assert list(footer.query(FooterKey)) != shown


async def test_the_listing_is_ranked_once_per_catalog(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listings: list[int] = []
    real = rank

    def counted(workspace: Workspace, query: str, *args: Any, **kwargs: Any) -> Ranked:
        if not query.strip() and workspace.catalog.skills:
            listings.append(workspace.generation)
        return real(workspace, query, *args, **kwargs)

    monkeypatch.setattr(main_module, "rank", counted)
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        # discovery, lint, index and tools each repaint the list; it was ranked once
        assert listings == [1], listings
        (skills_root / "fresh").mkdir()
        (skills_root / "fresh" / "SKILL.md").write_text(
            "---\nname: aaa-fresh\ndescription: Brand new. Use when testing.\n---\nBody\n"
        )
        app.action_rescan()
        await wait_for(pilot, lambda: "aaa-fresh" in names(app), what="the new skill listed")
        assert listings[0] == 1 and listings[-1] == 2  # a new catalog is ranked again


async def test_early_rows_are_painted_before_the_catalog_is_built(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = await launched_once(skills_root)
    app = new_app([skills_root])
    seen: list[list[str]] = []
    real = discovery.discover

    def watched(*args: Any, **kwargs: Any) -> Any:  # what the screen lists as it starts
        if threading.current_thread() is not threading.main_thread() and not seen:
            seen.append(names(app))
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "discover", watched)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: seen, what="discovery building the catalog", timeout=TIMEOUT)
        await ready(pilot)
    assert seen == [listed]


async def test_an_older_catalogs_answer_never_replaces_a_newer_one(skills_root: Path) -> None:
    """A search worker's answer for an older catalog can reach the event loop after the
    answer for the newer one (it was queued before the newer catalog cancelled it): it is
    dropped, so the list stays the newer catalog's."""
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = main_screen(app)
        newer = screen.listed_version
        assert newer > 0
        stale = Ranked("", [], 0, 0.0)  # what an older catalog's listing could have been
        screen._apply(stale, None, newer - 1)
        await pilot.pause()
        assert screen.listed_version == newer
        assert names(app)  # the rows are the newer catalog's, not the stale empty answer
