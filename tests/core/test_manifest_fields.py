"""Manifest fields ``toolsets``, ``scripts``, ``default_enabled``, ``brief_description``:
known to the default profile, typed, declared scripts checked."""

from __future__ import annotations

from pathlib import Path

from conftest import write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file as parse_skill
from skilldeck.core.validate import validate_skill

EXTRA = (
    "version: 1.2.0\n"
    "toolsets: [files, {name: web}]\n"
    "scripts: [scripts/ok.py, {path: scripts/gone.py}, ../outside.py]\n"
    "default_enabled: false\n"
    "brief_description: Short and sweet.\n"
)


def test_fields_extracted_and_checked(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "demo", description="Long text. More.", extra=EXTRA)
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "ok.py").write_text("print(1)\n", "utf-8")
    skill = parse_skill(path)
    assert skill.toolsets == ("files", "web")
    assert skill.scripts == ("scripts/ok.py", "scripts/gone.py", "../outside.py")
    assert skill.default_enabled is False and skill.brief == "Short and sweet."
    diags = validate_skill(skill)
    assert not [d for d in diags if d.code == "SV401"]
    missing = [d.message for d in diags if d.code == "SV404"]
    assert len(missing) == 2 and any("gone.py" in m for m in missing)
    assert any("outside.py" in m for m in missing)
    assert skill.to_dict()["scripts"] == list(skill.scripts)


def test_field_types_validated(tmp_path: Path) -> None:
    extra = "toolsets: 3\nscripts: nope\ndefault_enabled: maybe\nbrief_description: [x]\n"
    skill = parse_skill(write_skill(tmp_path, "demo", extra=extra))
    keys = {d.message.split("'")[1] for d in validate_skill(skill) if d.code == "SV402"}
    assert keys == {"toolsets", "scripts", "default_enabled", "brief_description"}
    assert skill.brief == "Does a thing."
