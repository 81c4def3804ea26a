"""Validation profiles: every SV check, positive and negative, on real SKILL.md files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.validate import CHECKS, PROFILES, name_problems, validate_skill

GOOD_DESC = "Formats Python files with ruff. Use when the user asks to tidy Python code."


def make(tmp_path: Path, name: str = "demo", extra: str = "", **kw: str) -> Skill:
    """Write a SKILL.md under tmp_path and parse it."""
    return parse_skill_file(write_skill(tmp_path, name, extra=extra, **kw))


def codes(diags: list[Diagnostic]) -> dict[str, Severity]:
    return {d.code: d.severity for d in diags}


def sv(skill: Skill, profile: str = "default") -> dict[str, Severity]:
    return {d.code: d.severity for d in validate_skill(skill, profile) if d.code.startswith("SV")}


def test_the_readme_offers_exactly_the_profiles() -> None:
    """``--profile`` in the README's usage line lists the profiles validation knows (each
    validates a skill: ``test_valid_skill_is_clean_in_every_profile``)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    offered = re.search(r"\[--profile ([a-z|-]+)\]", readme)
    assert offered is not None and tuple(offered.group(1).split("|")) == PROFILES


def test_unknown_profile_raises_skilldeck_error(tmp_path: Path) -> None:
    skill = make(tmp_path, description=GOOD_DESC)
    with pytest.raises(SkilldeckError) as info:
        validate_skill(skill, "nope")
    assert info.value.code.value == "INVALID_PARAM"


@pytest.mark.parametrize("profile", PROFILES)
def test_valid_skill_is_clean_in_every_profile(tmp_path: Path, profile: str) -> None:
    skill = make(
        tmp_path,
        "pdf-tools",
        description=GOOD_DESC,
        extra=(
            "license: MIT\ncompatibility: Needs Python 3.11\n"
            "metadata:\n  author: ana\n  version: '1.0.0'\n  tags: pdf, forms\n"
            "allowed-tools: Read Grep\n"
        ),
    )
    assert validate_skill(skill, profile) == []


def test_parse_diagnostics_kept_and_non_sd_dropped(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "crlf", description=GOOD_DESC)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    skill = parse_skill_file(path)
    skill.diagnostics.append(Diagnostic("SL001", Severity.WARNING, "lint, not kept"))
    before = list(skill.diagnostics)
    out = validate_skill(skill, "agentskills")
    assert "SD116" in codes(out)
    assert "SL001" not in codes(out)
    assert skill.diagnostics == before  # not mutated


def test_unparseable_frontmatter_only_reports_parse_errors(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    out = validate_skill(parse_skill_file(folder / "SKILL.md"), "agentskills")
    assert out and all(d.code.startswith("SD") for d in out)


# -- name -------------------------------------------------------------------------------------


def test_name_missing(tmp_path: Path) -> None:
    folder = tmp_path / "noname"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\ndescription: {GOOD_DESC}\n---\nx\n", "utf-8")
    skill = parse_skill_file(folder / "SKILL.md")
    assert sv(skill)["SV101"] is Severity.ERROR
    assert sv(skill, "agentskills")["SV101"] is Severity.ERROR
    assert sv(skill, "claude-code")["SV101"] is Severity.WARNING


def test_name_not_string(tmp_path: Path) -> None:
    skill = make(tmp_path, "123", folder="123", description=GOOD_DESC)
    # `name: 123` is an int in YAML
    assert sv(skill, "agentskills")["SV102"] is Severity.ERROR
    assert "SV102" not in sv(skill)  # coerced by the parser, which already says so (SD112)
    assert any(d.code == "SD112" for d in validate_skill(skill))


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("a" * 65, "SV103"),
        ("PDF-Tools", "SV104"),
        ("pdf_tools", "SV104"),
        ("-pdf", "SV105"),
        ("pdf-", "SV105"),
        ("pdf--tools", "SV105"),
    ],
)
def test_name_format_rules(tmp_path: Path, name: str, code: str) -> None:
    skill = make(tmp_path, name, description=GOOD_DESC)
    assert sv(skill, "agentskills")[code] is Severity.ERROR
    assert sv(skill, "claude-code")[code] is Severity.ERROR
    assert sv(skill)[code] is Severity.WARNING
    assert not any(d.severity is Severity.ERROR for d in validate_skill(skill))


@pytest.mark.parametrize("name", ["a", "a" * 64, "pdf-tools-2", "x1"])
def test_name_format_accepts_valid(tmp_path: Path, name: str) -> None:
    assert name_problems(name) == []
    assert sv(make(tmp_path, name, description=GOOD_DESC), "agentskills") == {}


def test_name_empty() -> None:
    assert name_problems("")[0][0] == "SV103"


def test_name_folder_mismatch(tmp_path: Path) -> None:
    skill = make(tmp_path, "pdf", folder="pdf-tools", description=GOOD_DESC)
    assert sv(skill, "agentskills")["SV106"] is Severity.ERROR
    assert sv(skill, "claude-code")["SV106"] is Severity.WARNING
    assert "SV106" not in sv(skill)  # lint SL008 covers it for the default profile
    match = make(tmp_path, "pdf-tools", description=GOOD_DESC)
    assert "SV106" not in sv(match, "agentskills")


# -- description ------------------------------------------------------------------------------


def test_description_missing(tmp_path: Path) -> None:
    folder = tmp_path / "nodesc"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: nodesc\n---\nbody\n", "utf-8")
    skill = parse_skill_file(folder / "SKILL.md")
    assert sv(skill)["SV201"] is Severity.ERROR
    assert sv(skill, "agentskills")["SV201"] is Severity.ERROR
    assert sv(skill, "claude-code")["SV201"] is Severity.WARNING


def test_description_empty_and_not_string(tmp_path: Path) -> None:
    empty = make(tmp_path / "a", "empty", description='""')
    assert sv(empty, "agentskills")["SV203"] is Severity.ERROR
    assert sv(empty)["SV203"] is Severity.ERROR
    listy = make(tmp_path / "b", "listy", description="[a, b]")
    assert sv(listy, "agentskills")["SV202"] is Severity.ERROR


def test_description_length_limit(tmp_path: Path) -> None:
    ok = make(tmp_path / "a", "ok", description="d" * 1024)
    assert "SV204" not in sv(ok, "agentskills")
    long = make(tmp_path / "b", "long", description="d" * 1025)
    found = [d for d in validate_skill(long, "agentskills") if d.code == "SV204"]
    assert found and found[0].severity is Severity.ERROR and "1025" in found[0].message
    assert sv(long)["SV204"] is Severity.WARNING


def test_description_with_triple_dash_is_measured_whole(tmp_path: Path) -> None:
    """skills-ref cuts the description at the first '---'; we must not."""
    head = "Converts tables. Use when --- no, really --- the user has tables. "
    text = head + "x" * (1030 - len(head))
    skill = make(tmp_path, "dash", description=f'"{text}"')
    assert skill.description == text
    msgs = [d.message for d in validate_skill(skill, "agentskills") if d.code == "SV204"]
    assert msgs and "1030" in msgs[0]
    block = make(
        tmp_path / "b",
        "block",
        description="|\n  Splits PDFs.\n  ---\n  Use when the user has a PDF to split.",
    )
    assert "Use when the user" in block.description
    assert validate_skill(block, "agentskills") == []


# -- other spec fields ------------------------------------------------------------------------


def test_compatibility(tmp_path: Path) -> None:
    ok = make(tmp_path / "a", "ok", description=GOOD_DESC, extra=f"compatibility: {'c' * 500}\n")
    assert sv(ok, "agentskills") == {}
    long = make(tmp_path / "b", "lg", description=GOOD_DESC, extra=f"compatibility: {'c' * 501}\n")
    assert sv(long, "agentskills")["SV301"] is Severity.ERROR
    empty = make(tmp_path / "c", "em", description=GOOD_DESC, extra='compatibility: ""\n')
    assert sv(empty, "agentskills")["SV301"] is Severity.ERROR
    listy = make(tmp_path / "d", "li", description=GOOD_DESC, extra="compatibility: [a]\n")
    assert sv(listy, "agentskills")["SV301"] is Severity.ERROR


def test_metadata(tmp_path: Path) -> None:
    num = make(tmp_path / "a", "num", description=GOOD_DESC, extra="metadata:\n  version: 1.0\n")
    assert sv(num, "agentskills")["SV302"] is Severity.ERROR
    assert sv(num, "claude-code")["SV302"] is Severity.WARNING
    flat = make(tmp_path / "b", "flat", description=GOOD_DESC, extra="metadata: text\n")
    assert sv(flat, "agentskills")["SV302"] is Severity.ERROR
    good = make(tmp_path / "c", "good", description=GOOD_DESC, extra="metadata:\n  a: b\n")
    assert sv(good, "agentskills") == {}


def test_allowed_tools_forms(tmp_path: Path) -> None:
    listed = make(tmp_path / "a", "listed", description=GOOD_DESC, extra="allowed-tools: [Read]\n")
    assert sv(listed, "agentskills")["SV303"] is Severity.ERROR
    assert "SV303" not in sv(listed, "claude-code")
    assert "SV303" not in sv(listed)
    mapping = make(tmp_path / "b", "mp", description=GOOD_DESC, extra="allowed-tools: {a: b}\n")
    assert sv(mapping, "claude-code")["SV303"] is Severity.ERROR
    text = make(tmp_path / "c", "tx", description=GOOD_DESC, extra="allowed-tools: Read Bash\n")
    assert sv(text, "agentskills") == {}


def test_license_must_be_string(tmp_path: Path) -> None:
    skill = make(tmp_path, "lic", description=GOOD_DESC, extra="license: [MIT]\n")
    assert sv(skill, "agentskills")["SV304"] is Severity.ERROR


# -- unknown fields and types -----------------------------------------------------------------


def test_unknown_fields_per_profile(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "fields",
        description=GOOD_DESC,
        extra="version: 1.2.0\ntriggers:\n  keywords: [pdf]\nfoo: bar\nargument-hint: '[file]'\n",
    )
    strict = [d for d in validate_skill(skill, "agentskills") if d.code == "SV401"]
    assert {d.message.split("'")[1] for d in strict} == {
        "version",
        "triggers",
        "foo",
        "argument-hint",
    }
    assert all(d.severity is Severity.ERROR for d in strict)
    cc = [d for d in validate_skill(skill, "claude-code") if d.code == "SV401"]
    assert {d.message.split("'")[1] for d in cc} == {"triggers", "foo"}
    assert all(d.severity is Severity.WARNING for d in cc)
    default = [d for d in validate_skill(skill) if d.code == "SV401"]
    assert [d.message.split("'")[1] for d in default] == ["foo"]
    assert default[0].severity is Severity.WARNING
    assert default[0].line == skill.field_lines["foo"] == 7


def test_claude_code_types(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "cc",
        description=GOOD_DESC,
        extra=(
            "disable-model-invocation: 'yes'\nuser-invocable: true\nhooks: [a]\n"
            "context: thread\nshell: zsh\neffort: ultra\nmodel: 3\npaths: ['src/**']\n"
        ),
    )
    found = [d for d in validate_skill(skill, "claude-code") if d.code.startswith("SV4")]
    by_key = {d.message.split("'")[1]: (d.code, d.severity) for d in found}
    assert by_key == {
        "disable-model-invocation": ("SV402", Severity.ERROR),
        "hooks": ("SV402", Severity.ERROR),
        "model": ("SV402", Severity.ERROR),
        "context": ("SV403", Severity.WARNING),
        "shell": ("SV403", Severity.WARNING),
        "effort": ("SV403", Severity.WARNING),
    }
    assert all(d.line == skill.field_lines[k] for k, d in zip(by_key, found, strict=True))


def test_claude_code_good_values(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "cc",
        description=GOOD_DESC,
        extra=(
            "disable-model-invocation: true\ncontext: fork\nagent: Explore\nshell: bash\n"
            "effort: high\nhooks: {}\nwhen_to_use: When the user has code.\n"
            "allowed-tools: [Read, Grep]\nversion: 2\n"
        ),
    )
    assert validate_skill(skill, "claude-code") == []


def test_default_profile_accepts_skilldeck_fields(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "ext",
        description=GOOD_DESC,
        extra=(
            "triggers:\n  keywords: [pdf]\n  patterns: ['split .*']\ntools:\n  - name: Bash\n"
            "priority: 3\ntags: [a, b]\nauthor: ana\nhide-from-discovery: false\nenabled: true\n"
        ),
    )
    assert validate_skill(skill) == []


def test_default_profile_type_warnings(tmp_path: Path) -> None:
    skill = make(
        tmp_path, "ext", description=GOOD_DESC, extra="enabled: maybe\nhide-from-discovery: 1\n"
    )
    out = sv(skill)
    assert out == {"SV402": Severity.WARNING}
    assert skill.valid


def test_every_problem_at_once_with_positions(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "Bad--Name",
        folder="other",
        description="d" * 1100,
        extra="compatibility: ''\nmetadata: 3\nextra-field: 1\n",
    )
    out = validate_skill(skill, "agentskills")
    got = {d.code for d in out}
    assert {"SV104", "SV105", "SV106", "SV204", "SV301", "SV302", "SV401"} <= got
    for d in out:
        assert d.path == skill.path
        assert isinstance(d.line, int) and d.line >= 1
        assert d.column == 1
    assert next(d for d in out if d.code == "SV104").line == 2
    assert next(d for d in out if d.code == "SV204").line == 3


def test_checks_table_is_complete() -> None:
    assert all(
        code.startswith("SV") and len(c.severities) == len(PROFILES) for code, c in CHECKS.items()
    )


def test_corpus_validates_without_raising(corpus_dir: Path) -> None:
    files = sorted(corpus_dir.rglob("SKILL.md"))
    skills = [parse_skill_file(p) for p in files]
    counts = {}
    for profile in PROFILES:  # timed: tests/benchmarks/bench_timing.py validate-corpus
        counts[profile] = sum(len(validate_skill(s, profile)) for s in skills)
    print(f"validated {len(skills)} skills x {len(PROFILES)} profiles: {counts}")
    assert len(skills) >= 300
    assert counts["agentskills"] >= counts["default"]


# -- shipped profile, readable SV104, body encoding ---------------------------------------------

SHIPPED_META = "license: MIT\nmetadata:\n  version: '1.2.3'\n  tags: pdf, forms\n"


def test_shipped_profile_accepts_the_contract(tmp_path: Path) -> None:
    skill = make(tmp_path, "demo", description=GOOD_DESC, extra=SHIPPED_META)
    assert validate_skill(skill, "shipped") == []


@pytest.mark.parametrize(
    ("extra", "body", "expected"),
    [
        ("metadata:\n  tags: a, b\n", "# T\n\nText.\n", "SV502"),
        ("metadata:\n  version: '1.0'\n  tags: a, b\n", "# T\n\nText.\n", "SV502"),
        ("metadata:\n  version: 1.0.0-rc.1+build.5\n", "# T\n\nText.\n", "SV503"),
        ("metadata:\n  version: '1.0.0'\n  tags: ' , '\n", "# T\n\nText.\n", "SV503"),
        ("metadata:\n  version: '1.0.0'\n  tags: a, b\n", "\n  \n", "SV501"),
        ("metadata:\n  version: '1.0.0'\n  tags: a\n", "See [x](references/x.md).\n", "SV504"),
        ("metadata:\n  version: '1.0.0'\n  tags: a\n", "Run `scripts/go.py`.\n", "SV504"),
        ("version: 1.0.0\nmetadata:\n  version: '1.0.0'\n  tags: a\n", "# T\n", "SV401"),
    ],
)
def test_shipped_profile_findings(tmp_path: Path, extra: str, body: str, expected: str) -> None:
    skill = make(tmp_path, "demo", description=GOOD_DESC, extra=extra, body=body)
    found = sv(skill, "shipped")
    assert found == {expected: Severity.ERROR}, found
    assert expected not in sv(skill, "default") or expected == "SV401"


def test_shipped_profile_dead_link_has_its_line(tmp_path: Path) -> None:
    meta = "metadata:\n  version: '1.0.0'\n  tags: a\n"
    skill = make(tmp_path, "demo", description=GOOD_DESC, extra=meta, body="# T\n\n[x](gone.md)\n")
    (diag,) = [d for d in validate_skill(skill, "shipped") if d.code == "SV504"]
    assert diag.line == skill.body_line + 2 and "gone.md" in diag.message


def test_shipped_profile_unreadable_body(tmp_path: Path) -> None:
    meta = "metadata:\n  version: '1.0.0'\n  tags: a\n"
    skill = make(tmp_path, "demo", description=GOOD_DESC, extra=meta)
    skill.path.unlink()
    assert sv(skill, "shipped") == {"SV505": Severity.ERROR}


def test_sv104_names_bad_characters_readably(tmp_path: Path) -> None:
    skill = make(tmp_path, "demo", description=GOOD_DESC, extra="")
    skill.path.write_text(
        f"---\nname: Demo\u200bx\ndescription: {GOOD_DESC}\n---\nbody\n", encoding="utf-8"
    )
    skill = parse_skill_file(skill.path)
    (diag,) = [d for d in validate_skill(skill, "agentskills") if d.code == "SV104"]
    assert "'D' at character 1" in diag.message
    assert "U+200B ZERO WIDTH SPACE at character 5" in diag.message
    assert diag.line == 2


def test_body_encoding_reports_non_utf8_body_bytes(tmp_path: Path) -> None:
    from skilldeck.core.validate import body_encoding

    path = write_skill(tmp_path, "demo", description=GOOD_DESC, body="# T\n\ncafe\n")
    path.write_bytes(path.read_bytes().replace(b"cafe", b"caf\xe9"))
    skill = parse_skill_file(path)
    assert skill.diagnostics == []  # discovery never reads the body
    (diag,) = body_encoding(skill)
    assert (diag.code, diag.severity, diag.line, diag.column) == ("SD106", Severity.WARNING, 7, 4)
    assert "bytes e9" in diag.message
    clean = parse_skill_file(write_skill(tmp_path, "clean", description=GOOD_DESC))
    assert body_encoding(clean) == []
