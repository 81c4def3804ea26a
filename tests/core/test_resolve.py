"""One answer to "which skill does this name mean" (:meth:`Workspace.resolve`): a person may
name a skill by path, a model only by name and only a skill it may load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "skills"
    write_skill(root, "pdf-forms", description="Fill PDF forms. Use for PDF forms.")
    write_skill(root, "hidden-one", extra="disable-model-invocation: true\n")
    write_skill(root, "off-skill")
    write_skill(root, "broken", description="")
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"skills": {"off-skill": {"enabled": False}}}), "utf-8")
    settings = Settings(semantic=False, registry_path=registry)
    ws = Workspace(settings, [root], store=LocalStore.in_memory())
    ws.discover()
    return ws


def test_a_person_may_name_a_skill_by_path(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "pdf-forms"
    assert workspace.resolve("pdf-forms").name == "pdf-forms"
    assert workspace.resolve(str(folder)).name == "pdf-forms"
    assert workspace.resolve(str(folder / "SKILL.md")).name == "pdf-forms"
    with pytest.raises(SkilldeckError) as caught:
        workspace.resolve(str(folder), for_model=True)  # a model names skills, not paths
    assert caught.value.code is ErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("off-skill", "disabled"),
        ("hidden-one", "model_invocation_disabled"),
        ("broken", "invalid"),
    ],
)
def test_a_model_gets_only_what_it_may_load(workspace: Workspace, name: str, reason: str) -> None:
    assert workspace.resolve(name).name == name  # a person may look at it
    with pytest.raises(SkilldeckError) as caught:
        workspace.resolve(name, for_model=True)
    assert caught.value.code is ErrorCode.PERMISSION_DENIED
    assert caught.value.details["reason"] == reason


def test_unknown_names_suggest_only_what_the_caller_may_see(workspace: Workspace) -> None:
    with pytest.raises(SkilldeckError) as person:
        workspace.resolve("off-skil")
    assert person.value.details["suggestions"] == ["off-skill"]
    with pytest.raises(SkilldeckError) as model:
        workspace.resolve("off-skil", for_model=True)
    assert "off-skill" not in model.value.details["suggestions"]


@pytest.mark.parametrize("name", ["", "pdf\x1b[2J", "x" * 201, "a\u202eb"])
def test_names_no_skill_can_have_are_refused_first(workspace: Workspace, name: str) -> None:
    with pytest.raises(SkilldeckError) as caught:
        workspace.resolve(name)
    assert caught.value.code is ErrorCode.INVALID_PARAM
    assert "\x1b" not in caught.value.message
