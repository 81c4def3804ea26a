"""Pilot tests of the skill actions on the main screen: enable and disable (the governance
registry only), and force-load into a session (recorded as the operator's)."""

from __future__ import annotations

import json
from pathlib import Path

from apptools import header, main_screen, new_app, ready, screen_is, showing, text_of, wait_for
from textual.widgets import Input, Select, Static, TextArea

from skilldeck.app.dialogs.confirm import ConfirmDialog
from skilldeck.app.dialogs.force_load import NEW_SESSION, ForceLoadDialog
from skilldeck.app.screens.main_screen import MainScreen
from skilldeck.core.sessions import SessionStore


def enabled(app: object, name: str = "pdf-forms") -> bool | None:
    """Whether the highlighted skill is enabled (None: another skill is highlighted)."""
    current = main_screen(app).current  # type: ignore[arg-type]
    return current.enabled if current is not None and current.name == name else None


async def toggle(pilot: object, answer: str, expect: bool) -> None:
    """f7, answer the confirmation, wait until the highlighted skill is ``expect``."""
    await pilot.press("f7")  # type: ignore[attr-defined]
    await screen_is(pilot, ConfirmDialog)  # type: ignore[arg-type]
    await pilot.press(answer)  # type: ignore[attr-defined]
    await screen_is(pilot, MainScreen)  # type: ignore[arg-type]
    app = pilot.app  # type: ignore[attr-defined]
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: enabled(app) is expect,
        what=f"pdf-forms {'enabled' if expect else 'disabled'}",
    )


async def test_disable_then_enable_writes_only_the_registry(skills_root: Path) -> None:
    skill_md = skills_root / "pdf-forms" / "SKILL.md"
    before = skill_md.read_bytes()
    app = new_app([skills_root])
    registry = app.workspace.settings.registry_file
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        await toggle(pilot, "y", False)
        data = json.loads(registry.read_text(encoding="utf-8"))
        assert "false" in json.dumps(data).lower()
        written = registry.read_bytes()
        await toggle(pilot, "n", False)  # cancel: nothing changes
        assert registry.read_bytes() == written
        await toggle(pilot, "y", True)
    assert skill_md.read_bytes() == before


async def test_disabling_updates_the_header_at_once(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        assert "status      enabled" in header(app)
        for answer, shown in (("y", "disabled (registry)"), ("y", "status      enabled")):
            await pilot.press("f7")
            await screen_is(pilot, ConfirmDialog)
            await pilot.press(answer)
            await wait_for(pilot, lambda shown=shown: shown in header(app), what=shown)  # type: ignore[misc]
    # Re-enabling removes the entry instead of writing "enabled": true.
    registry = json.loads(app.workspace.settings.registry_file.read_text(encoding="utf-8"))
    assert registry == {"skills": {}}


async def test_force_load_records_operator_in_the_store(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        assert dialog.query_one("#session", Select).value == NEW_SESSION
        await pilot.press(*"a.pdf")
        area = dialog.query_one("#text", TextArea)
        await wait_for(pilot, lambda: "fill.py a.pdf" in area.text, what="the arguments placed")
        assert area.text.startswith(f"Base directory for this skill: {skills_root / 'pdf-forms'}")
        facts = text_of(dialog.query_one("#facts", Static))
        assert "tokens" in facts and "not truncated" in facts
        row = area.cursor_location[0]
        assert f"arguments placed at line {row + 1}" in facts
        assert "fill.py a.pdf" in area.document.get_line(row)
        await pilot.press("ctrl+s")
        await screen_is(pilot, MainScreen)
        await wait_for(pilot, lambda: app.session_id is not None, what="a session in use")
    session_id = app.session_id
    assert session_id is not None
    store = SessionStore()
    session = store.get(session_id)
    assert session.active_skills == ["pdf-forms"]
    assert session.skills[0].actor == "operator" and session.skills[0].arguments == "a.pdf"
    assert set(session.allowed_tools) == {"Read", "Bash"}
    actions = [(e.actor, e.action) for e in store.audit(session_id)]
    assert all(actor == "operator" for actor, _ in actions)
    assert len(actions) >= 2
    store.close()


async def test_force_load_cancel_writes_nothing(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        area = dialog.query_one("#text", TextArea)
        await wait_for(pilot, lambda: "fill.py" in area.text, what="the text to load")
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)
    assert app.session_id is None
    store = SessionStore()
    assert store.list(include_ended=True) == []
    store.close()


async def test_force_load_keeps_arguments_when_tab_leaves_and_comes_back(
    skills_root: Path,
) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        await pilot.press(*"a.pdf", "tab", "shift+tab", *" b.pdf", "tab")
        arguments = dialog.query_one("#arguments", Input)
        await wait_for(
            pilot,
            lambda: dialog.result is not None and dialog.result.arguments == "a.pdf b.pdf",
            what="the text loaded with both arguments",
            seen=lambda: (arguments.value, dialog.result and dialog.result.arguments),
        )
        assert arguments.value == "a.pdf b.pdf"


async def test_disabled_skill_cannot_be_force_loaded(skills_root: Path) -> None:
    app = new_app([skills_root])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"pdf", "down")
        await showing(pilot, "pdf-forms")
        await toggle(pilot, "y", False)
        await pilot.press("f6")
        dialog = await screen_is(pilot, ForceLoadDialog)
        facts = dialog.query_one("#facts", Static)
        await wait_for(pilot, lambda: "PERMISSION_DENIED" in text_of(facts), what="the refusal")
        assert dialog.query_one("#confirm").disabled
        await pilot.press("escape")
        await screen_is(pilot, MainScreen)
    store = SessionStore()
    assert store.list(include_ended=True) == []
    store.close()
