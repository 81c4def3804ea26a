"""Pilot tests of the application as a whole: its notifications say where or why without
markup, and warnings have one colour everywhere."""

from __future__ import annotations

from pathlib import Path

from apptools import new_app, ready, screen_is, wait_for
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Static

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.colors import WARNING
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.widgets.diagnostics_list import SEVERITY_STYLE
from skilldeck.core.model import Severity


async def test_warnings_are_the_theme_orange_everywhere(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert app.theme_variables["warning"].lower() == WARNING.lower()  # badges, toasts
        assert WARNING in SEVERITY_STYLE[Severity.WARNING]  # diagnostics
        await pilot.press("f4")
        screen = await screen_is(pilot, ReviewScreen)
        widget = screen.query_one("#review-counts", Static)
        await wait_for(pilot, lambda: "▲" in str(widget.content), what="the warning badge")
        counts = widget.content
        spans = [s for s in counts.spans if "▲" in counts.plain[s.start : s.end]]  # type: ignore[union-attr]
        assert spans and all(WARNING in str(s.style) for s in spans)
    package = Path(SkilldeckApp.__module__.replace(".", "/")).parent
    sources = Path(__file__).resolve().parents[2] / "tui" / package
    for path in sources.rglob("*.py"):
        assert "yellow" not in path.read_text(encoding="utf-8"), path  # terminal yellow


async def test_screenshot_toasts_say_where_or_why_without_markup(
    skills_root: Path, tmp_path: Path
) -> None:
    posted: list[str] = []  # every toast shown, expired ones too (a slow run outlives some)

    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            posted.append(message.notification.message)

    async def toast(containing: str) -> str:
        def found() -> list[str]:
            return [m for m in posted if containing in m]

        await wait_for(pilot, found, what=f"a toast containing {containing!r}", seen=lambda: posted)
        [message] = found()
        return message

    app = new_app([skills_root])
    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        await ready(pilot)
        app.deliver_screenshot("shot.svg", str(tmp_path / "no" / "such" / "folder"))
        failed = await toast("Could not save the screenshot: ")
        assert "No such file or directory" in failed and "[" not in failed
        app.deliver_screenshot("shot.svg", str(tmp_path))
        saved = await toast("Saved the screenshot to ")
        assert saved.endswith("shot.svg.")
        assert "[" not in saved and (tmp_path / "shot.svg").is_file()
        await pilot.press("ctrl+c")
        hint = await toast("to quit")
        assert hint == "Press ctrl+q to quit Skilldeck."
        assert posted == [failed, saved, hint]  # Textual's own markup toasts were not shown
