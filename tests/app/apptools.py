"""Helpers for the terminal UI tests: a small skills root and a way to wait for workers."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from textual.pilot import Pilot

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.main import make_app

SNAPSHOT_ROOT = Path("/tmp/skilldeck-snapshot-root")
"""Fixed (host-independent) root for snapshot tests, so no random tmp path is painted."""

LONG_BODY = "# Guide\n\n" + "\n".join(f"Step {i}: do the thing number {i}." for i in range(40))


async def settle(pilot: Pilot[int]) -> None:
    """Wait until every worker (except the file watcher) has finished, then repaint."""
    app = pilot.app
    idle = 0
    for _ in range(200):
        await pilot.pause()
        busy = [w for w in app.workers if not w.is_finished and w.group != "watch"]
        if busy:
            idle = 0
            await asyncio.gather(*(w.wait() for w in busy), return_exceptions=True)
        else:
            idle += 1
            if idle >= 3:
                break


def build_root(root: Path) -> Path:
    """Four skills with a spread of states: clean, warnings, an error, tools and files."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    write_skill(
        root,
        "pdf-forms",
        description="Fills and flattens PDF forms. Use when the user asks to fill a "
        "PDF form or extract form fields.",
        body="# PDF forms\n\nRead [the guide](references/guide.md) first.\n\n"
        "Run `fill.py $ARGUMENTS`.\n",
        extra="allowed-tools: Read Bash\n",
    )
    (root / "pdf-forms" / "references").mkdir()
    (root / "pdf-forms" / "references" / "guide.md").write_text(
        "# Guide\n\nField names are case sensitive.\n", encoding="utf-8"
    )
    write_skill(
        root,
        "git-release",
        description="Prepares a release with changelog, tag and notes. Use when "
        "cutting a new version of a git repository.",
        body=LONG_BODY + "\n",
        extra="tools:\n  - name: NoSuchTool\n    purpose: publish\n    required: true\n",
    )
    write_skill(root, "vague", description="Helps.", body="# Vague\n\nSee [x](missing.md).\n")
    write_skill(root, "broken-yaml", description="Broken: on purpose, the colon breaks YAML.")
    return root


def new_app(roots: list[Path], **kwargs: object) -> SkilldeckApp:
    """The app as tests run it: no watcher, no polling timer, no debounce, no embeddings,
    and dialogs answer keys at once (``key_guard=0.3`` tests the real delay)."""
    options: dict[str, object] = {
        "watch": False,
        "poll_interval": 0,
        "debounce": 0,
        "key_guard": 0,
        "semantic": False,
    }
    options.update(kwargs)
    return make_app(roots, **options)  # type: ignore[arg-type]


def text_of(widget: object) -> str:
    """Plain text of what a Static shows (Rich renderables included)."""
    from io import StringIO

    from rich.console import Console
    from textual.widgets import Static

    assert isinstance(widget, Static)
    console = Console(file=StringIO(), width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


def plain(renderable: object, width: int = 200) -> str:
    """Plain text of a Rich renderable or Textual content (lines joined, right-stripped)."""
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=width, record=True, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())
