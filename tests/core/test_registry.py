"""Governance registry: both file shapes, bad files, set_enabled keeps everything else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Source
from skilldeck.core.registry import Registry, RegistryEntry, set_enabled


def test_missing_file_is_empty(tmp_path: Path) -> None:
    registry = Registry.load(tmp_path / "registry.json")
    assert registry.entries == {} and registry.diagnostics == []


@pytest.mark.parametrize(
    "data",
    [
        {"skills": {"pdf": {"owner": "docs", "tags": ["x"], "enabled": False}}},
        {"pdf": {"owner": "docs", "tags": ["x"], "enabled": False}},
        {"skills": [{"name": "pdf", "owner": "docs", "tags": ["x"], "enabled": False}]},
    ],
    ids=["skills-map", "top-level", "skills-list"],
)
def test_shapes(tmp_path: Path, data: object) -> None:
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(data))
    registry = Registry.load(path)
    assert registry.diagnostics == []
    assert registry.get("pdf") == RegistryEntry(owner="docs", tags=("x",), enabled=False)


def test_bad_json_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text('{"skills": {"a": }')
    registry = Registry.load(path)
    assert registry.entries == {}
    (diag,) = registry.diagnostics
    assert diag.code == "SD210" and diag.line == 1


def test_bad_entries_are_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text(
        json.dumps(
            {
                "skills": {
                    "a": "nope",
                    "b": {"enabled": "no"},
                    "c": {"owner": 3, "tags": "t"},
                    "d": False,
                }
            }
        )
    )
    registry = Registry.load(path)
    assert sorted(registry.entries) == ["b", "c", "d"]
    assert registry.entries["b"].enabled is None  # ignored: the skill's default holds
    assert registry.entries["c"].tags == ("t",)
    assert registry.entries["d"].enabled is False
    assert [d.code for d in registry.diagnostics] == ["SD211", "SD211", "SD211"]


def test_tool_validation_override(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text(
        json.dumps({"pdf": {"tool-validation": "strict"}, "x": {"tool_validation": "loud"}})
    )
    registry = Registry.load(path)
    assert registry.entries["pdf"].tool_validation == "strict"
    assert registry.entries["x"].tool_validation is None
    assert [d.code for d in registry.diagnostics] == ["SD211"]
    skill = parse_skill_file(write_skill(tmp_path, "pdf"))
    assert skill.tool_validation is None
    registry.apply([skill])
    assert skill.tool_validation == "strict"


def test_top_level_not_object(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text("[1, 2]")
    assert [d.code for d in Registry.load(path).diagnostics] == ["SD210"]


def test_apply(tmp_path: Path) -> None:
    skill = parse_skill_file(write_skill(tmp_path, "pdf", extra="tags: [a]\n"))
    other = parse_skill_file(write_skill(tmp_path, "other"))
    registry = Registry(entries={"pdf": RegistryEntry(owner="o", tags=("a", "b"), enabled=False)})
    registry.apply([skill, other])
    assert (skill.enabled, skill.owner, skill.tags) == (False, "o", ("a", "b"))
    assert (other.enabled, other.owner) == (True, None)


def test_set_enabled_creates_and_keeps_others(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "registry.json"
    set_enabled(path, "pdf", False)
    assert json.loads(path.read_text()) == {"skills": {"pdf": {"enabled": False}}}
    data = {
        "version": 1,
        "skills": {"pdf": {"owner": "docs", "enabled": False}, "x": {"tags": ["t"]}},
    }
    path.write_text(json.dumps(data))
    set_enabled(path, "pdf", True)
    set_enabled(path, "new", False)
    after = json.loads(path.read_text())
    assert after == {
        "version": 1,
        "skills": {
            "pdf": {"owner": "docs"},
            "x": {"tags": ["t"]},
            "new": {"enabled": False},
        },
    }
    assert [p.name for p in path.parent.iterdir()] == ["registry.json"]


def test_set_enabled_top_level_and_list_shapes(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"pdf": {"owner": "docs"}}))
    set_enabled(path, "pdf", False)
    assert json.loads(path.read_text()) == {"pdf": {"owner": "docs", "enabled": False}}
    path.write_text(json.dumps({"skills": [{"name": "pdf"}]}))
    set_enabled(path, "pdf", False)
    set_enabled(path, "b", True)
    assert json.loads(path.read_text()) == {"skills": [{"name": "pdf", "enabled": False}]}
    set_enabled(path, "pdf", True)
    assert json.loads(path.read_text()) == {"skills": []}


def test_set_enabled_refuses_to_clobber_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "registry.json"
    path.write_text("{not json")
    with pytest.raises(SkilldeckError) as info:
        set_enabled(path, "pdf", False)
    assert info.value.code is ErrorCode.INVALID_PARAM
    assert path.read_text() == "{not json"


def test_set_enabled_never_touches_skill_md(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    path = write_skill(skills, "pdf")
    before = path.read_bytes(), path.stat().st_mtime_ns
    registry = tmp_path / "registry.json"
    set_enabled(registry, "pdf", False)
    catalog = discover([Root(skills, Source.EXPLICIT)], Settings(registry_path=registry))
    skill = catalog.get("pdf")
    assert skill is not None and not skill.enabled and not skill.visible_to_models
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    set_enabled(registry, "pdf", True)
    again = discover([Root(skills, Source.EXPLICIT)], Settings(registry_path=registry)).get("pdf")
    assert again is not None and again.enabled


def test_bad_global_registry_is_a_catalog_diagnostic(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf")
    registry = tmp_path / "registry.json"
    registry.write_text("oops")
    catalog = discover([Root(skills, Source.EXPLICIT)], Settings(registry_path=registry))
    assert catalog.names() == ["pdf"]
    assert [d.code for d in catalog.diagnostics] == ["SD210"]


def test_default_enabled_false_waits_for_the_registry(tmp_path: Path) -> None:
    """``default_enabled: false`` keeps a skill off until a registry turns it on; turning
    it off again drops the entry (the registry records only exceptions)."""
    root = tmp_path / "skills"
    write_skill(root, "opt-in", extra="default_enabled: false\n")
    write_skill(root, "plain")
    registry = tmp_path / "registry.json"
    settings = Settings(registry_path=registry)
    catalog = discover([Root(root, Source.EXPLICIT)], settings)
    assert {s.name: s.enabled for s in catalog.skills} == {"opt-in": False, "plain": True}
    set_enabled(registry, "opt-in", True, default=False)
    assert json.loads(registry.read_text())["skills"] == {"opt-in": {"enabled": True}}
    catalog = discover([Root(root, Source.EXPLICIT)], settings)
    assert {s.name: s.enabled for s in catalog.skills} == {"opt-in": True, "plain": True}
    set_enabled(registry, "opt-in", False, default=False)
    assert json.loads(registry.read_text())["skills"] == {}
