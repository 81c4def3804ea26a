"""Tests for progressive disclosure: listing (tier 1), load (tier 2), read (tier 3)."""

from __future__ import annotations

import base64
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import (  # type: ignore[import-not-found,unused-ignore]
    SHIPPED_SKILLS,
    write_skill,
)
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import (
    DESCRIPTION_FLOOR,
    load_skill,
    read_resource,
    render_listing,
    suggest_names,
)
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.tokens import estimate_tokens

LONG_DESC = (
    "Builds release notes from merged pull requests, tags and labels in a git repository. "
    "Use when preparing a "
    "release, writing a changelog or summarising what changed since the last version. "
    "Groups entries by label and links each one."
)


def make(
    root: Path,
    name: str,
    description: str = "Does a thing. Use when testing.",
    body: str = "# Title\n\nBody text.\n",
    extra: str = "",
) -> Skill:
    """Write a real skill folder and parse it."""
    path = write_skill(root, name, description=description, body=body, extra=extra)
    return parse_skill_file(path, root=root)


def catalog(root: Path, count: int, description: str = LONG_DESC) -> list[Skill]:
    return [make(root, f"skill-{i:02d}", description) for i in range(count)]


# ------------------------------------------------------------------------------ tier 1


def test_xml_listing_shape_and_escaping(tmp_path: Path) -> None:
    desc = "Compares a < b & c > d with \"quotes\" and 'apostrophes'. Use when testing."
    skill = make(tmp_path, "escaper", desc)
    listing = render_listing([skill])
    expected = (
        "<available_skills>\n<skill>\n<name>\nescaper\n</name>\n<description>\n"
        "Compares a &lt; b &amp; c &gt; d with &quot;quotes&quot; and &apos;apostrophes&apos;."
        " Use when testing.\n</description>\n<location>\n"
        f"{skill.path}\n</location>\n</skill>\n</available_skills>"
    )
    assert listing.text == expected
    parsed = ET.fromstring(listing.text)
    assert parsed.find("skill/description").text.strip() == desc  # type: ignore[union-attr]
    assert listing.included == ["escaper"]
    assert listing.omitted == [] and listing.shortened == []


def test_markdown_listing_sorted_by_name(tmp_path: Path) -> None:
    skills = [make(tmp_path, "zeta"), make(tmp_path, "alpha")]
    listing = render_listing(skills, fmt="markdown")
    lines = listing.text.splitlines()
    assert lines == [
        f"- **alpha**: Does a thing. Use when testing. (`{skills[1].path}`)",
        f"- **zeta**: Does a thing. Use when testing. (`{skills[0].path}`)",
    ]
    assert listing.included == ["alpha", "zeta"]
    assert listing.to_dict()["chars"] == len(listing.text)


def test_multiline_description_is_one_line(tmp_path: Path) -> None:
    skill = make(tmp_path, "folded", "placeholder")
    skill.description = "Formats tables.\n  Use when\tasked to tidy a table."
    listing = render_listing([skill], fmt="markdown")
    assert "**folded**: Formats tables. Use when asked to tidy a table. (`" in listing.text


def test_unknown_format_and_negative_budget_rejected(tmp_path: Path) -> None:
    skill = make(tmp_path, "one")
    with pytest.raises(SkilldeckError) as err:
        render_listing([skill], fmt="html")
    assert err.value.code is ErrorCode.INVALID_PARAM
    with pytest.raises(SkilldeckError):
        render_listing([skill], budget=-1)


def test_hidden_disabled_shadowed_invalid_not_listed(tmp_path: Path) -> None:
    shown = make(tmp_path, "shown")
    hidden = make(tmp_path, "hidden", extra="disable-model-invocation: true\n")
    disabled = make(tmp_path, "disabled")
    disabled.enabled = False
    shadowed = make(tmp_path, "shadowed")
    shadowed.shadowed_by = shown.path
    broken = make(tmp_path, "broken")
    broken.diagnostics.append(Diagnostic("SV999", Severity.ERROR, "broken on purpose"))
    listing = render_listing([shown, hidden, disabled, shadowed, broken])
    assert listing.included == ["shown"]
    for name in ("hidden", "disabled", "shadowed", "broken"):
        assert f"\n{name}\n" not in listing.text


def test_within_budget_nothing_changes(tmp_path: Path) -> None:
    skills = catalog(tmp_path, 5)
    full = render_listing(skills, budget=10**6)
    exact = render_listing(skills, budget=len(full.text))
    assert exact.text == full.text
    assert exact.shortened == [] and exact.omitted == []


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_over_budget_shortens_descriptions_first(tmp_path: Path, fmt: str) -> None:
    skills = catalog(tmp_path, 10)
    full = render_listing(skills, budget=10**6, fmt=fmt)
    budget = len(full.text) - 400
    listing = render_listing(skills, budget=budget, fmt=fmt)
    assert len(listing.text) <= budget
    assert listing.omitted == []
    assert listing.shortened  # descriptions were shortened, nobody was left out
    assert len(listing.included) == 10
    first_sentence = LONG_DESC.split(". ")[0] + "."
    assert first_sentence in listing.text


def test_shortening_truncates_with_ellipsis_down_to_floor(tmp_path: Path) -> None:
    skills = catalog(tmp_path, 10)
    first_sentence = LONG_DESC.split(". ")[0] + "."
    assert len(first_sentence) > 80
    full = render_listing(skills, budget=10**6)
    # Room for about 75 characters per description: below the first sentence, above the floor.
    budget = len(full.text) - 10 * (len(LONG_DESC) - 75)
    listing = render_listing(skills, budget=budget)
    assert len(listing.text) <= budget
    assert listing.omitted == []
    assert len(listing.shortened) == 10
    descriptions = re.findall(r"<description>\n(.*?)\n</description>", listing.text)
    assert len(descriptions) == 10
    assert all(d.endswith("…") for d in descriptions)
    assert all(DESCRIPTION_FLOOR // 2 <= len(d) <= 75 for d in descriptions)
    assert all(first_sentence.startswith(d[:-1]) for d in descriptions)


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_then_omits_skills_with_note(tmp_path: Path, fmt: str) -> None:
    skills = catalog(tmp_path, 20)
    budget = 2000
    listing = render_listing(skills, budget=budget, fmt=fmt)
    assert len(listing.text) <= budget
    assert listing.omitted
    assert len(listing.included) + len(listing.omitted) == 20
    # deterministic rule: equal priority -> the last names by name are left out
    assert listing.included == [f"skill-{i:02d}" for i in range(len(listing.included))]
    note = listing.text.splitlines()[-1]
    assert note.startswith(f"({len(listing.omitted)} skills left out")
    for name in listing.omitted:
        assert name in note
    if fmt == "xml":
        ET.fromstring(listing.text[: listing.text.rindex("</available_skills>") + 19])


def test_omission_prefers_low_priority(tmp_path: Path) -> None:
    skills = catalog(tmp_path, 6)
    skills[5].priority = 10  # last by name but important
    skills[0].priority = -1  # first by name but unimportant
    listing = render_listing(skills, budget=900)
    assert len(listing.text) <= 900
    assert 1 < len(listing.omitted) < 6
    assert "skill-05" in listing.included
    assert "skill-00" in listing.omitted
    # after the unimportant one, equal priorities go last-by-name first
    dropped_rest = sorted(set(listing.omitted) - {"skill-00"}, reverse=True)
    assert dropped_rest == [f"skill-{i:02d}" for i in range(4, 4 - len(dropped_rest), -1)]


def test_many_skills_stay_within_budget(tmp_path: Path) -> None:
    skills = catalog(tmp_path, 3)
    many = []
    for i in range(600):
        clone = Skill(
            name=f"bulk-{i:04d}",
            description=LONG_DESC,
            path=skills[0].path,
            base_dir=skills[0].base_dir,
        )
        many.append(clone)
    listing = render_listing(many, budget=12000)
    assert len(listing.text) <= 12000
    assert len(listing.omitted) > 400
    assert "more.)" in listing.text


def test_tiny_budget_best_effort(tmp_path: Path) -> None:
    skills = catalog(tmp_path, 3)
    listing = render_listing(skills, budget=0)
    assert listing.included == []
    assert listing.omitted == ["skill-00", "skill-01", "skill-02"]
    assert "3 skills left out" in listing.text


# ------------------------------------------------------------------------------ tier 2


def test_load_prefixes_base_dir(tmp_path: Path) -> None:
    skill = make(tmp_path, "plain", body="# Plain\n\nDo it.\n")
    result = load_skill(skill)
    assert result.text == f"Base directory for this skill: {skill.base_dir}\n\n# Plain\n\nDo it.\n"
    assert result.truncated is False
    assert result.tokens == estimate_tokens(result.text)
    data = result.to_dict()
    assert data["name"] == "plain" and data["base_dir"] == str(skill.base_dir)
    assert data["truncated"] is False


def test_leading_blank_lines_dropped(tmp_path: Path) -> None:
    skill = make(tmp_path, "spaced", body="\n\n# Spaced\n")
    assert load_skill(skill).text.endswith(f"{skill.base_dir}\n\n# Spaced\n")


def test_argument_substitution(tmp_path: Path) -> None:
    body = (
        "all=$ARGUMENTS\nsecond=$ARGUMENTS[1]\nshort=$1 first=$0\n"
        "dir=${SKILL_DIR} cdir=${CLAUDE_SKILL_DIR}\n"
    )
    skill = make(tmp_path, "args", body=body)
    result = load_skill(skill, 'alpha "beta gamma" delta')
    text = result.text.split("\n\n", 1)[1]
    assert text == (
        'all=alpha "beta gamma" delta\nsecond=beta gamma\nshort=beta gamma first=alpha\n'
        f"dir={skill.base_dir} cdir={skill.base_dir}\n"
    )
    assert "ARGUMENTS:" not in result.text
    assert result.arguments == 'alpha "beta gamma" delta'


def test_unbalanced_quotes_fall_back_to_whitespace(tmp_path: Path) -> None:
    skill = make(tmp_path, "quotes", body="first=$0 second=$1\n")
    result = load_skill(skill, "it's fine")
    assert "first=it's second=fine" in result.text


def test_missing_positional_becomes_empty_with_warning(tmp_path: Path) -> None:
    skill = make(tmp_path, "missing", body="a=$0 b=$ARGUMENTS[3].\n")
    result = load_skill(skill, "one")
    assert "a=one b=." in result.text
    assert any("3" in w for w in result.warnings)


def test_arguments_appended_without_placeholder(tmp_path: Path) -> None:
    skill = make(tmp_path, "append", body="# Do it\n\nSteps. See ${SKILL_DIR}/x.md\n")
    result = load_skill(skill, "fix the bug")
    assert result.text.endswith(f"See {skill.base_dir}/x.md\n\nARGUMENTS: fix the bug")
    assert not load_skill(skill).text.rstrip().endswith("ARGUMENTS:")
    assert "ARGUMENTS:" not in load_skill(skill).text


def test_long_body_truncated_on_line_boundary(tmp_path: Path) -> None:
    lines = [f"Line {i}: do the step carefully and check the output." for i in range(400)]
    skill = make(tmp_path, "long", body="\n".join(lines) + "\n")
    result = load_skill(skill, token_cap=500)
    assert result.truncated is True
    assert result.body_tokens > 500
    body = result.text.split("\n\n", 1)[1]
    kept = [ln for ln in body.splitlines() if ln.startswith("Line ")]
    assert kept and kept == lines[: len(kept)]  # whole lines, in order
    assert estimate_tokens("\n".join(kept)) <= 500
    assert "truncated" in body and f"skilldeck read long {skill.path.name}" in body
    resume = int(re.search(r"from line (\d+)", body).group(1))  # type: ignore[union-attr]
    file_lines = skill.path.read_text(encoding="utf-8").splitlines()
    assert file_lines[resume - 1] == lines[len(kept)]
    assert result.to_dict()["truncated"] is True
    assert not load_skill(skill, token_cap=10**6).truncated


def test_disabled_skill_refused(tmp_path: Path) -> None:
    skill = make(tmp_path, "off")
    skill.enabled = False
    with pytest.raises(SkilldeckError) as err:
        load_skill(skill)
    assert err.value.code is ErrorCode.PERMISSION_DENIED


def test_skill_with_errors_loads_with_warnings(tmp_path: Path) -> None:
    skill = make(tmp_path, "flawed")
    skill.diagnostics.append(Diagnostic("SV101", Severity.ERROR, "name is wrong"))
    result = load_skill(skill)
    assert "Body text." in result.text
    assert any("SV101" in w for w in result.warnings)


# ------------------------------------------------------------------------------ tier 3


@pytest.fixture
def rich_skill(tmp_path: Path) -> Skill:
    root = tmp_path / "skills"
    skill = make(root, "rich", body="See [ref](references/guide.md).\n")
    refs = skill.base_dir / "references"
    refs.mkdir()
    (refs / "guide.md").write_text("# Guide\n\nUse it.\n", encoding="utf-8")
    (skill.base_dir / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (skill.base_dir / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    return skill


def test_read_text_resource(rich_skill: Skill) -> None:
    res = read_resource(rich_skill, "references/guide.md")
    assert res.text == "# Guide\n\nUse it.\n"
    assert res.binary is False and res.path == "references/guide.md"
    assert res.size == len(res.data)
    assert res.mime in ("text/markdown", "text/plain", "text/x-markdown")
    data = res.to_dict()
    assert data["text"] == res.text and data["base64"] is None
    assert read_resource(rich_skill, "./references//guide.md").text == res.text


def test_read_binary_resource_base64(rich_skill: Skill) -> None:
    res = read_resource(rich_skill, "logo.png")
    assert res.binary is True and res.text is None
    assert res.mime == "image/png"
    data = res.to_dict()
    assert base64.b64decode(data["base64"]) == res.data
    latin = read_resource(rich_skill, "latin1.txt")
    assert latin.binary is True


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "  ",
        "../secret",
        "references/../../x",
        "/etc/passwd",
        "\\windows\\x",
        "C:\\Windows\\x",
        "c:/x",
        "ref\x00.md",
        "..",
        ".",
        "references/..\\..\\x",
    ],
)
def test_invalid_paths_rejected(rich_skill: Skill, bad: str) -> None:
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, bad)
    assert err.value.code is ErrorCode.INVALID_PARAM


def test_missing_and_directory(rich_skill: Skill) -> None:
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, "references/nope.md")
    assert err.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, "references")
    assert err.value.code is ErrorCode.INVALID_PARAM


def test_too_large_refused_with_size(rich_skill: Skill) -> None:
    (rich_skill.base_dir / "big.txt").write_bytes(b"x" * 5000)
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, "big.txt", byte_cap=4096)
    assert err.value.code is ErrorCode.INVALID_PARAM
    assert err.value.details["size"] == 5000
    assert read_resource(rich_skill, "big.txt", byte_cap=5000).size == 5000


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlink_escaping_refused(rich_skill: Skill, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret", encoding="utf-8")
    os.symlink(secret, rich_skill.base_dir / "leak.txt")
    os.symlink(tmp_path, rich_skill.base_dir / "outside")
    os.symlink(tmp_path / "does-not-exist", rich_skill.base_dir / "dangling")
    for rel in ("leak.txt", "outside/secret.txt", "dangling"):
        with pytest.raises(SkilldeckError) as err:
            read_resource(rich_skill, rel)
        assert err.value.code is ErrorCode.PERMISSION_DENIED, rel


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlink_inside_allowed(rich_skill: Skill) -> None:
    os.symlink(rich_skill.base_dir / "references" / "guide.md", rich_skill.base_dir / "g.md")
    os.symlink("references", rich_skill.base_dir / "docs")
    assert read_resource(rich_skill, "g.md").text == "# Guide\n\nUse it.\n"
    assert read_resource(rich_skill, "docs/guide.md").text == "# Guide\n\nUse it.\n"


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_skill_folder_itself_symlinked(tmp_path: Path) -> None:
    real_root = tmp_path / "real"
    skill_path = write_skill(real_root, "linked")
    (skill_path.parent / "notes.md").write_text("notes\n", encoding="utf-8")
    installed = tmp_path / "installed"
    installed.mkdir()
    os.symlink(skill_path.parent, installed / "linked")
    skill = parse_skill_file(installed / "linked" / "SKILL.md", root=installed)
    assert read_resource(skill, "notes.md").text == "notes\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_refused_without_blocking(rich_skill: Skill) -> None:
    os.mkfifo(rich_skill.base_dir / "pipe")
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, "pipe")
    assert err.value.code is ErrorCode.PERMISSION_DENIED
    assert "FIFO" in err.value.message


def test_missing_resource_suggests_close_names(rich_skill: Skill) -> None:
    with pytest.raises(SkilldeckError) as err:
        read_resource(rich_skill, "references/guid.md")
    assert err.value.code is ErrorCode.NOT_FOUND
    assert err.value.details["suggestions"] == ["references/guide.md"]


def test_can_read_skill_md_itself(rich_skill: Skill) -> None:
    assert "See [ref]" in (read_resource(rich_skill, "SKILL.md").text or "")


# ------------------------------------------------------------------------------ names


def test_suggest_names() -> None:
    names = ["writing-skills", "reviewing-skill-lint", "triaging-skill-matches", "pdf"]
    assert suggest_names("writing-skil", names) == ["writing-skills"]
    assert suggest_names("revewing-skill-lint", names) == ["reviewing-skill-lint"]
    assert suggest_names("PDFF", names) == ["pdf"]
    assert len(suggest_names("skill", names, n=2)) <= 2
    assert suggest_names("zzzzqqq", names) == []
    assert suggest_names("", names) == []


# ------------------------------------------------------------------------------ shipped skills

SPEC_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
LINK = re.compile(r"\]\(([^)#\s]+)\)")


def shipped() -> list[Skill]:
    from skilldeck.core.model import Source

    paths = sorted(SHIPPED_SKILLS.glob("*/SKILL.md"))
    return [parse_skill_file(p, source=Source.BUNDLED, root=SHIPPED_SKILLS) for p in paths]


def test_at_least_three_shipped_skills_pass_spec_and_lint() -> None:
    from skilldeck.core.lint import lint_catalog
    from skilldeck.core.validate import validate_skill

    skills = shipped()
    assert len(skills) >= 3
    findings = lint_catalog(skills, None)
    for skill in skills:
        assert skill.name == skill.base_dir.name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", skill.name)
        assert set(skill.frontmatter) <= SPEC_FIELDS, skill.name
        assert validate_skill(skill, "agentskills") == [], skill.name
        assert findings[skill.path] == [], (skill.name, findings[skill.path])
        desc = skill.description
        assert 80 <= len(desc) <= 250, (skill.name, len(desc))
        assert "use when" in desc.lower()
        assert "<" not in desc and ">" not in desc
        assert not re.search(r"claude|anthropic", desc, re.IGNORECASE)


def test_shipped_skill_bodies_are_practical_and_self_contained() -> None:
    for skill in shipped():
        text = skill.path.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 200, skill.name
        assert "skilldeck " in text
        assert not re.search(r"curl[^\n|]*\|\s*(ba)?sh", text)
        assert not re.search(r"(^|\s)(/Users/|/home/|[A-Z]:\\)", text)
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # examples may show links
        for target in LINK.findall(prose):
            if "://" not in target:
                assert not target.startswith("/"), target
                assert (skill.base_dir / target).is_file(), (skill.name, target)
        # loading without arguments must not eat text: no placeholders in the bodies
        loaded = load_skill(skill)
        assert not loaded.truncated and not loaded.warnings
        assert loaded.text.rstrip().endswith(text.rstrip().splitlines()[-1])
        with_args = load_skill(skill, "some-skill")
        assert with_args.text.endswith("ARGUMENTS: some-skill")


def test_shipped_skills_listing_and_resources() -> None:
    skills = shipped()
    listing = render_listing(skills)
    assert listing.included == sorted(s.name for s in skills)
    ET.fromstring(listing.text)
    writer = next(s for s in skills if s.name == "writing-skills")
    for rel in writer.resources:
        res = read_resource(writer, rel)
        assert res.text and not res.binary


def test_recorded_load_and_read_emit_telemetry(tmp_path: Path, isolated_home: Path) -> None:
    import json as _json

    from skilldeck.core.config import load_settings
    from skilldeck.core.loader import load_and_record, read_and_record
    from skilldeck.core.telemetry import Telemetry

    path = write_skill(tmp_path, "rec-skill", body="Body $ARGUMENTS\n")
    (path.parent / "notes.txt").write_text("hello\n")
    skill = parse_skill_file(path)
    writer = Telemetry.from_settings(load_settings())
    result = load_and_record(skill, "x", actor="cli", telemetry=writer, session="s1")
    assert result.text.endswith("Body x\n") or "Body x" in result.text
    assert read_and_record(skill, "notes.txt", actor="agent", telemetry=writer).text == "hello\n"
    with pytest.raises(SkilldeckError):
        read_and_record(skill, "../outside.txt", actor="agent", telemetry=writer)
    lines = [
        _json.loads(line)
        for f in sorted((isolated_home / "telemetry").glob("*.jsonl"))
        for line in f.read_text().splitlines()
        if line.strip()
    ]
    loaded = [e for e in lines if e["event"] == "skill_loaded"]
    assert loaded and loaded[-1]["name"] == "rec-skill" and loaded[-1]["session"] == "s1"
    assert {"tokens", "latency_ms", "truncated", "actor"} <= set(loaded[-1])
    reads = [e for e in lines if e["event"] == "skill_resource_requested"]
    assert [e["ok"] for e in reads] == [True, False]
    assert reads[1]["code"] == "INVALID_PARAM" and reads[0]["resource"] == "notes.txt"
