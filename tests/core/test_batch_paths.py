"""Batched loading and the validation and extraction fast paths change no result."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_corpus import all_skill_files

import skilldeck.core.discovery as discovery
import skilldeck.core.parse as parse
import skilldeck.core.validate as validate
from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.model import Source
from skilldeck.core.parse import parse_skill_file
from skilldeck.core.validate import PROFILES, validate_skill


def dump(root: Path, profile: str = "default") -> list[dict[str, Any]]:
    catalog = discover([Root(root, Source.EXPLICIT)], Settings(), profile=profile, use_cache=False)
    return [s.to_dict() for s in catalog.skills] + [d.to_dict() for d in catalog.diagnostics]


def test_validation_fast_paths_match_the_full_checks(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = [parse_skill_file(p) for p in all_skill_files(corpus_dir)]
    fast = {p: [[d.to_dict() for d in validate_skill(s, p)] for s in skills] for p in PROFILES}
    monkeypatch.setattr(validate, "_VALID_NAME", re.compile(r"(?!)"))
    full = {p: [[d.to_dict() for d in validate_skill(s, p)] for s in skills] for p in PROFILES}
    assert fast == full
    assert any(fast["agentskills"]) and any(fast["claude-code"])


@pytest.mark.parametrize("profile", ["default", "agentskills"])
def test_batched_loading_matches_one_by_one(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    monkeypatch.setenv("SKILLDECK_NO_PARALLEL", "1")
    batched = dump(corpus_dir, profile)
    monkeypatch.setattr(discovery, "_BATCH", 1)
    assert dump(corpus_dir, profile) == batched


def test_unreadable_files_in_a_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLDECK_NO_PARALLEL", "1")
    for i in range(6):
        write_skill(tmp_path, f"s{i}", extra="allowed-tools: Read Bash(git log:*)\n")
    (tmp_path / "gone").mkdir()
    os.symlink(tmp_path / "nowhere.md", tmp_path / "gone" / "SKILL.md")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "SKILL.md").mkdir()
    batched = dump(tmp_path)
    monkeypatch.setattr(discovery, "_BATCH", 2)
    assert dump(tmp_path) == batched
    gone = [s for s in batched if isinstance(s, dict) and s.get("base_dir", "").endswith("gone")]
    assert gone and any(d["code"] == "SD110" for d in gone[0]["diagnostics"])


def test_extraction_shares_only_immutable_values(tmp_path: Path) -> None:
    a = parse_skill_file(write_skill(tmp_path, "a", extra="allowed-tools: Read Grep\n"))
    b = parse_skill_file(write_skill(tmp_path, "b", extra="allowed-tools: Read Grep\n"))
    assert a.tools == b.tools and isinstance(a.tools, tuple)
    assert a.frontmatter is not b.frontmatter
    a.frontmatter["tags"] = ["x"]
    assert "tags" not in b.frontmatter


def test_memoised_flow_lists_are_fresh_lists(tmp_path: Path) -> None:
    a = parse_skill_file(write_skill(tmp_path, "a", extra="tags: [x, y]\n"))
    b = parse_skill_file(write_skill(tmp_path, "b", extra="tags: [x, y]\n"))
    assert a.frontmatter["tags"] == ["x", "y"] == b.frontmatter["tags"]
    assert a.frontmatter["tags"] is not b.frontmatter["tags"]
    a.frontmatter["tags"].append("z")
    assert parse._fast_yaml("tags: [x, y]")[0]["tags"] == ["x", "y"]  # type: ignore[index]
