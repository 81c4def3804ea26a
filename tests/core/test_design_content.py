"""Issue 26 items 3, 5 and 7 through the core API and the CLI entry point.

3. ``parameters`` and ``examples`` are parsed, bad shapes get SD120/SD121, a stable ``id``
   is derived, and ``skilldeck load`` returns them;
5. "list skills", "what can you do?" and the like give the listing tier;
7. an agent is served only the resources discovery listed, until a refresh lists more.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.cli.main import main
from skilldeck.core.config import load_settings
from skilldeck.core.context import build_context
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.loader import read_and_record
from skilldeck.core.workspace import Workspace

CONTENT = """parameters:
  - name: title
    description: The title
    type: string
    required: true
  - name: count
    type: integer
    default: 3
  - name: 9lives
  - name: shape
    type: polygon
  - plain-string
  - name: title
examples:
  - request: make a title
    response: writes one line
  - just a request
  - request: 5
"""


def discovered(root: Path) -> Workspace:
    workspace = Workspace(load_settings(), [root])
    workspace.discover()
    return workspace


def test_parameters_and_examples_parsed_with_typed_diagnostics(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "content", extra=CONTENT, folder="group/content")
    skill = discovered(root).by_name("content")
    assert skill is not None
    assert [(p.name, p.type, p.required, p.default) for p in skill.parameters] == [
        ("title", "string", True, None),
        ("count", "integer", False, 3),
    ]
    assert [(e.request, e.does) for e in skill.examples] == [
        ("make a title", "writes one line"),
        ("just a request", ""),
    ]
    problems = [(d.code, d.message) for d in skill.diagnostics if d.code in ("SD120", "SD121")]
    assert [code for code, _ in problems] == ["SD120"] * 4 + ["SD121"]
    text = " ".join(message for _, message in problems)
    assert "entry 3 needs a 'name'" in text
    assert "type 'polygon'" in text
    assert "entry 6 repeats the name 'title'" in text
    assert skill.id == "explicit:skills/group/content"


def test_wrong_container_types_are_diagnostics_not_tracebacks(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "odd", extra="parameters: 12\nexamples: {a: b}\ninstructions: [x]\n")
    skill = discovered(root).by_name("odd")
    assert skill is not None
    codes = sorted(d.code for d in skill.diagnostics if d.code.startswith("SD12"))
    assert codes == ["SD120", "SD121", "SD122"]
    assert skill.parameters == () and skill.examples == () and skill.instructions is None


def test_cli_load_returns_id_parameters_and_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "content", extra=CONTENT)
    assert main(["--root", str(root), "--format", "json", "load", "content", "Hi"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "explicit:skills/content"
    assert [p["name"] for p in data["parameters"]] == ["title", "count"]
    assert data["examples"][0] == {"request": "make a title", "does": "writes one line"}
    assert data["instructions"]["origin"] == "body"


@pytest.mark.parametrize(
    "message",
    ["list skills", "what can you do?", "show skills", "list all skills", "skills list"],
)
def test_registry_questions_give_the_listing_tier(tmp_path: Path, message: str) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf-forms", "Fills PDF forms. Use when filling a PDF form.")
    write_skill(root, "csv-clean", "Cleans CSV files. Use when cleaning CSV data.")
    answer = build_context(discovered(root), message)
    assert answer.tier == "listing", answer.reason
    assert "pdf-forms" in answer.text and "csv-clean" in answer.text


def test_agents_get_only_discovered_resources_until_a_refresh(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "docs", "Has docs. Use when reading docs.")
    (root / "docs" / "old.md").write_text("old\n", encoding="utf-8")
    workspace = discovered(root)
    skill = workspace.by_name("docs")
    assert skill is not None
    (root / "docs" / "new.md").write_text("new\n", encoding="utf-8")
    telemetry = workspace.telemetry
    assert read_and_record(skill, "old.md", actor="agent", telemetry=telemetry).text == "old\n"
    with pytest.raises(SkilldeckError, match="last discovered") as caught:
        read_and_record(skill, "new.md", actor="agent", telemetry=telemetry)
    assert caught.value.code.value == "NOT_FOUND"
    # a person at the CLI reads any confined file
    assert read_and_record(skill, "new.md", actor="cli", telemetry=telemetry).text == "new\n"
    workspace.refresh()
    fresh = workspace.by_name("docs")
    assert fresh is not None and "new.md" in fresh.resources
    assert read_and_record(fresh, "new.md", actor="agent", telemetry=telemetry).text == "new\n"
