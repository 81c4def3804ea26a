"""Agent listings sort skills by name without case (issue #35 polish): ``Beta`` between
``alpha`` and ``gamma``, not before every lower-case name."""

from __future__ import annotations

from pathlib import Path

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.context import build_context
from skilldeck.core.loader import render_listing
from skilldeck.core.workspace import Workspace

NAMES = ["alpha", "Beta", "gamma", "Zulu"]


def _workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "skills"
    for name in ("Zulu", "gamma", "Beta", "alpha"):
        write_skill(root, name, description=f"Handles {name} work. Use when asked about {name}.")
    workspace = Workspace(Settings(), [root])
    workspace.discover()
    return workspace


def test_every_agent_listing_sorts_names_without_case(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    visible = workspace.visible_to_models()
    assert [s.name for s in visible] == NAMES  # list_skills, prompts, resources
    assert render_listing(visible).included == NAMES  # instructions, `skilldeck prompt`
    text = render_listing(visible, fmt="markdown").text
    assert [text.index(name) for name in NAMES] == sorted(text.index(name) for name in NAMES)
    answer = build_context(workspace, "what can you do?")
    assert answer.tier == "listing"
    lines = [line.split(":")[0][2:] for line in answer.text.splitlines() if line.startswith("- ")]
    assert lines == NAMES


def test_a_tight_budget_drops_the_last_names_without_case(tmp_path: Path) -> None:
    visible = _workspace(tmp_path).visible_to_models()
    full = len(render_listing(visible).text)
    listing = render_listing(visible, budget=full - 60)
    assert listing.omitted and listing.included == NAMES[: len(listing.included)]


def test_the_mcp_instructions_list_names_without_case(tmp_path: Path) -> None:
    from skilldeck.mcp.answers import instructions_text

    text = instructions_text(_workspace(tmp_path).visible_to_models(), 4000, skills_v1=True)
    assert [text.index(f"**{name}**") for name in NAMES] == sorted(
        text.index(f"**{name}**") for name in NAMES
    )
