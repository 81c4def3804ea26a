"""The idle garbage collector: full collections wait for a pause in typing."""

from __future__ import annotations

import gc
from pathlib import Path

from apptools import new_app, ready, wait_for

from skilldeck.app.heap import IdleCollector


def test_start_defers_full_collections_and_stop_restores() -> None:
    before = gc.get_threshold()
    collector = IdleCollector()
    collector.start()
    try:
        assert collector.active
        young, middle, old = gc.get_threshold()
        assert (young, middle) == before[:2]
        assert old > 10**8
        collector.start()  # twice is harmless: stop still restores the original
    finally:
        collector.stop()
    assert gc.get_threshold() == before
    assert not collector.active


def test_tick_collects_only_after_input_and_a_pause() -> None:
    collector = IdleCollector(idle_after=3600, longest_deferral=3600)
    collector.start()
    try:
        assert collector.tick() is False  # nothing typed since start
        collector.touch()
        assert collector.tick() is False  # typing: the pause (an hour here) has not passed
        collector.idle_after = 0.0  # now it has
        assert collector.tick() is True
        assert collector.collections == 1
        assert collector.tick() is False  # nothing new since
    finally:
        collector.stop()


def test_overdue_collection_runs_even_while_typing() -> None:
    collector = IdleCollector(idle_after=3600, longest_deferral=0.0)
    collector.start()
    try:
        collector.touch()
        assert collector.tick() is True
    finally:
        collector.stop()


def test_settle_waits_for_a_pause_then_freezes_once() -> None:
    collector = IdleCollector(idle_after=3600, longest_deferral=3600)
    collector.start()
    try:
        collector.settle_when_idle()
        assert collector.tick() is False  # typing may go on: not yet
        assert gc.get_freeze_count() == 0
        collector.idle_after = 0.0
        assert collector.tick() is True
        assert gc.get_freeze_count() > 0
        assert collector.tick() is False  # once
    finally:
        gc.unfreeze()
        collector.stop()


def test_stopped_collector_never_collects() -> None:
    collector = IdleCollector(idle_after=0.0)
    collector.touch()
    assert collector.tick() is False


async def test_app_defers_while_running_and_restores_on_exit(skills_root: Path) -> None:
    before = gc.get_threshold()
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert app.collector.active
        await wait_for(  # catalog and index set aside once nobody types (1 s)
            pilot, lambda: gc.get_freeze_count() > 0, what="the idle settle"
        )
        await pilot.press("p")
        await wait_for(pilot, lambda: app.collector._dirty, what="the key noted")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
