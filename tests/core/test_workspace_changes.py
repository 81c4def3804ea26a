"""The workspace's one change check (registry and config files too) and the one rule of
which skills count, shared by ``skilldeck list`` and the TUI's status line."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_skill
from skilldeck.core.config import Settings, config_path
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace

BROKEN = "---\nname: broken\ndescription: [unclosed\n---\nBody.\n"


def _workspace(roots: list[Path], registry: Path | None = None) -> Workspace:
    settings = Settings(semantic=False, registry_path=registry)
    return Workspace(settings, roots, store=LocalStore.in_memory(), watch=True)


def test_registry_edit_is_a_change_and_disables_the_skill(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf-forms", description="Fill PDF forms. Use when a form is open.")
    registry = tmp_path / "registry.json"
    ws = _workspace([root], registry)
    ws.discover()
    assert not ws.refresh_if_changed()
    registry.write_text(json.dumps({"pdf-forms": {"enabled": False}}), encoding="utf-8")
    assert ws.refresh_if_changed()
    skill = ws.catalog.get("pdf-forms")
    assert skill is not None and not skill.enabled
    assert ws.listed() == [] and ws.listed_counts() == (0, {"disabled": 1})


def test_config_edit_is_a_change_that_asks_for_a_restart(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf-forms", description="Fill PDF forms. Use when a form is open.")
    ws = _workspace([root])
    ws.discover()
    assert not ws.refresh_if_changed() and not ws.settings_stale
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("confidence_threshold = 0.5\n", encoding="utf-8")
    assert ws.refresh_if_changed()
    assert ws.settings_stale  # settings are not reloaded live: each face says so


def test_what_counts_as_a_skill(tmp_path: Path) -> None:
    low, high = tmp_path / "low", tmp_path / "high"
    write_skill(low, "shared", description="The low copy. Use when testing shadowing.")
    write_skill(high, "shared", description="The high copy. Use when testing shadowing.")
    write_skill(high, "paused", description="Turned off. Use when testing the registry.")
    write_skill(high, "fine", description="A fine skill. Use when testing counts.")
    (high / "broken").mkdir(parents=True)
    (high / "broken" / "SKILL.md").write_text(BROKEN, encoding="utf-8")
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"paused": {"enabled": False}}), encoding="utf-8")
    ws = _workspace([low, high], registry)
    ws.discover()
    assert [s.name for s in ws.listed()] == ["fine", "shared"]
    assert ws.listed_counts() == (2, {"shadowed": 1, "disabled": 1, "invalid": 1})
