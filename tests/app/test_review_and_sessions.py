"""Pilot tests of review mode, force-load, approvals, policy mode and enable/disable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptools import build_root, new_app, plain, settle, text_of
from textual.widgets import Input, OptionList, Select, Static, TextArea

from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.dialogs.force_load import NEW_SESSION, ForceLoadDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.app.screens.review_screen import ReviewScreen
from skilldeck.app.screens.sessions_screen import SessionsScreen
from skilldeck.app.widgets.preview_pane import PreviewPane
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.core.sessions import SessionStore


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path / "skills")


def review_rows(screen: ReviewScreen) -> list[str]:
    findings = screen.query_one("#findings", OptionList)
    return [plain(findings.get_option_at_index(i).prompt) for i in range(findings.option_count)]


async def test_review_groups_filters_and_opens_at_line(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        rows = review_rows(screen)
        assert rows[0].startswith("SD103")  # groups by rule: biggest first, then by code
        assert any("SD103" in r for r in rows) and any("SL103" in r for r in rows)
        counts = text_of(screen.query_one("#review-counts", Static))
        assert "✖ 1" in counts and "▲ 5" in counts
        await pilot.press("g")
        await settle(pilot)
        rows = review_rows(screen)
        assert rows[0].startswith("broken-yaml")  # grouped by skill, by name
        await pilot.press("2")  # hide warnings
        await settle(pilot)
        rows = review_rows(screen)
        assert not any("SL103" in r for r in rows) and any("SD103" in r for r in rows)
        await pilot.press("2", "slash", *"SL10")
        await settle(pilot)
        rows = [r for r in review_rows(screen) if r.startswith("  ")]
        assert len(rows) == 1 and "SL103" in rows[0]
        await pilot.press("enter")  # back to the list
        findings = screen.query_one("#findings", OptionList)
        assert findings.has_focus
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        preview = app.screen.query_one(PreviewPane)
        assert preview.skill is not None and preview.skill.name == "vague"
        assert preview.raw
        assert app.screen.query_one("#raw", TextArea).cursor_location[0] == 6


async def test_force_load_records_operator_in_the_store(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "f6")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ForceLoadDialog)
        assert dialog.query_one("#session", Select).value == NEW_SESSION
        await pilot.press(*"a.pdf")
        await settle(pilot)
        text = dialog.query_one("#text", TextArea).text
        assert text.startswith(f"Base directory for this skill: {root / 'pdf-forms'}")
        assert "fill.py a.pdf" in text
        facts = text_of(dialog.query_one("#facts", Static))
        assert "tokens" in facts and "not truncated" in facts
        area = dialog.query_one("#text", TextArea)
        row = area.cursor_location[0]
        assert f"arguments placed at line {row + 1}" in facts
        assert "fill.py a.pdf" in area.document.get_line(row)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.session_id is not None
    store = SessionStore()
    session = store.get(app.session_id)
    assert session.active_skills == ["pdf-forms"]
    assert session.skills[0].actor == "operator" and session.skills[0].arguments == "a.pdf"
    assert set(session.allowed_tools) == {"Read", "Bash"}
    actions = [(e.actor, e.action) for e in store.audit(app.session_id)]
    assert all(actor == "operator" for actor, _ in actions)
    assert len(actions) >= 2
    store.close()


async def test_force_load_cancel_writes_nothing(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "f6")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
    store = SessionStore()
    assert store.list(include_ended=True) == []
    store.close()


async def test_approvals_pending_queue_and_mode_seen_through_the_store(root: Path) -> None:
    store = SessionStore()
    session = store.create(mode="approval", actor="agent")
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert screen.selected is not None and screen.selected.id == session.id
        # another process asks for two tools: the queue appears on the next poll
        assert store.check(session.id, "Bash", actor="agent").requires_approval
        assert store.check(session.id, "WebFetch", actor="agent").requires_approval
        app._poll_store()
        await settle(pilot)
        pending = screen.query_one("#pending", OptionList)
        assert [pending.get_option_at_index(i).id for i in range(pending.option_count)] == [
            "Bash",
            "WebFetch",
        ]
        pending.focus()
        await pilot.press("a")
        await settle(pilot)
        assert store.get(session.id).approved == ["Bash"]
        await pilot.press("d")
        await settle(pilot)
        now = store.get(session.id)
        assert now.denied == ["WebFetch"] and now.pending == []
        await pilot.press("m")  # approval -> permissive widens access: asks first
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert store.get(session.id).mode == "approval"
        await pilot.press("y")
        await settle(pilot)
        assert store.get(session.id).mode == "permissive"
        await pilot.press("t", *"Edit", "enter")
        await pilot.click("#deny")
        await settle(pilot)
        assert "Edit" in store.get(session.id).denied
        await pilot.press("n")
        await settle(pilot)
        assert len(store.list()) == 2 and app.session_id != session.id
        await pilot.press("k")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await settle(pilot)
        assert store.get(app.session_id or "").ended is not None
        audit = store.audit(session.id)
        operator = {(e.action, e.subject) for e in audit if e.actor == "operator"}
        assert len(operator) >= 3
    store.close()


async def test_disable_then_enable_writes_only_the_registry(root: Path, tmp_path: Path) -> None:
    skill_md = root / "pdf-forms" / "SKILL.md"
    before = skill_md.read_bytes()
    app = new_app([root])
    registry = app.workspace.settings.registry_file
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "f7")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await settle(pilot)
        data = json.loads(registry.read_text(encoding="utf-8"))
        assert "false" in json.dumps(data).lower()
        skill = app.screen.query_one(ResultsList).current
        assert skill is not None and not skill.enabled
        await pilot.press("f7")
        await settle(pilot)
        await pilot.press("n")  # cancel: nothing changes
        await settle(pilot)
        assert not app.screen.query_one(ResultsList).current.enabled  # type: ignore[union-attr]
        await pilot.press("f7", "y")
        await settle(pilot)
        assert app.screen.query_one(ResultsList).current.enabled  # type: ignore[union-attr]
    assert skill_md.read_bytes() == before


async def test_disabled_skill_cannot_be_force_loaded(root: Path) -> None:
    app = new_app([root])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"pdf", "down", "f7", "y")
        await settle(pilot)
        await pilot.press("f6")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ForceLoadDialog)
        assert "PERMISSION_DENIED" in text_of(dialog.query_one("#facts", Static))
        assert dialog.query_one("#confirm").disabled
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert isinstance(app.screen.query_one("#search", Input), Input)
