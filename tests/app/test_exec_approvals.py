"""Pilot tests of script (and toolset module) approvals: the operator reads the requested
file and its SHA-256 before deciding, a file changed since the request is flagged, and
approving pins the requested hash in the session store."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptools import new_app, plain, settle, text_of
from textual.widgets import Button, OptionList, Static, TextArea

from conftest import write_skill
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


async def open_review(pilot: object) -> RequestReviewDialog:
    """From the main screen: sessions, then ``a`` on the highlighted pending request."""
    await pilot.press("down", "f5")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    await pilot.press("a")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    dialog = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(dialog, RequestReviewDialog)
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
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        pending = screen.query_one("#pending", OptionList)
        assert pending.get_option_at_index(0).id == entry
        assert "script demo/scripts/hello.py" in plain(pending.get_option_at_index(0).prompt)
        await pilot.press("a")  # a script is approved only through the review
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestReviewDialog)
        assert store.get(session.id).approved == []
        assert dialog.query_one("#content", TextArea).text == SCRIPT_TEXT
        facts = text_of(dialog.query_one("#facts", Static))
        assert f"skill-sha256:{digest}" in facts and "same digest" in facts
        assert not dialog.query_one("#warning", Static).display
        await pilot.press("]")  # the approval covers every file: each can be read
        await settle(pilot)
        assert dialog.query_one("#content", TextArea).text.startswith("---\nname: demo")
        assert "1/2 SKILL.md" in text_of(dialog.query_one("#facts", Static))
        await pilot.press("[")
        await settle(pilot)
        assert dialog.query_one("#content", TextArea).text == SCRIPT_TEXT
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
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
        await settle(pilot)
        dialog = await open_review(pilot)
        assert dialog.query_one("#content", TextArea).text == edited
        warning = dialog.query_one("#warning", Static)
        assert warning.display and "CHANGED" in text_of(warning)
        facts = text_of(dialog.query_one("#facts", Static))
        assert snapshot_skill(root / "demo").digest in facts.replace("\n", "")
        assert "changed scripts/hello.py" in facts and "added   scripts/helper.pth" in facts
        assert str(dialog.query_one("#approve", Button).label) == "Approve requested digest (a)"
        await pilot.press("escape")  # cancel decides nothing
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert store.get(session.id).pending == [entry]
    store.close()


async def test_missing_script_cannot_be_approved_but_can_be_denied(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    entry = queue_run(root, store, session)
    (root / "demo" / "scripts" / "hello.py").unlink()
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        dialog = await open_review(pilot)
        assert dialog.query_one("#approve", Button).disabled
        assert "cannot be read" in text_of(dialog.query_one("#warning", Static))
        await pilot.press("a")  # nothing to review: no approval
        await settle(pilot)
        assert app.screen is dialog
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
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
        await settle(pilot)
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


def toolset_rows(app: object) -> list[tuple[str, str]]:
    table = app.screen.query_one(ToolsetTable)  # type: ignore[attr-defined]
    return [(s.name, s.state) for s in table.statuses]


async def test_tools_pane_lists_toolset_tools_with_state_and_approves(
    toolset_root: Path,
) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="operator")
    app = new_app([toolset_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "down", "3")
        await settle(pilot)
        table = app.screen.query_one(ToolsetTable)
        assert table.display
        assert toolset_rows(app) == [
            ("hello.greet", "not approved"),
            ("hello.shout", "not approved"),
        ]
        app.session_id = session.id
        await settle(pilot)
        assert table.border_title == f"Toolset tools · session {session.id} · enter: review module"
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestReviewDialog)
        assert dialog.request.kind == "toolset"
        assert dialog.query_one("#content", TextArea).text == TOOLSET
        await pilot.press("a")
        await settle(pilot)
        assert toolset_rows(app) == [("hello.greet", "approved"), ("hello.shout", "approved")]
        digest = snapshot_skill(toolset_root / "hello").digest
        assert store.get(session.id).approved == [
            f"Toolset(hello/toolsets/index.py@skill-sha256:{digest})"
        ]
        await pilot.press("escape", "escape", *"demo", "down")  # no toolsets: no table
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert screen.current is not None and screen.current.name == "demo"
        assert not app.screen.query_one(ToolsetTable).display
    store.close()
