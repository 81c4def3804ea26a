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


USAGE_DAYS = (
    # (days ago, skill, request, loaded in its session)
    (9, "writing-skills", "write a new SKILL.md for our release checklist", True),
    (8, "reviewing-skill-lint", "why does lint flag my skill description", True),
    (7, "triaging-skill-matches", "which skill should handle pdf forms", False),
    (6, "writing-skills", "draft a skill that wraps our deploy script", True),
    (5, "measuring-text-files", "count the words in notes.md", True),
    (4, "triaging-skill-matches", "pick the right skill for this request", False),
    (3, "reviewing-skill-lint", "review the lint findings of the git skill", True),
    (2, "measuring-text-files", "how long is the changelog in lines", False),
    (1, "writing-skills", "turn this checklist into a skill", True),
    (0, "reviewing-skill-lint", "fix the SD102 finding in my skill", False),
)
"""Agent sessions of the last ten days the usage picture shows."""


def seed_usage() -> None:
    """Telemetry of agent sessions over ten days: searches that matched a skill
    confidently, loads (some sessions never loaded their match: silent misses), and a
    request nothing matched."""
    from datetime import UTC, datetime, timedelta

    from skilldeck.core.config import load_settings
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.telemetry import Telemetry

    settings = load_settings()
    store = SessionStore(settings.sessions_db, settings=settings)
    now = datetime.now(UTC).replace(hour=9, minute=30, second=0, microsecond=0)
    for n, (ago, skill, request, loaded) in enumerate(USAGE_DAYS):
        session = store.create(actor="agent", label="claude-code").id
        moment = now - timedelta(days=ago, minutes=n)
        writer = Telemetry(settings.telemetry_dir, clock=lambda m=moment: m)
        writer.emit("skill_selected", query=request, selected=skill, confident=True,
                    session=session, candidates=[{"name": skill, "score": 0.71}])  # fmt: skip
        for _ in range(1 + n % 3 if loaded else 0):
            writer.emit("skill_loaded", name=skill, actor="agent", session=session)
        if ago == 2:
            writer.emit("skill_selected", query="deploy the staging cluster", selected=None,
                        confident=False, session=session,
                        candidates=[{"name": "writing-skills", "score": 0.21}])  # fmt: skip
        writer.close()
    store.close()


async def usage_scene(pilot: object) -> None:
    """The Usage screen (F9) over ten days of agent sessions (seeded first: the other
    pictures show no usage)."""
    seed_usage()
    await press(pilot, "f9")


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
    "usage": (usage_scene, SIZE),
}


def main(only: list[str] | None = None) -> int:
    """Write every screenshot (or only the scenes named on the command line, e.g.
    ``usage``); print the files written."""
    if not any(SKILLS.glob("*/SKILL.md")):
        print(f"no shipped skills under {SKILLS}", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="skilldeck-shots-") as home:
        os.environ["SKILLDECK_HOME"] = home
        os.environ.pop("SKILLDECK_CONFIG", None)
        os.environ.pop("NO_COLOR", None)
        shots: list[tuple[str, Scene, list[Path] | None, tuple[int, int]]] = [
            (name, scene, None, size)
            for name, (scene, size) in SCENES.items()
            if not only or name in only
        ]
        if only and "review-corpus" not in only:
            print("skipped review-corpus: not asked for")
        elif CORPUS.is_dir():
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
    raise SystemExit(main(sys.argv[1:]))
