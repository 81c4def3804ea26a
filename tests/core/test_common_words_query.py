"""Queries made of common words only (issue #35 polish: ``use when`` gave 0 matches with
nothing said). Stopwords are never indexed, so such a query has no term to rank by: one
word being typed stands for its completions (as two letters stand for the names they
start), and an answer with no match says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.search import too_common
from skilldeck.core.search.text import common_only
from skilldeck.core.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "skills"
    write_skill(root, "interview-kit", description="Plans user interviews. Use when asked.")
    write_skill(root, "pdf-forms", description="Fills PDF forms. Use when a form is given.")
    workspace = Workspace(Settings(semantic=False), [root])
    workspace.discover()
    return workspace


def test_one_common_word_being_typed_stands_for_its_completions(workspace: Workspace) -> None:
    """``us`` listed names starting with it; ``use`` (a stopword) then listed nothing."""
    response = workspace.search("use", semantic=False)
    assert [r.skill.name for r in response.results] == ["interview-kit"]
    assert workspace.search("use ", semantic=False).results == []  # settled: no completion


@pytest.mark.parametrize("query", ["use when", "Use when "])
def test_a_query_of_common_words_says_why_nothing_matches(workspace: Workspace, query: str) -> None:
    response = workspace.search(query, semantic=False)
    assert response.results == []
    assert "too common to search for" in response.message
    assert all(repr(w) in response.message for w in common_only(query))
    assert response.to_dict()["message"] == response.message


def test_common_only_needs_every_word_common() -> None:
    assert common_only("Use when") == ["use", "when"]
    assert common_only("use when pdf") == [] and common_only("") == []


def test_every_face_says_the_same_reason(workspace: Workspace) -> None:
    """The TUI shows :func:`too_common`'s sentence; agents and the CLI get it in the
    response's message."""
    why = too_common("use when")
    assert why == "'use' and 'when' are too common to search for; name the task"
    assert workspace.search("use when", semantic=False).message == f"no match: {why}"
    assert too_common("use when pdf") == "" and too_common("") == ""


@pytest.mark.parametrize("semantic", [False, True])
def test_common_words_are_not_near_any_name(tmp_path: Path, semantic: bool) -> None:
    """``use when`` is 67% like ``aeon`` to rapidfuzz: listed on that alone without
    embeddings, while with them nothing matched and the answer said why."""
    root = tmp_path / "skills"
    write_skill(root, "aeon", description="Classifies and forecasts time series.")
    write_skill(root, "youtube-downloader", description="Downloads videos. Use when asked.")
    workspace = Workspace(Settings(semantic=False), [root])
    workspace.discover()
    response = workspace.search("use when", semantic=semantic)
    assert response.results == []
    assert response.message == f"no match: {too_common('use when')}"
