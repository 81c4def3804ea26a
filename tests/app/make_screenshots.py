"""Write screenshots/*.svg and *.png of the terminal UI over the shipped skills.

Run: ``python tests/app/make_screenshots.py`` (PNG needs ``rsvg-convert`` from librsvg2-bin).
State (sessions, cache) goes to a temporary SKILLDECK_HOME; nothing of the user's is touched.
The review-mode picture over the real-world corpus needs the shared material: set
``SKILLDECK_SHARED`` (default: ``../shared`` beside the repository), as for the tests.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "screenshots"
SKILLS = REPO / "skills"
SIZE = (120, 40)
SMALL = (80, 24)

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "app")]
from apptools import settle  # noqa: E402  (the test helpers, importable once tests/ is on the path)

from conftest import CORPUS  # noqa: E402  (SKILLDECK_SHARED, the same place the tests look)


def svg_for_png(svg: str) -> str:
    """Make Textual's SVG render faithfully with librsvg: real spaces, local mono font."""
    svg = svg.replace(
        '<svg class="rich-terminal"', '<svg xml:space="preserve" class="rich-terminal"', 1
    )
    svg = svg.replace("&#160;", " ")
    return svg.replace(
        "font-family: Fira Code, monospace;", "font-family: Fira Code, DejaVu Sans Mono, monospace;"
    )


def to_png(svg_path: Path) -> Path | None:
    """Convert one SVG to PNG with rsvg-convert (None when it is not installed)."""
    tool = shutil.which("rsvg-convert")
    if tool is None:
        return None
    png = svg_path.with_suffix(".png")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as tmp:
        tmp.write(svg_for_png(svg_path.read_text(encoding="utf-8")))
    try:
        subprocess.run([tool, "-o", str(png), tmp.name], check=True)
    finally:
        os.unlink(tmp.name)
    return png


Scene = Callable[[object], Awaitable[None]]


async def shoot(
    name: str, scene: Scene, roots: list[Path] | None = None, size: tuple[int, int] = SIZE
) -> Path:
    """Run the app over ``roots`` (the shipped skills) at ``size``, play ``scene``, save the
    SVG."""
    from skilldeck.app.main import make_app

    app = make_app(
        roots or [SKILLS],
        watch=False,
        poll_interval=0,
        debounce=0,
        key_guard=0,  # the scenes type into dialogs at once
        semantic=False,
        deterministic=True,
    )
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await scene(pilot)
        await settle(pilot)
        path = OUT / f"{name}.svg"
        path.write_text(app.export_screenshot(title="Skilldeck"), encoding="utf-8")
    return path


async def press(pilot: object, *keys: str) -> None:
    """Press keys one by one, settling after each."""
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def main_scene(pilot: object) -> None:
    """A query typed, the best match highlighted."""
    await press(pilot, *"review lint", "down")


async def review_scene(pilot: object) -> None:
    """Review mode over the shipped skills."""
    await press(pilot, "down", "f4")


async def force_load_scene(pilot: object) -> None:
    """The force-load dialog with arguments."""
    await press(pilot, *"write skill", "down", "f6", *"pdf-forms")


async def approvals_scene(pilot: object) -> None:
    """A session with a force-loaded skill and an agent waiting for approval."""
    from textual.pilot import Pilot

    from skilldeck.app.app import SkilldeckApp
    from skilldeck.core.sessions import SessionStore

    assert isinstance(pilot, Pilot) and isinstance(pilot.app, SkilldeckApp)
    await press(pilot, *"triage", "down", "f6", *"which skill fits", "ctrl+s")
    app = pilot.app
    assert app.session_id is not None
    other = SessionStore()  # an agent (e.g. the MCP server) in another process
    other.check(app.session_id, "WebFetch", actor="agent")
    other.check(app.session_id, "Bash(rm -rf build)", actor="agent")
    other.close()
    await press(pilot, "f5")
    app._poll_store()
    await settle(pilot)
    await press(pilot, "tab")


async def script_review_scene(pilot: object) -> None:
    """An agent's run of the shipped script waits for approval; its review shows the text
    and the hash."""
    from textual.pilot import Pilot

    from skilldeck.app.app import SkilldeckApp
    from skilldeck.core.config import load_settings
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.errors import SkilldeckError
    from skilldeck.core.execution import execute
    from skilldeck.core.sessions import SessionStore

    assert isinstance(pilot, Pilot) and isinstance(pilot.app, SkilldeckApp)
    os.environ["SKILLDECK_SKILLS_EXEC"] = "1"
    skill = parse_skill_file(SKILLS / "measuring-text-files" / "SKILL.md", root=SKILLS)
    other = SessionStore()  # the agent's MCP server, in another process
    session = other.create(mode="approval", actor="agent", label="claude-code")
    try:
        execute(
            load_settings(),
            skill,
            "scripts/text_stats.py",
            ["notes.md"],
            store=other,
            session_id=session.id,
        )
    except SkilldeckError:
        pass  # queued: requires_approval
    finally:
        other.close()
        del os.environ["SKILLDECK_SKILLS_EXEC"]
    await press(pilot, "down", "f5")
    pilot.app._poll_store()
    await settle(pilot)
    await press(pilot, "a")


async def light_scene(pilot: object) -> None:
    """The light theme (badges and markers readable on its grey), a query typed."""
    await press(pilot, *"skill", "down", "ctrl+t")


SCENES: dict[str, tuple[Scene, tuple[int, int]]] = {
    "main": (main_scene, SIZE),
    "review": (review_scene, SIZE),
    "force-load": (force_load_scene, SIZE),
    "approvals": (approvals_scene, SIZE),
    "script-review": (script_review_scene, SIZE),
    "light": (light_scene, (120, 36)),
    "small": (main_scene, SMALL),
}


def main() -> int:
    """Write every screenshot; print the files written."""
    if not any(SKILLS.glob("*/SKILL.md")):
        print(f"no shipped skills under {SKILLS}", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="skilldeck-shots-") as home:
        os.environ["SKILLDECK_HOME"] = home
        os.environ.pop("SKILLDECK_CONFIG", None)
        os.environ.pop("NO_COLOR", None)
        shots: list[tuple[str, Scene, list[Path] | None, tuple[int, int]]] = [
            (name, scene, None, size) for name, (scene, size) in SCENES.items()
        ]
        if CORPUS.is_dir():
            # The shipped skills lint clean, so review mode is empty for them; this extra
            # picture shows it over the shared real-world corpus.
            shots.append(("review-corpus", review_scene, [CORPUS], SIZE))
        else:
            print(f"skipped review-corpus: no corpus at {CORPUS} (set SKILLDECK_SHARED)")
        for name, scene, roots, size in shots:
            svg = asyncio.run(shoot(name, scene, roots, size))
            png = to_png(svg)
            print(svg.relative_to(REPO), png.relative_to(REPO) if png else "(no rsvg-convert)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
