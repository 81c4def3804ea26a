"""The one rule catalogue: every family looked up by ``skilldeck rules``, profiles as
severity maps, and the catalogue agreeing with what validation and lint report."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

import skilldeck.core
from conftest import run_cli as run
from conftest import write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.lint import RULES
from skilldeck.core.model import Severity
from skilldeck.core.rules import CATALOGUE, CHECKS, FAMILIES, PROFILES, Profile, profile
from skilldeck.core.validate import validate_skill

ONE_OF_EACH = {
    "SD105": "discovery",
    "SV401": "validation",
    "SL302": "lint",
    "ST201": "tools",
    "SI103": "install",
}


@pytest.mark.parametrize("code", sorted(ONE_OF_EACH))
def test_rules_prints_the_summary_of_a_code_of_every_family(
    capsys: pytest.CaptureFixture[str], code: str
) -> None:
    rule = CATALOGUE[code]
    status, out, _ = run(capsys, "rules", code)
    assert status == 0 and out.startswith(f"{code}  {rule.name}  [")
    assert rule.summary in out
    status, out, _ = run(capsys, "rules", code, "--format", "json")
    (entry,) = json.loads(out)["rules"]
    assert status == 0 and entry["kind"] == ONE_OF_EACH[code]
    assert entry["summary"] == rule.summary


def test_rules_looks_up_a_family_prefix_and_the_reference_lists_every_family(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "rules", "ST2", "--format", "json")
    assert status == 0
    assert [e["code"] for e in json.loads(out)["rules"]] == ["ST201", "ST202", "ST203", "ST204"]
    status, out, _ = run(capsys, "rules", "--format", "json")
    data = json.loads(out)
    assert set(data) == {"rules", "validation", "discovery", "tools", "install"}
    listed = {e["code"] for family in data.values() for e in family}
    assert listed == set(CATALOGUE)
    status, text, _ = run(capsys, "rules")
    assert all(code in text for code in CATALOGUE)


def test_the_catalogue_is_complete_and_ordered() -> None:
    for code, rule in CATALOGUE.items():
        assert rule.code == code and re.fullmatch(r"S[DVLTI]\d{3}", code)
        assert rule.family == FAMILIES[code[:2]]
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule.name), code
        assert rule.summary.strip() and isinstance(rule.severity, Severity)
    for prefix in FAMILIES:
        codes = [c for c in CATALOGUE if c.startswith(prefix)]
        assert codes and codes == sorted(codes)
    assert {c: r for c, r in CATALOGUE.items() if c.startswith("SL")} == RULES


def test_every_profile_is_a_severity_map_over_the_catalogue() -> None:
    for name in PROFILES:
        rated = profile(name)
        assert isinstance(rated, Profile) and rated.name == name
        assert set(rated.severities) <= set(CATALOGUE)
    for code, check in CHECKS.items():
        assert check.severities == tuple(profile(p).severity(code) for p in PROFILES)
    assert profile("agentskills").severity("SD105") is Severity.ERROR
    assert profile("default").severity("SD105") is Severity.WARNING
    with pytest.raises(SkilldeckError, match="unknown validation profile"):
        profile("strict-ish")


def _unknown_field_skill(root: Path) -> Path:
    return write_skill(root, "pdf-split", extra="colour: blue\ncolour: red\n")


def test_a_profile_changes_severities_without_code_changes(tmp_path: Path) -> None:
    """Only the map changes: the same checks then rate (or drop) the same findings."""
    skill = parse_skill_file(_unknown_field_skill(tmp_path))
    rated = {d.code: d.severity for d in validate_skill(skill, "default")}
    assert rated["SV401"] is Severity.WARNING and rated["SD105"] is Severity.WARNING
    default = profile("default")
    louder = dataclasses.replace(
        default, severities={**default.severities, "SV401": Severity.ERROR, "SD105": Severity.ERROR}
    )
    found = validate_skill(skill, louder)
    rated = {d.code: d.severity for d in found}
    assert rated["SV401"] is Severity.ERROR and rated["SD105"] is Severity.ERROR
    assert "YAML forbids duplicate keys" in next(d.message for d in found if d.code == "SD105")
    quiet = dataclasses.replace(default, severities={**default.severities, "SV401": None})
    assert "SV401" not in {d.code for d in validate_skill(skill, quiet)}


def test_a_profile_turns_a_whole_check_on(tmp_path: Path) -> None:
    """The shipped-skill contract runs under any profile that rates its codes."""
    skill = parse_skill_file(write_skill(tmp_path, "pdf-split", body=""))
    assert "SV501" not in {d.code for d in validate_skill(skill, "agentskills")}
    spec = profile("agentskills")
    strict = dataclasses.replace(
        spec, severities={k: v for k, v in spec.severities.items() if k != "SV501"}
    )
    assert "SV501" in {d.code for d in validate_skill(skill, strict)}


def test_a_made_up_profile_name_is_refused(tmp_path: Path) -> None:
    skill = parse_skill_file(write_skill(tmp_path, "pdf-split"))
    made_up = dataclasses.replace(profile("default"), name="mine")
    with pytest.raises(SkilldeckError, match="unknown validation profile 'mine'"):
        validate_skill(skill, made_up)


OTHER_SEVERITY = {("ST102", "info"): "a server that is not stdio is skipped, not broken"}
"""A literal finding at another severity than its rule's default, and why."""


def _literal_findings(path: Path) -> list[tuple[str, str]]:
    """``(code, severity)`` of every ``Diagnostic("CODE", Severity.X, …)`` or
    ``Finding("CODE", "x", …)`` in ``path`` whose code and severity are both literal."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        code, severity = node.args[0], node.args[1]
        if name not in ("Diagnostic", "Finding") or not isinstance(code, ast.Constant):
            continue
        if isinstance(severity, ast.Attribute) and ast.unparse(severity.value) == "Severity":
            found.append((str(code.value), severity.attr.lower()))
        elif isinstance(severity, ast.Constant):
            found.append((str(code.value), str(severity.value)))
    return found


def test_literal_findings_use_their_rules_default_severity() -> None:
    """The catalogue's default severity is what the core reports: a finding written with
    another one must say why here."""
    core = Path(skilldeck.core.__file__).parent
    odd = {
        (code, severity): path.relative_to(core).as_posix()
        for path in sorted(core.rglob("*.py"))
        for code, severity in _literal_findings(path)
        if code in CATALOGUE and CATALOGUE[code].severity.value != severity
    }
    assert set(odd) - set(OTHER_SEVERITY) == set(), odd
    assert set(OTHER_SEVERITY) <= set(odd), "a finding now uses its default: drop it"


def test_severity_check_reads_both_forms(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        'Diagnostic("SD101", Severity.WARNING, "m")\nFinding("SI103", "warning", "m", "r")\n'
        'Diagnostic(code, Severity.ERROR, "m")\nDiagnostic("ST201", severity, "m")\n',
        encoding="utf-8",
    )
    assert _literal_findings(bad) == [("SD101", "warning"), ("SI103", "warning")]


def test_stored_validation_results_are_keyed_by_the_rules_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery keeps validation results per validator key: a severity changed in the
    catalogue or a profile (not in validate.py) must change the key, or stale results stay."""
    from skilldeck.core import validate
    from skilldeck.core.discovery import pipeline
    from skilldeck.core.rules import profiles

    assert {profiles.__file__, validate.__file__} <= set(validate.code_files())
    rules_file = tmp_path / "profiles.py"
    rules_file.write_text("# a profile\n", encoding="utf-8")
    monkeypatch.setattr(validate, "code_files", lambda: [validate.__file__, str(rules_file)])
    before = pipeline._validator("default")[1]
    os.utime(rules_file, ns=(1, 1))
    assert before and pipeline._validator("default")[1] != before
