"""Discovery: roots, precedence, shadowing, symlinks, skipping rules, governance."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings, bundled_skills_dir
from skilldeck.core.discovery import Root, default_roots, discover
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Catalog, Source
from skilldeck.core.store import LocalStore


def load_catalog(
    paths: list[Path] | None, settings: Settings, *, cwd: Path | None = None
) -> Catalog:
    """Explicit roots (later wins) or, when None, the default roots of ``cwd``."""
    roots = [Root(p, Source.EXPLICIT) for p in paths] if paths else default_roots(settings, cwd)
    return discover(roots, settings)


def names(catalog: object) -> list[str]:
    return [s.rel_id for s in catalog.skills]  # type: ignore[attr-defined]


def test_recursive_scan_skips_dot_and_underscore(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    write_skill(tmp_path / "group" / "deeper", "b")
    write_skill(tmp_path / "_drafts", "c")
    write_skill(tmp_path / ".hidden", "d")
    write_skill(tmp_path, "e", folder="_e")
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert names(catalog) == ["a", "group/deeper/b"]
    assert all(s.source is Source.EXPLICIT and s.root == tmp_path for s in catalog.skills)


def test_skill_folder_subfolders_are_resources_not_skills(tmp_path: Path) -> None:
    outer = write_skill(tmp_path, "outer")
    write_skill(outer.parent / "examples", "inner")
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert [s.name for s in catalog.skills] == ["outer"]
    assert "examples/inner/SKILL.md" in catalog.skills[0].resources


def test_root_that_is_itself_a_skill(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "solo")
    catalog = discover([Root(path.parent, Source.EXPLICIT)], Settings())
    assert [(s.name, s.rel_id) for s in catalog.skills] == [("solo", ".")]


def test_root_that_is_a_skill_file(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "solo")
    catalog = load_catalog([path], Settings())
    assert [(s.name, s.path) for s in catalog.skills] == [("solo", path)]


def test_lowercase_skill_md_found_with_warning(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "low")
    path.rename(path.with_name("skill.md"))
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    (skill,) = catalog.skills
    assert skill.path.name == "skill.md"
    assert "SD109" in [d.code for d in skill.diagnostics]


def test_broken_skill_does_not_stop_others(tmp_path: Path) -> None:
    write_skill(tmp_path, "good")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_bytes(b"---\nname: [oops\n---\n")
    (tmp_path / "dir-as-file").mkdir()
    (tmp_path / "dir-as-file" / "SKILL.md").mkdir()
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    by = {s.rel_id: s for s in catalog.skills}
    assert by["good"].valid
    assert not by["bad"].valid
    assert "SD103" in [d.code for d in by["bad"].diagnostics]


def test_missing_explicit_root_is_a_catalog_diagnostic(tmp_path: Path) -> None:
    catalog = discover([Root(tmp_path / "nope", Source.EXPLICIT)], Settings())
    assert catalog.skills == []
    assert [d.code for d in catalog.diagnostics] == ["SD201"]


def test_shadowing_across_sources(tmp_path: Path) -> None:
    user = tmp_path / "user"
    project = tmp_path / "project"
    bundled = tmp_path / "bundled"
    write_skill(bundled, "same", description="Bundled one.")
    write_skill(user, "same", description="User one.")
    write_skill(project, "same", description="Project one.")
    write_skill(user, "only-user")
    roots = [Root(project, Source.PROJECT), Root(user, Source.USER), Root(bundled, Source.BUNDLED)]
    catalog = discover(roots, Settings())
    assert [s.source for s in catalog.skills] == [
        Source.BUNDLED,
        Source.USER,
        Source.USER,
        Source.PROJECT,
    ]
    winner = catalog.get("same")
    assert winner is not None and winner.description == "Project one."
    losers = [s for s in catalog.skills if s.shadowed]
    assert {s.source for s in losers} == {Source.USER, Source.BUNDLED}
    for loser in losers:
        assert loser.shadowed_by == winner.path
        assert f"shadowed by {winner.path}" in loser.shadow_reason
        assert f"project overrides {loser.source.value}" in loser.shadow_reason
    assert catalog.names() == ["only-user", "same"]


def test_explicit_roots_later_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first, "dup", description="First.")
    write_skill(second, "dup", description="Second.")
    catalog = load_catalog([first, second], Settings())
    assert catalog.get("dup").description == "Second."  # type: ignore[union-attr]
    (loser,) = [s for s in catalog.skills if s.shadowed]
    assert "later explicit root" in loser.shadow_reason
    catalog = load_catalog([second, first], Settings())
    assert catalog.get("dup").description == "First."  # type: ignore[union-attr]


def test_same_root_first_in_path_order_wins(tmp_path: Path) -> None:
    write_skill(tmp_path, "dup", folder="b-dir", description="B.")
    write_skill(tmp_path, "dup", folder="a-dir", description="A.")
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert names(catalog) == ["a-dir", "b-dir"]
    assert catalog.get("dup").description == "A."  # type: ignore[union-attr]
    assert "first in path order" in catalog.skills[1].shadow_reason


def test_symlinked_skill_folder_followed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    target = write_skill(store, "linked").parent
    root = tmp_path / "root"
    root.mkdir()
    (root / "alias").symlink_to(target, target_is_directory=True)
    catalog = discover([Root(root, Source.EXPLICIT)], Settings())
    (skill,) = catalog.skills
    assert skill.path == root / "alias" / "SKILL.md"
    assert skill.name == "linked"


def test_same_real_skill_kept_once_at_highest_precedence(tmp_path: Path) -> None:
    store = tmp_path / "store"
    target = write_skill(store, "shared").parent
    user = tmp_path / "user"
    user.mkdir()
    (user / "shared").symlink_to(target)
    (user / "again").symlink_to(target)
    roots = [Root(store, Source.USER), Root(user, Source.PROJECT)]
    catalog = discover(roots, Settings())
    (skill,) = catalog.skills
    assert skill.source is Source.PROJECT
    assert not skill.shadowed
    assert skill.path == user / "again" / "SKILL.md"


def test_real_folder_preferred_over_alias_in_one_root(tmp_path: Path) -> None:
    real = write_skill(tmp_path, "zzz").parent
    (tmp_path / "aaa").symlink_to(real)
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert names(catalog) == ["zzz"]


def test_symlink_loop_reported_not_hung(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "inside")
    (tmp_path / "a" / "back").symlink_to(tmp_path)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "c").symlink_to(tmp_path / "d")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "e").symlink_to(tmp_path / "b")
    (tmp_path / "self").symlink_to(tmp_path / "self")
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert names(catalog) == ["a/inside"]
    assert "SD203" in [d.code for d in catalog.diagnostics]


def test_unreadable_subfolder_reported(tmp_path: Path) -> None:
    write_skill(tmp_path, "ok")
    locked = tmp_path / "locked"
    write_skill(locked, "hidden")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as a user who can read mode-000 folders (root)")
        catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
        assert names(catalog) == ["ok"]
        assert [d.code for d in catalog.diagnostics] == ["SD202"]
    finally:
        locked.chmod(0o755)


def test_default_roots_precedence_and_project_walk(tmp_path: Path) -> None:
    home = Path.home()
    (home / ".claude" / "skills").mkdir(parents=True)
    (home / ".agents" / "skills").mkdir(parents=True)
    extra = tmp_path / "extra"
    extra.mkdir()
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "skills").mkdir()
    (repo / "agents" / "bot" / "skills").mkdir(parents=True)
    sub = repo / "pkg" / "sub"
    (sub / ".claude" / "skills").mkdir(parents=True)
    (tmp_path / ".agents" / "skills").mkdir(parents=True)  # above the repo: ignored
    roots = default_roots(Settings(extra_skill_dirs=[extra]), cwd=sub)
    assert roots[0] == Root(bundled_skills_dir(), Source.BUNDLED)
    assert roots[1:] == [
        Root(home / ".agents" / "skills", Source.USER),
        Root(home / ".claude" / "skills", Source.USER),
        Root(extra, Source.USER),
        Root(repo / "skills", Source.PROJECT),
        Root(repo / "agents" / "bot" / "skills", Source.PROJECT),
        Root(sub / ".claude" / "skills", Source.PROJECT),
    ]


def test_default_roots_find_agent_and_deep_agents_skills(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for rel in (".agents/skills", ".agent/skills", "agents/team/bot/skills", "agents/x/skills"):
        (repo / rel).mkdir(parents=True)
    (repo / "agents" / "x" / "skills" / "inner" / "skills").mkdir(parents=True)  # not a root
    (repo / "agents" / "_drafts" / "skills").mkdir(parents=True)
    roots = [r.path for r in default_roots(Settings(), cwd=repo) if r.source is Source.PROJECT]
    assert roots == [
        repo / ".agents" / "skills",
        repo / ".agent" / "skills",
        repo / "agents" / "team" / "bot" / "skills",
        repo / "agents" / "x" / "skills",
    ]


def test_default_roots_without_git_use_cwd_only(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    cwd = tmp_path / "work"
    (cwd / ".agents" / "skills").mkdir(parents=True)
    roots = [r for r in default_roots(Settings(), cwd=cwd) if r.source is Source.PROJECT]
    assert roots == [Root(cwd / ".agents" / "skills", Source.PROJECT)]


def test_nearer_project_folder_wins(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_skill(repo / "skills", "dup", description="Far.")
    sub = repo / "sub"
    write_skill(sub / ".agents" / "skills", "dup", description="Near.")
    catalog = load_catalog(None, Settings(), cwd=sub)
    assert catalog.get("dup").description == "Near."  # type: ignore[union-attr]
    loser = next(s for s in catalog.skills if s.name == "dup" and s.shadowed)
    assert "nearer project folder" in loser.shadow_reason


def test_bundled_skills_are_discovered_by_default(tmp_path: Path) -> None:
    catalog = load_catalog(None, Settings(), cwd=tmp_path)
    bundled = [s for s in catalog.skills if s.source is Source.BUNDLED]
    assert len(bundled) == len(list(bundled_skills_dir().glob("*/SKILL.md")))


def test_registry_disables_and_tags(tmp_path: Path) -> None:
    write_skill(tmp_path, "alpha", extra="tags: [one]\n")
    write_skill(tmp_path, "beta")
    registry = tmp_path.parent / f"{tmp_path.name}-registry.json"
    registry.write_text(
        json.dumps({"skills": {"alpha": {"owner": "team-a", "tags": ["gov"], "enabled": False}}})
    )
    catalog = discover([Root(tmp_path, Source.EXPLICIT)], Settings(registry_path=registry))
    alpha = catalog.get("alpha")
    assert alpha is not None
    assert (alpha.enabled, alpha.owner, alpha.tags) == (False, "team-a", ("one", "gov"))
    assert not alpha.visible_to_models
    assert catalog.get("beta").enabled  # type: ignore[union-attr]


def test_root_registry_applies_to_its_root_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_skill(a, "one")
    write_skill(b, "two")
    write_skill(b, "one", folder="one-again")
    (a / "registry.json").write_text(json.dumps({"one": {"enabled": False}}))
    catalog = discover([Root(a, Source.USER), Root(b, Source.PROJECT)], Settings())
    by = {(s.root, s.name): s for s in catalog.skills}
    assert by[(a, "one")].enabled is False
    assert by[(b, "one")].enabled is True


def test_progress_and_profile(tmp_path: Path) -> None:
    for i in range(3):
        write_skill(tmp_path, f"s{i}")
    seen: list[int] = []
    discover([Root(tmp_path, Source.EXPLICIT)], Settings(), progress=seen.append)
    assert seen[-1] == 3
    with pytest.raises(SkilldeckError):
        discover([Root(tmp_path, Source.EXPLICIT)], Settings(), profile="nope")


def test_validation_profile_diagnostics_applied(tmp_path: Path) -> None:
    write_skill(tmp_path, "Bad_Name", folder="bad-name")
    default = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    strict = discover([Root(tmp_path, Source.EXPLICIT)], Settings(), profile="agentskills")
    assert any(d.code.startswith("SV") for d in strict.skills[0].diagnostics)
    assert not strict.skills[0].valid
    assert len(default.skills[0].diagnostics) <= len(strict.skills[0].diagnostics)


def test_rediscovery_with_a_store_sees_changes(tmp_path: Path) -> None:
    store = LocalStore.open()
    roots = [Root(tmp_path, Source.EXPLICIT)]
    path = write_skill(tmp_path, "one", description="Old.")
    discover(roots, Settings(), store=store)
    path.write_text("---\nname: one\ndescription: New text here.\n---\n")
    os.utime(path, ns=(1, 1))
    write_skill(tmp_path, "two")
    catalog = discover(roots, Settings(), store=store)
    assert catalog.get("one").description == "New text here."  # type: ignore[union-attr]
    assert catalog.names() == ["one", "two"]
    (tmp_path / "two" / "SKILL.md").unlink()
    catalog = discover(roots, Settings(), store=store)
    assert catalog.names() == ["one"]


def test_order_is_deterministic(tmp_path: Path) -> None:
    for name in ("zeta", "alpha", "Mid", "beta/inner"):
        write_skill(tmp_path, name.split("/")[-1], folder=name)
    one = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    two = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    assert names(one) == names(two) == sorted(names(one))


def test_store_gives_what_parsing_gives(tmp_path: Path) -> None:
    for i in range(12):
        write_skill(tmp_path, f"s{i:02d}", extra="allowed-tools: Read Bash(git log:*)\n")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_bytes(b"---\nname: [x\n---\n")
    for path in tmp_path.rglob("*"):
        os.utime(path, ns=(10**18, 10**18))  # not racy: rows are trusted next time
    roots = [Root(tmp_path, Source.EXPLICIT)]
    plain = discover(roots, Settings())
    store = LocalStore.open()
    cold = discover(roots, Settings(), store=store)
    warm = discover(roots, Settings(), store=store)
    expected = [s.to_dict() for s in plain.skills]
    assert [s.to_dict() for s in cold.skills] == expected
    assert [s.to_dict() for s in warm.skills] == expected
    assert warm.skills == plain.skills


def test_identical_bundled_copy_is_listed_once(tmp_path: Path) -> None:
    """Skilldeck installed and run from its own checkout: the same skill, not a shadow."""
    bundled, project = tmp_path / "bundled", tmp_path / "project"
    for root in (bundled, project):
        write_skill(root, "twin", description="Same everywhere. Use when testing.")
        (root / "twin" / "notes.md").write_text("same\n")
    write_skill(bundled, "edited", description="Bundled wording. Use when testing.")
    write_skill(project, "edited", description="Local wording. Use when testing.")
    roots = [Root(bundled, Source.BUNDLED), Root(project, Source.PROJECT)]
    catalog = discover(roots, Settings())
    twins = [s for s in catalog.skills if s.name == "twin"]
    assert [(s.source, s.shadowed) for s in twins] == [(Source.PROJECT, False)]
    edited = sorted((s.source.value, s.shadowed) for s in catalog.skills if s.name == "edited")
    assert edited == [("bundled", True), ("project", False)]
    # a different resource set is a different skill even with the same SKILL.md
    (project / "twin" / "extra.md").write_text("new\n")
    catalog = discover(roots, Settings())
    assert len([s for s in catalog.skills if s.name == "twin"]) == 2
