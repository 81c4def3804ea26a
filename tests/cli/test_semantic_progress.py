"""The first semantic search of a one-shot ``skilldeck search`` waits for the skills'
vectors (the process exits after answering: vectors it did not wait for would never be
built) and shows how many are embedded on a terminal; the vectors are kept, so the next
search embeds nothing and shows no embedding line. ``--no-semantic`` answers at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_terminal_colour import on_a_terminal

from conftest import need_semantic_extra, write_skill


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """300 skills (two chunks of embedding), every progress step shown at once."""
    need_semantic_extra()
    monkeypatch.setenv("SKILLDECK_PROGRESS_DELAY", "0")
    base = tmp_path / "skills"
    for i in range(300):
        write_skill(base, f"skill-{i:03d}", description=f"Handles case {i}. Use when {i}.")
    write_skill(base, "chart-maker", description="Draw bar and line charts from CSV data.")
    return base


def test_a_one_shot_search_shows_embedding_progress_once(catalog: Path) -> None:
    shown = on_a_terminal("--root", str(catalog), "search", "plot a graph of numbers")
    steps = re.findall(r"embedding for semantic search: ([\d,]+) of ([\d,]+)", shown)
    assert ("0", "301") in steps and ("256", "301") in steps and ("301", "301") in steps
    answer = shown.rsplit("\x1b[K", 1)[1]  # the line is erased before the results
    assert "chart-maker" in answer and "embedding" not in answer
    again = on_a_terminal("--root", str(catalog), "search", "plot a graph of numbers")
    assert "embedding for semantic search" not in again and "chart-maker" in again
    lexical = on_a_terminal("--root", str(catalog), "search", "bar charts", "--no-semantic")
    assert "embedding" not in lexical and "chart-maker" in lexical
