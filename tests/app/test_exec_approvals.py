"""Pilot tests of script (and toolset module) approvals: the operator reads the requested
file and its SHA-256 before deciding, a file changed since the request is flagged, and
approving pins the requested hash in the session store."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import burst, main_screen, new_app, plain, ready, screen_is, showing, text_of
from apptools import wait_for as wait
from textual.pilot import Pilot
from textual.widgets import Button, OptionList, Static, TextArea

from conftest import write_skill
from skilldeck.app.app import SkilldeckApp
from skilldeck.app.dialogs.request_review import RequestReviewDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.sessions_screen import (
    SessionsScreen,
    pending_row,
    short_entry,
)
from skilldeck.app.widgets.toolset_table import ToolsetTable
from skilldeck.core.config import load_settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import execute, snapshot_skill
from skilldeck.core.execution.review import parse_file_request
from skilldeck.core.model import Skill
from skilldeck.core.sessions import Session, SessionStore

SCRIPT_TEXT = "import sys\nprint('hello', *sys.argv[1:])\n"


@pytest.fixture
def root(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Skill ``demo`` with ``scripts/hello.py``; skills_exec on in the isolated home."""
    monkeypatch.delenv("SKILLDECK_SKILLS_EXEC", raising=False)
    (isolated_home / "config.toml").write_text("skills_exec = true\n", encoding="utf-8")
    root = tmp_path / "skills"
    write_skill(root, "demo", description="Demo skill. Use when testing scripts.")
    (root / "demo" / "scripts").mkdir()
    (root / "demo" / "scripts" / "hello.py").write_text(SCRIPT_TEXT, encoding="utf-8")
    return root


def demo(root: Path) -> Skill:
    """Skill ``demo`` as discovery reads it."""
    return parse_skill_file(root / "demo" / "SKILL.md", root=root)


def queue_run(root: Path, store: SessionStore, session: Session) -> str:
    """Ask to run demo's script as an agent would: it waits for approval. Returns the entry."""
    with pytest.raises(SkilldeckError) as caught:
        execute(
            load_settings(),
            demo(root),
            "scripts/hello.py",
            ["x"],
            store=store,
            session_id=session.id,
        )
    assert caught.value.details["reason"] == "requires_approval"
    return str(caught.value.details["approval"])


async def open_sessions(pilot: Pilot[int]) -> SessionsScreen:
    """From the main screen: the sessions screen, once a pending request is listed, with
    the pending list focused (``a`` and ``d`` act only there)."""
    await pilot.press("down", "f5")
    screen = await screen_is(pilot, SessionsScreen)
    pending = screen.query_one("#pending", OptionList)
    await wait(
        pilot,
        lambda: pending.option_count > 0 and pending.get_option_at_index(0).id is not None,
        what="a pending request listed",
    )
    pending.focus()
    await wait(pilot, lambda: pending.has_focus, what="the pending list focused")
    return screen


async def reviewed(pilot: Pilot[int], dialog: RequestReviewDialog) -> None:
    """Wait until ``dialog`` has read the requested file."""
    facts = dialog.query_one("#facts", Static)
    await wait(
        pilot,
        lambda: dialog.review is not None,
        what=f"the review of {dialog.request.path}",
        seen=lambda: text_of(facts),
    )


async def content_is(pilot: Pilot[int], dialog: RequestReviewDialog, check: object) -> None:
    """Wait until the text shown in ``dialog`` passes ``check``."""
    area = dialog.query_one("#content", TextArea)
    await wait(
        pilot,
        lambda: check(area.text),  # type: ignore[operator]
        what="the file's text shown",
        seen=lambda: area.text[:80],
    )


async def open_review(pilot: Pilot[int]) -> RequestReviewDialog:
    """From the main screen: sessions, then ``a`` on the highlighted pending request; waits
    until the requested file was read."""
    await open_sessions(pilot)
    await pilot.press("a")
    dialog = await screen_is(pilot, RequestReviewDialog)
    await reviewed(pilot, dialog)
    return dialog


def test_parse_file_request_and_row() -> None:
    digest = "ab" * 32
    entry = f"Toolset(demo/toolsets/index.py@skill-sha256:{digest.upper()})"
    request = parse_file_request(entry)
    assert request is not None and request.kind == "toolset"
    assert request.ref == "demo/toolsets/index.py" and request.digest == digest
    assert parse_file_request("Bash(git log:*)") is None
    assert parse_file_request(f"Script(demo//etc/passwd@skill-sha256:{digest})") is None
    # an entry of older versions pinned one file: it is no file request any more
    assert parse_file_request(f"Script(demo/scripts/a.py@sha256:{digest})") is None
    row = plain(pending_row(f"Script(demo/scripts/a.py@skill-sha256:{digest})"))
    assert row == f"script demo/scripts/a.py skill-sha256:{digest[:12]}…"
    short = short_entry(request.entry)
    assert short == f"Toolset(demo/toolsets/index.py@skill-sha256:{digest[:12]}…)"
    assert short_entry("Bash(git log:*)") == "Bash(git log:*)"


async def test_pending_script_shows_text_and_hash_then_approve_pins_it(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    digest = snapshot_skill(root / "demo").digest
    assert entry == f"Script(demo/scripts/hello.py@skill-sha256:{digest})"
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        screen = await open_sessions(pilot)
        pending = screen.query_one("#pending", OptionList)
        assert pending.get_option_at_index(0).id == entry
        assert "script demo/scripts/hello.py" in plain(pending.get_option_at_index(0).prompt)
        await pilot.press("a")  # a script is approved only through the review
        dialog = await screen_is(pilot, RequestReviewDialog)
        await reviewed(pilot, dialog)
        assert store.get(session.id).approved == []
        assert dialog.query_one("#content", TextArea).text == SCRIPT_TEXT
        facts = text_of(dialog.query_one("#facts", Static))
        assert f"skill-sha256:{digest}" in facts and "same digest" in facts
        assert not dialog.query_one("#warning", Static).display
        await pilot.press("]")  # the approval covers every file: each can be read
        await content_is(pilot, dialog, lambda text: text.startswith("---\nname: demo"))
        assert "1/2 SKILL.md" in text_of(dialog.query_one("#facts", Static))
        await pilot.press("[")
        await content_is(pilot, dialog, lambda text: text == SCRIPT_TEXT)
        await pilot.press("a")
        await screen_is(pilot, SessionsScreen)
        await wait(pilot, lambda: store.get(session.id).pending == [], what="nothing pending")
    now = store.get(session.id)
    assert now.approved == [entry] and now.pending == []
    result = execute(
        load_settings(), demo(root), "scripts/hello.py", ["x"], store=store, session_id=session.id
    )
    assert result.allowed_by == "approved" and result.run.stdout == "hello x\n"
    store.close()


async def test_changed_script_is_flagged(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    edited = SCRIPT_TEXT + "import os; os.remove('x')\n"
    (root / "demo" / "scripts" / "hello.py").write_text(edited, encoding="utf-8")
    (root / "demo" / "scripts" / "helper.pth").write_text("import os\n", encoding="utf-8")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        dialog = await open_review(pilot)
        assert dialog.query_one("#content", TextArea).text == edited
        warning = dialog.query_one("#warning", Static)
        assert warning.display and "CHANGED" in text_of(warning)
        facts = text_of(dialog.query_one("#facts", Static))
        assert snapshot_skill(root / "demo").digest in facts.replace("\n", "")
        assert "changed scripts/hello.py" in facts and "added   scripts/helper.pth" in facts
        # what is shown is not what was requested: it cannot be approved, only denied
        assert dialog.query_one("#approve", Button).disabled
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is dialog and store.get(session.id).approved == []
        await pilot.press("escape")  # cancel decides nothing
        await screen_is(pilot, SessionsScreen)
        assert store.get(session.id).pending == [entry]
    store.close()


async def test_a_helper_swapped_after_the_review_is_not_approved(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        dialog = await open_review(pilot)
        assert dialog.query_one("#content", TextArea).text == SCRIPT_TEXT  # as requested
        (root / "demo" / "scripts" / "helper.py").write_text("import os\n", encoding="utf-8")
        await pilot.press("a")
        await screen_is(pilot, SessionsScreen)
        await wait(
            pilot,
            lambda: (
                not [w for w in app.workers if w.group == "sessions-change" and not w.is_finished]
            ),
            what="the decision handled",
        )
    now = store.get(session.id)
    assert now.approved == [] and now.pending == [entry]  # the approval names what was shown
    store.close()


async def test_missing_script_cannot_be_approved_but_can_be_denied(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    (root / "demo" / "scripts" / "hello.py").unlink()
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await open_sessions(pilot)
        await pilot.press("a")
        dialog = await screen_is(pilot, RequestReviewDialog)
        warning = dialog.query_one("#warning", Static)
        await wait(pilot, lambda: "cannot be read" in text_of(warning), what="the warning")
        assert dialog.query_one("#approve", Button).disabled
        await pilot.press("a")  # nothing to review: no approval
        await pilot.pause()
        assert app.screen is dialog
        await pilot.press("d")
        await screen_is(pilot, SessionsScreen)
        await wait(pilot, lambda: store.get(session.id).denied == [entry], what="denied")
    now = store.get(session.id)
    assert now.denied == [entry] and now.approved == [] and now.pending == []
    store.close()


async def test_hostile_script_text_is_shown_escaped(root: Path) -> None:
    hostile = "print('ok')  # \x1b[2J\u202e hidden\n"
    (root / "demo" / "scripts" / "hello.py").write_text(hostile, encoding="utf-8")
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    queue_run(root, store, session)
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        dialog = await open_review(pilot)
        text = dialog.query_one("#content", TextArea).text
        assert "\x1b" not in text and "\\x1b[2J<U+202E> hidden" in text
        assert "control or bidirectional" in text_of(dialog.query_one("#warning", Static))
    store.close()


TOOLSET = '''class HelloToolset:
    def greet(self, name: str, times: int = 1) -> str:
        """Greet someone by name."""
        return " ".join([f"Hello, {name}!"] * times)

    def shout(self, text: str) -> str:
        """Say it loudly."""
        return text.upper()
'''


@pytest.fixture
def toolset_root(root: Path) -> Path:
    """Adds skill ``hello`` declaring ``toolsets/index:HelloToolset``."""
    write_skill(
        root,
        "hello",
        description="Greets people. Use when testing toolsets.",
        extra='toolsets: ["toolsets/index:HelloToolset"]\n',
    )
    (root / "hello" / "toolsets").mkdir()
    (root / "hello" / "toolsets" / "index.py").write_text(TOOLSET, encoding="utf-8")
    return root


def toolset_rows(app: SkilldeckApp) -> list[tuple[str, str]]:
    table = main_screen(app).query_one(ToolsetTable)
    return [(s.name, s.state) for s in table.statuses]


async def toolsets_are(pilot: Pilot[int], expected: list[tuple[str, str]]) -> None:
    app = pilot.app
    assert isinstance(app, SkilldeckApp)
    await wait(
        pilot,
        lambda: toolset_rows(app) == expected,
        what=f"toolset rows {expected}",
        seen=lambda: toolset_rows(app),
    )


async def test_tools_pane_lists_toolset_tools_with_state_and_approves(
    toolset_root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="operator")
    app = new_app([toolset_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"hello", "down", "3")
        await showing(pilot, "hello")
        table = main_screen(app).query_one(ToolsetTable)
        assert table.display
        await toolsets_are(
            pilot, [("hello.greet", "not approved"), ("hello.shout", "not approved")]
        )
        app.session_id = session.id
        title = f"Toolset tools · session {session.id} · enter: review module"
        await wait(pilot, lambda: table.border_title == title, what="the session's title")
        table.focus()
        await wait(pilot, lambda: table.has_focus, what="the toolset table focused")
        await pilot.press("enter")
        dialog = await screen_is(pilot, RequestReviewDialog)
        assert dialog.request.kind == "toolset"
        await reviewed(pilot, dialog)
        assert dialog.query_one("#content", TextArea).text == TOOLSET
        await pilot.press("a")
        await toolsets_are(pilot, [("hello.greet", "approved"), ("hello.shout", "approved")])
        digest = snapshot_skill(toolset_root / "hello").digest
        assert store.get(session.id).approved == [
            f"Toolset(hello/toolsets/index.py@skill-sha256:{digest})"
        ]
        await pilot.press("escape", "escape", *"demo", "down")  # no toolsets: no table
        await showing(pilot, "demo")
        assert isinstance(app.screen, MainScreen)
        assert not app.screen.query_one(ToolsetTable).display
    store.close()


async def test_request_review_ignores_keys_typed_before_it_appeared(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    app = new_app([root], key_guard=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await open_sessions(pilot)
        burst(app, [("a", "a"), ("a", "a"), ("d", "d")])  # the first opens the review
        dialog = await screen_is(pilot, RequestReviewDialog)
        await reviewed(pilot, dialog)
        assert app.screen is dialog
        assert store.get(session.id).pending == [entry]
        await wait(pilot, lambda: not dialog.guarded, what="the key guard over")
        await pilot.press("a")
        await screen_is(pilot, SessionsScreen)
        await wait(pilot, lambda: store.get(session.id).approved == [entry], what="approved")
    store.close()
