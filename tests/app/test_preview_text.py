"""The preview's texts outside a running app (issue #35 polish): a description written on
several lines reads as one paragraph, never with a literal ``\\n``; a body too large to
render says why it is plain text."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from conftest import write_skill
from skilldeck.app.widgets.preview_pane import (
    RICH_MARKDOWN_LIMIT,
    frontmatter_table,
    too_large_note,
)
from skilldeck.core.config import Settings
from skilldeck.core.workspace import Workspace


def test_a_description_on_several_lines_is_one_paragraph(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    folder = root / "multi"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: multi\ndescription: |\n  Fills PDF forms.\n  Use when a form is given.\n"
        "---\nBody.\n",
        encoding="utf-8",
    )
    write_skill(root, "plain")
    workspace = Workspace(Settings(), [root])
    workspace.discover()
    skill = workspace.by_name("multi")
    assert skill is not None and "\n" in skill.description
    console = Console(width=120, record=True, color_system=None)
    console.print(frontmatter_table(skill))
    shown = console.export_text()
    assert "\\n" not in shown
    assert "Fills PDF forms. Use when a form is given." in shown


def test_a_body_too_large_to_render_says_why() -> None:
    note = too_large_note(RICH_MARKDOWN_LIMIT * 2)
    assert "Plain text" in note and "128 KB" in note and "64 KB" in note
