"""SKILL.md parsing: fences, encodings, YAML problems, field extraction, resources, bodies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.discovery.frontmatter import (
    MAX_RESOURCES,
    MAX_SKILL_BYTES,
    parse_bytes,
    parse_skill_file,
    read_body,
    read_source,
    split_allowed_tools,
)
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Severity, Source, ToolRef


def write(tmp_path: Path, data: bytes, folder: str = "demo", name: str = "SKILL.md") -> Path:
    base = tmp_path / folder
    base.mkdir(parents=True, exist_ok=True)
    path = base / name
    path.write_bytes(data)
    return path


def codes(skill: object) -> list[str]:
    return [d.code for d in skill.diagnostics]  # type: ignore[attr-defined]


def test_basic_fields_and_positions(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "demo", description="Does X. Then Y.", extra="license: MIT\n")
    skill = parse_skill_file(path, source=Source.USER, root=tmp_path)
    assert skill.name == "demo"
    assert skill.description == "Does X. Then Y."
    assert skill.brief == "Does X."
    assert skill.license == "MIT"
    assert skill.path == path
    assert skill.base_dir == path.parent
    assert skill.source is Source.USER
    assert skill.rel_id == "demo"
    assert skill.field_lines == {"name": 2, "description": 3, "license": 4}
    assert skill.body_line == 6
    raw = path.read_bytes()
    assert raw[skill.body_offset :].startswith(b"# Title")
    assert skill.size == len(raw)
    assert skill.mtime_ns == path.stat().st_mtime_ns
    assert len(skill.content_hash) == 64
    assert skill.diagnostics == []
    assert skill.valid


def test_dashes_inside_values_do_not_close(tmp_path: Path) -> None:
    text = (
        "---\nname: demo\ndescription: before --- after\nnotes: |\n  line\n  ---\n  more\n"
        'quoted: "a\n  --- b"\n---\nbody\n'
    )
    skill = parse_skill_file(write(tmp_path, text.encode()))
    assert skill.description == "before --- after"
    assert skill.frontmatter["notes"] == "line\n---\nmore\n"
    assert skill.frontmatter["quoted"] == "a --- b"
    assert skill.diagnostics == []
    assert read_body(skill) == "body\n"


def test_closing_fence_with_trailing_spaces(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"---  \nname: demo\ndescription: d\n---   \nbody"))
    assert skill.name == "demo" and skill.diagnostics == []
    assert read_body(skill) == "body"


def test_bom_and_crlf(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf---\r\nname: demo\r\ndescription: Hi there\r\n---\r\nline1\r\nline2\r\n"
    skill = parse_skill_file(write(tmp_path, data))
    assert skill.name == "demo"
    assert skill.description == "Hi there"
    assert sorted(codes(skill)) == ["SD116", "SD119"]  # CRLF (info) and the BOM (warning)
    assert {d.code: d.severity for d in skill.diagnostics} == {
        "SD116": Severity.INFO,
        "SD119": Severity.WARNING,
    }
    assert skill.valid
    assert read_body(skill) == "line1\nline2\n"
    assert read_source(skill).startswith("---\nname: demo\n")


def test_lowercase_filename_warns(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: d\n---\n"
    skill = parse_skill_file(write(tmp_path, data, name="skill.md"))
    assert codes(skill) == ["SD109"]
    assert skill.diagnostics[0].severity is Severity.WARNING


def test_duplicate_keys_reported_with_line(tmp_path: Path) -> None:
    data = b"---\nname: a\ndescription: d\nmeta:\n  x: 1\n  x: 2\nname: b\n---\n"
    skill = parse_skill_file(write(tmp_path, data))
    dups = [d for d in skill.diagnostics if d.code == "SD105"]
    assert [(d.line, d.column) for d in dups] == [(6, 3), (7, 1)]
    assert skill.name == "b"  # YAML semantics: the last wins
    assert skill.field_lines["name"] == 2


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("---\nname: demo\ndescription: [unclosed\n---\n", 4, 1),
        ("---\nname: demo\n  bad: indent\n---\n", 3, 6),
        ('---\nname: demo\ndescription: "a\\qb"\n---\n', 3, 16),
    ],
)
def test_yaml_errors_have_line_and_column(
    tmp_path: Path, text: str, line: int, column: int
) -> None:
    skill = parse_skill_file(write(tmp_path, text.encode()))
    errors = [d for d in skill.diagnostics if d.code == "SD103"]
    assert len(errors) == 1
    assert (errors[0].line, errors[0].column) == (line, column)
    assert errors[0].severity is Severity.ERROR
    assert not skill.valid
    assert skill.name == "demo"  # folder name fallback


def test_control_character_is_a_yaml_error_with_position(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"---\nname: demo\ndescription: a\x01b\n---\n"))
    (err,) = [d for d in skill.diagnostics if d.code == "SD103"]
    assert err.line == 3


def test_non_utf8_is_reported_and_replaced(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"---\nname: demo\ndescription: caf\xe9 time\n---\n"))
    (diag,) = [d for d in skill.diagnostics if d.code == "SD106"]
    assert (diag.line, diag.column) == (3, 17)
    assert skill.description == "caf\ufffd time"
    assert skill.valid  # a warning: the skill still shows


def test_nul_bytes_reported(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"---\nname: demo\ndescription: a\x00b\n---\n"))
    (diag,) = [d for d in skill.diagnostics if d.code == "SD107"]
    assert diag.line == 3 and diag.severity is Severity.ERROR
    assert skill.description == "ab"


def test_utf16_file(tmp_path: Path) -> None:
    data = "---\nname: demo\ndescription: d\n---\n".encode("utf-16")
    skill = parse_skill_file(write(tmp_path, data))
    assert "SD117" in codes(skill)


def test_huge_file_is_reported_but_frontmatter_read(tmp_path: Path) -> None:
    head = b"---\nname: big\ndescription: Big one.\n---\n"
    path = write(tmp_path, head + b"x" * (MAX_SKILL_BYTES + 10))
    skill = parse_skill_file(path)
    assert skill.name == "big"
    assert codes(skill) == ["SD108"]
    assert skill.size > MAX_SKILL_BYTES
    assert len(read_body(skill, max_bytes=100)) == 100


def test_unclosed_frontmatter_huge_is_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, b"---\nname: demo\n" + b"a: b\n" * 400_000)
    skill = parse_skill_file(path)
    assert "SD114" in codes(skill) and "SD108" in codes(skill)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"# Just markdown\n", "SD101"),
        (b"", "SD101"),
        (b"---\nname: demo\ndescription: d\n", "SD102"),
        (b"---\n---\nbody", "SD104"),
        (b"---\n- a\n- b\n---\n", "SD104"),
        (b"---\njust a string\n---\n", "SD104"),
        (b"---\na: &a [*a]\n---\n", "SD115"),
    ],
)
def test_structural_problems(tmp_path: Path, data: bytes, code: str) -> None:
    skill = parse_skill_file(write(tmp_path, data))
    assert code in codes(skill)
    assert not skill.valid
    assert skill.name == "demo"


@pytest.mark.parametrize("data", [b"", b"\n  \n"])
def test_an_empty_file_is_called_empty(tmp_path: Path, data: bytes) -> None:
    """Issue #35 polish: an empty SKILL.md says "empty file", not only "no frontmatter"."""
    skill = parse_skill_file(write(tmp_path, data))
    assert [d.message.split(":")[0] for d in skill.diagnostics if d.code == "SD101"] == [
        "empty file"
    ]


def test_unreadable_file(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "locked")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user who can read mode-000 files (root)")
        skill = parse_skill_file(path)
        assert codes(skill) == ["SD110"]
        assert skill.name == "locked"
        with pytest.raises(SkilldeckError) as info:
            read_body(skill)
        assert info.value.code is ErrorCode.PERMISSION_DENIED
    finally:
        path.chmod(0o644)


def test_directory_named_skill_md_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "demo" / "SKILL.md").mkdir(parents=True)
    skill = parse_skill_file(tmp_path / "demo" / "SKILL.md")
    assert codes(skill) == ["SD110"]
    assert not skill.valid


def test_unreadable_directory_path(tmp_path: Path) -> None:
    skill = parse_skill_file(tmp_path / "missing" / "SKILL.md")
    assert codes(skill) == ["SD110"]
    with pytest.raises(SkilldeckError) as info:
        read_body(skill)
    assert info.value.code is ErrorCode.NOT_FOUND


def test_missing_name_falls_back_to_folder(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"---\ndescription: d\n---\n", folder="my-skill"))
    assert skill.name == "my-skill"
    assert codes(skill) == ["SD111"]


def test_wrong_types(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: {a: 1}\npriority: high\ntriggers: 3\ntools: 5\n---\n"
    skill = parse_skill_file(write(tmp_path, data))
    assert skill.description == ""
    assert codes(skill).count("SD112") == 4
    assert skill.priority == 0


def test_metadata_fields_and_tools(tmp_path: Path) -> None:
    data = (
        b"---\nname: demo\ndescription: d\ncompatibility: Python 3.11+\n"
        b"metadata:\n  version: 1.2\n  author: Ann\n  tags: [pdf, docs]\n"
        b"allowed-tools: Read, Grep Bash(git log:*) Bash(git diff:*)\n"
        b"tools:\n  - Read\n  - name: github.create_issue\n    purpose: file bugs\n"
        b"    required: false\n"
        b"triggers:\n  keywords: [pdf]\n  verbs: [merge, split]\n  patterns: ['\\.pdf$']\n"
        b"priority: 5\nhide-from-discovery: true\n---\n"
    )
    skill = parse_skill_file(write(tmp_path, data))
    assert skill.diagnostics == []
    assert skill.version == "1.2"
    assert skill.author == "Ann"
    assert skill.tags == ("pdf", "docs")
    assert skill.compatibility == "Python 3.11+"
    assert skill.allowed_tools == ("Read", "Grep", "Bash(git log:*)", "Bash(git diff:*)")
    assert skill.allowed_tools_raw == "Read, Grep Bash(git log:*) Bash(git diff:*)"
    assert skill.tools == (
        ToolRef("Read"),
        ToolRef("github.create_issue", "file bugs", False, "tools"),
        ToolRef("Grep", "", False, "allowed-tools"),
        ToolRef("Bash", "", False, "allowed-tools"),
    )
    assert skill.triggers.keywords == ("pdf",)
    assert skill.triggers.verbs == ("merge", "split")
    assert skill.triggers.patterns == ("\\.pdf$",)
    assert skill.priority == 5
    assert skill.hidden
    assert not skill.visible_to_models


def test_top_level_wins_over_metadata(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: d\nversion: '2'\nmetadata:\n  version: '1'\n---\n"
    assert parse_skill_file(write(tmp_path, data)).version == "2"


def test_triggers_as_list_and_disable_model_invocation(tmp_path: Path) -> None:
    data = (
        b"---\nname: demo\ndescription: d\ntriggers: [a, b]\ndisable-model-invocation: true\n---\n"
    )
    skill = parse_skill_file(write(tmp_path, data))
    assert skill.triggers.keywords == ("a", "b")
    assert skill.hidden


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Read Grep", ("Read", "Grep")),
        ("Read, Grep,Write", ("Read", "Grep", "Write")),
        ("Bash(git log:*) Read", ("Bash(git log:*)", "Read")),
        ("Bash(git add:*, git commit:*)", ("Bash(git add:*, git commit:*)",)),
        (["Read", "Bash(npm run test:*)", "Read"], ("Read", "Bash(npm run test:*)")),
        (["Read, Write"], ("Read", "Write")),
        ("", ()),
        (None, ()),
        (42, ()),
    ],
)
def test_split_allowed_tools(value: object, expected: tuple[str, ...]) -> None:
    assert split_allowed_tools(value) == expected


def test_resources_listing(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "demo")
    base = path.parent
    for rel in (
        "scripts/run.py",
        "references/a.md",
        "LICENSE.txt",
        "_private/x",
        ".git/HEAD",
        "scripts/__pycache__/run.pyc",
        ".hidden",
        "deep/a/b/c/d/e/f/g/h.txt",
    ):
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (base / "link-out").symlink_to(outside)
    (base / "link-in").symlink_to(base / "references")
    (base / "loop").symlink_to(base)
    skill = parse_skill_file(path)
    # One walk for every reader (core/skillfolder): a symlinked folder is not entered, so
    # nothing is listed that a skill's digest does not cover.
    assert skill.resources == (
        "LICENSE.txt",
        "references/a.md",
        "scripts/run.py",
    )
    assert not skill.resources_truncated


def test_resources_bounded(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "demo")
    for i in range(MAX_RESOURCES + 5):
        (path.parent / f"f{i:04d}.txt").write_text("x")
    skill = parse_skill_file(path)
    assert len(skill.resources) == MAX_RESOURCES
    assert skill.resources_truncated


def test_body_is_not_read_when_parsing(tmp_path: Path) -> None:
    head = b"---\nname: demo\ndescription: d\n---\n"
    path = write(tmp_path, head + b"\xff" * 300_000)  # invalid UTF-8 only in the body
    skill = parse_skill_file(path)
    assert skill.diagnostics == []
    assert read_body(skill, max_bytes=3) == "\ufffd" * 3


def test_parse_bytes_matches_file(tmp_path: Path) -> None:
    data = b"---\nname: demo\ndescription: d\nallowed-tools: Read\n---\nbody\n"
    a = parse_bytes(data, tmp_path / "demo" / "SKILL.md")
    b = parse_skill_file(write(tmp_path, data))
    assert (a.name, a.allowed_tools, a.body_offset, a.content_hash) == (
        b.name,
        b.allowed_tools,
        b.body_offset,
        b.content_hash,
    )


def test_read_body_for_skill_without_frontmatter(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"\xef\xbb\xbfplain\r\ntext"))
    assert read_body(skill) == "plain\ntext"


# -- BOM, body encoding, unterminated quotes ---------------------------------------------------


def test_utf8_bom_is_accepted_with_a_warning(tmp_path: Path) -> None:
    skill = parse_skill_file(write(tmp_path, b"\xef\xbb\xbf---\nname: demo\ndescription: d\n---\n"))
    (diag,) = skill.diagnostics
    assert (diag.code, diag.severity, diag.line, diag.column) == ("SD119", Severity.WARNING, 1, 1)
    assert "byte order mark" in diag.message and skill.valid and skill.name == "demo"


def test_encoding_problems_finds_the_first_bad_body_bytes() -> None:
    from skilldeck.core.discovery.frontmatter import encoding_problems

    head = b"---\nname: demo\n---\n"
    data = head + b"ok\nna\xefve \xff\n"
    ((code, message, line, column),) = encoding_problems(data, len(head), final=True)
    assert (code, line, column) == ("SD106", 5, 3) and "bytes ef" in message
    cut = head + "caf\u00e9".encode()[:-1]  # a sequence cut by the read, not a bad byte
    assert encoding_problems(cut, len(head), final=False) == []
    assert [p[0] for p in encoding_problems(cut, len(head), final=True)] == ["SD106"]
    assert encoding_problems(b"\xef\xbb\xbf" + head, len(head) + 3, final=True)[0][0] == "SD119"


@pytest.mark.parametrize("quote", ['"', "'"])
def test_unterminated_quote_points_at_its_start(tmp_path: Path, quote: str) -> None:
    text = f"---\nname: demo\ndescription: {quote}Starts here\nlicense: MIT\nx: y\n---\nbody\n"
    skill = parse_skill_file(write(tmp_path, text.encode()))
    (diag,) = [d for d in skill.diagnostics if d.code == "SD103"]
    assert (diag.line, diag.column) == (3, 14)
    assert f"unterminated {quote} quote" in diag.message
