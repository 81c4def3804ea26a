"""The Usage screen (F9) with Pilot: the silent miss of a real session in its table, live
refresh as agents work, Enter opening the skill with the request in the search box, the
never-used list, and the use sparkline in the preview pane. Waits on conditions, never
on fixed sleeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import main_screen, names, new_app, ready, wait_for
from textual.pilot import Pilot
from textual.widgets import Input, Label, Sparkline, Static

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.usage_screen import UsageScreen
from skilldeck.app.widgets.miss_table import MissTable
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.usage_chart import UsageChart
from skilldeck.app.widgets.use_sparkline import UseSparkline
from skilldeck.core.config import load_settings
from skilldeck.core.sessions import SessionStore
from skilldeck.core.workspace import Workspace

REQUEST = "fill in the fields of a pdf form"


def build(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "pdf-forms",
        description="Fill in PDF form fields and flatten PDF forms. Use when a user asks to "
        "fill a pdf form.",
    )
    write_skill(root, "git-history", description="Explain git history and blame. Use for git log.")
    write_skill(root, "idle-skill", description="Brew tea. Use when the kettle boils.")
    return root


def agent_session(root: Path, query: str, *, load: str | None = None) -> str:
    """A session whose agent searched ``query`` (the workspace's real agent search, as the
    MCP server runs it) and loaded ``load``, if given; its id."""
    settings = load_settings()
    workspace = Workspace(settings, [root])
    workspace.discover()
    store = SessionStore(settings.sessions_db, settings=settings)
    session = store.create(actor="agent").id
    answer = workspace.search(query, scope="visible", agent=True, session=session)
    assert answer.confident, answer.to_dict()
    if load is not None:
        store.activate_skill(session, load, actor="agent")
    store.close()
    workspace.telemetry.close()
    return session


def usage(app: SkilldeckApp) -> UsageScreen:
    screen = app.screen
    assert isinstance(screen, UsageScreen), type(screen).__name__
    return screen


def missed(pilot: Pilot[int]) -> list[tuple[str, str]]:
    screen = pilot.app.screen
    if not isinstance(screen, UsageScreen):
        return []
    return [(m.skill, m.session) for m in screen.query_one(MissTable).misses]


async def test_f9_shows_the_silent_miss_live_and_enter_opens_it(tmp_path: Path) -> None:
    root = build(tmp_path)
    ignored = agent_session(root, REQUEST)
    agent_session(root, REQUEST, load="pdf-forms")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f9")
        await wait_for(
            pilot, lambda: missed(pilot) == [("pdf-forms", ignored)], what="the silent miss"
        )
        screen = usage(app)
        assert screen.report is not None and screen.report.skills["pdf-forms"].loads == 1
        never = screen.query_one("#never-used", Static).content
        assert "idle-skill" in str(never) and "pdf-forms" not in str(never)
        assert screen.query_one(UsageChart).plt is not None
        later = agent_session(root, "explain the git history and blame of a file")
        await wait_for(
            pilot,
            lambda: ("git-history", later) in missed(pilot),
            what="a new silent miss shown while the screen is open",
        )
        table = screen.query_one(MissTable)
        table.move_cursor(row=[m.skill for m in table.misses].index("pdf-forms"))
        table.focus()
        await pilot.press("enter")

        def opened() -> bool:
            if not isinstance(app.screen, MainScreen):
                return False
            shown = main_screen(app)
            current = shown.current
            searched = shown.query_one("#search", Input).value
            return searched == REQUEST and current is not None and current.name == "pdf-forms"

        await wait_for(pilot, opened, what="the main screen with the skill and its request")


async def test_the_preview_shows_a_use_sparkline(tmp_path: Path) -> None:
    root = build(tmp_path)
    agent_session(root, REQUEST, load="pdf-forms")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf form")
        spark = main_screen(app).query_one(PreviewPane).query_one(UseSparkline)
        await wait_for(pilot, lambda: spark.has_class("-used"), what="the use sparkline")
        data = list(spark.query_one(Sparkline).data or [])
        assert len(data) == 14 and sum(data) == 1 and data[-1] == 1


async def test_untrusted_requests_are_shown_escaped(tmp_path: Path) -> None:
    root = build(tmp_path)
    agent_session(root, REQUEST + " \x1b[2J\x1b]0;owned\x07")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f9")
        await wait_for(pilot, lambda: len(missed(pilot)) == 1, what="the silent miss")
        table = usage(app).query_one(MissTable)
        cell = str(table.get_row_at(0)[1])
        assert "\x1b" not in cell and "\\x1b" in cell


async def test_results_as_seen_by_one_agent(tmp_path: Path) -> None:
    home = Path.home()
    claude, codex = home / ".claude/skills", home / ".codex/skills"
    write_skill(claude, "claude-only", description="Only Claude reads it. Use for tests.")
    write_skill(codex, "codex-only", description="Only Codex reads it. Use for tests.")
    app = new_app([claude, codex])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = main_screen(app)
        await app.run_action("screen.seen_by('claude-code')")
        await wait_for(pilot, lambda: names(app) == ["claude-only"], what="Claude Code's view")
        assert "as seen by Claude Code" in str(screen.sub_title)
        await app.run_action("screen.seen_by('codex')")
        await wait_for(pilot, lambda: names(app) == ["codex-only"], what="Codex's view")
        await app.run_action("screen.seen_by('')")
        await wait_for(pilot, lambda: len(names(app)) == 2, what="every skill again")


async def test_a_busy_fleet_lists_the_newest_misses_and_says_how_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.app.screens import usage_screen

    monkeypatch.setattr(usage_screen, "MISS_ROWS", 1)
    root = build(tmp_path)
    agent_session(root, REQUEST)
    newest = agent_session(root, "explain the git history and blame of a file")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("f9")
        await wait_for(pilot, lambda: len(missed(pilot)) == 1, what="one row")
        assert missed(pilot) == [("git-history", newest)]
        title = usage(app).query_one("#misses-title", Label).content
        assert "the newest 1 of 2" in str(title)
