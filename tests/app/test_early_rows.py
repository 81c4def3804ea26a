"""A launch lists the rows kept from the last one while discovery still runs, says so, and
holds the skill actions that write until the catalog replaces them."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from apptools import (
    TIMEOUT,
    age_files,
    launched_once,
    main_screen,
    names,
    new_app,
    plain,
    ready,
    status,
    wait_for,
)

import skilldeck.core.discovery as discovery
from skilldeck.app.widgets.status_line import StatusLine


async def test_rows_from_the_last_launch_show_until_the_catalog_is_in(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = await launched_once(skills_root)
    gate = threading.Event()
    real = discovery.discover

    def held(*args: Any, **kwargs: Any) -> Any:  # the catalog waits until the test looked
        gate.wait(TIMEOUT)
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "discover", held)
    app = new_app([skills_root])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: names(app), what="the rows kept from the last launch")
            assert names(app) == listed
            assert not app.workspace.catalog.skills  # discovery has not finished
            assert "list from the last launch, checking" in status(app)
            screen = main_screen(app)
            line = screen.query_one(StatusLine)
            shown = plain(line.content, width=line.size.width)  # as wide as it is drawn
            assert shown.strip() == "previous list · checking…"
            assert screen.current is not None
            assert screen.check_action("force_load", ()) is None
            assert screen.check_action("toggle_enabled", ()) is None
            assert screen.check_action("toggle_raw", ()) is True
            gate.set()
            await ready(pilot)
            assert names(app) == listed
            assert "last launch" not in status(app)
            assert screen.check_action("force_load", ()) is True
    finally:
        gate.set()


async def test_no_rows_are_kept_for_a_catalog_that_changed(
    skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await launched_once(skills_root)
    gone = skills_root / "vague"
    for child in gone.iterdir():
        child.unlink()
    gone.rmdir()
    age_files(skills_root)
    shown: list[list[str]] = []
    gate = threading.Event()
    real = discovery.discover

    def held(*args: Any, **kwargs: Any) -> Any:
        gate.wait(TIMEOUT)
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "discover", held)
    app = new_app([skills_root])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.discovering, what="discovery running")
            for _ in range(20):
                await pilot.pause()
                shown.append(names(app))
            gate.set()
            await ready(pilot)
            assert "vague" not in names(app)
    finally:
        gate.set()
    assert all(rows == [] for rows in shown)  # nothing listed before the catalog
