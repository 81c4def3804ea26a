"""CLI rough edges (issue #13) and hardening: exit codes, JSON errors, rule look-up, agent
scope, shadowed copies and hostile text that must never reach the terminal raw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.cli.main import main

GOOD = "Converts spreadsheets to CSV files for imports. Use when exporting spreadsheet data."
ESC = "\x1b"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_rules_looks_up_codes_and_prefixes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "SL302")
    assert code == 0 and out.startswith("SL302  pipe-to-shell") and "SL301" not in out
    code, out, _ = run(capsys, "rules", "SV10", "--format", "json")
    data = json.loads(out)
    assert code == 0 and {r["code"] for r in data["rules"]} >= {"SV101", "SV102"}
    code, out, err = run(capsys, "rules", "ZZ9")
    assert code == 2 and "ZZ9" in err and out == ""


def test_session_check_exit_status_follows_the_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "session", "new", "--mode", "approval")
    sid = out.strip()
    code, out, _ = run(capsys, "session", "check", sid, "Bash", "--format", "json")
    assert code == 1 and json.loads(out)["allowed"] is False
    run(capsys, "session", "approve", sid, "Bash")
    code, out, _ = run(capsys, "session", "check", sid, "Bash")
    assert code == 0 and out.startswith("allowed")


def test_json_mode_reports_errors_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--format", "json", "show", "nope")
    assert code == 2
    assert json.loads(out)["error"]["code"] == "NOT_FOUND"
    assert "nope" in err
    code, out, _ = run(capsys, "--format", "json", "rules", "--bogus")
    assert code == 2 and json.loads(out)["error"]["code"] == "INVALID_PARAM"


def test_lint_and_validate_of_no_skill_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "lint", str(empty))
    assert code == 2 and "no SKILL.md" in err
    code, _, err = run(capsys, "validate", str(empty))
    assert code == 2 and "no SKILL.md" in err
    readme = tmp_path / "README.md"
    readme.write_text("# not a skill\n", encoding="utf-8")
    code, _, err = run(capsys, "validate", str(readme))
    assert code == 2 and "not a skill" in err


def test_lint_unknown_select_code_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "csv-export", GOOD)
    code, _, err = run(capsys, "lint", str(root), "--select", "ZZZ")
    assert code == 2 and "ZZZ" in err
    code, _, err = run(capsys, "lint", str(root), "--ignore", "SL9X")
    assert code == 2 and "SL9X" in err
    code, _, _ = run(capsys, "lint", str(root), "--select", "SL3")
    assert code == 0


def test_show_names_the_copies_it_shadows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    low, high = tmp_path / "low", tmp_path / "high"
    write_skill(low, "csv-export", GOOD)
    write_skill(high, "csv-export", GOOD)
    code, out, _ = run(capsys, "--root", str(low), "--root", str(high), "show", "csv-export")
    assert code == 0
    assert f"shadows  {low / 'csv-export' / 'SKILL.md'}" in out
    code, out, _ = run(
        capsys, "--root", str(low), "--root", str(high), "--format", "json", "show", "csv-export"
    )
    assert json.loads(out)["shadows"][0]["path"] == str(low / "csv-export" / "SKILL.md")


def test_agent_search_hides_skills_models_may_not_invoke(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "csv-export", GOOD)
    write_skill(root, "csv-manual", GOOD, extra="disable-model-invocation: true\n")
    code, out, _ = run(capsys, "--root", str(root), "search", "--agent", "spreadsheet", "csv")
    assert code == 0 and "csv-export" in out and "csv-manual" not in out
    code, out, _ = run(capsys, "--root", str(root), "search", "spreadsheet", "csv")
    assert "csv-manual" in out


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """Skills whose folder names and frontmatter values carry escape sequences (YAML's
    ``\\e`` is ESC inside double quotes; a raw ESC is a YAML error, shown too)."""
    root = tmp_path / "hostile"
    write_skill(
        root,
        "evil",
        description='"Clears \\e[2J\\e[H the screen \\e]0;pwned\\a [bold red]x[/]. '
        'Use when testing."',
        extra='version: "1\\e[31m"\nauthor: "\\e[5mblink"\nallowed-tools: "Bash\\e[2J"\n',
        folder=f"evil{ESC}[2Jdir",
    )
    write_skill(root, "evil", description="Loses the name clash. Use when testing.", folder="aaa")
    write_skill(root, f"bad{ESC}[31mname", description="Bad name. Use when testing.")
    write_skill(root, "raw", description=f"Raw {ESC}[2J escape. Use when testing.")
    return root


def test_hostile_fixture_really_carries_escapes(hostile: Path) -> None:
    from skilldeck.core.config import load_settings
    from skilldeck.core.workspace import Workspace

    workspace = Workspace(load_settings(), [hostile])
    workspace.discover()
    evil = [s for s in workspace.catalog.skills if s.name == "evil" and ESC in str(s.path)]
    assert evil and ESC in evil[0].description and ESC in (evil[0].version or "")


@pytest.mark.parametrize(
    "argv",
    [
        ("list",),
        ("list", "--all"),
        ("show", "evil"),
        ("validate",),
        ("lint",),
        ("search", "clears", "screen"),
        ("search", "--explain", "clears"),
        ("prompt",),
        ("load", "evil"),
    ],
)
def test_hostile_text_never_reaches_the_terminal_raw(
    hostile: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, "--root", str(hostile), *argv)
    assert code in (0, 1), err
    assert out, err
    assert ESC not in out and ESC not in err
    assert chr(7) not in out


def test_hostile_session_label_and_tool_name(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "session", "new", "--mode", "approval", "--label", f"x{ESC}[2J")
    sid = out.strip()
    code, out, err = run(capsys, "session", "check", sid, f"Bash{ESC}[2J")
    assert code == 2 and ESC not in err and "\\x1b[2J" in err
    for argv in (("session", "show", sid), ("session", "list")):
        code, out, err = run(capsys, *argv)
        assert code == 0 and ESC not in out and ESC not in err
        assert "\\x1b[2J" in out
    code, out, _ = run(capsys, "session", "show", sid, "--format", "json")
    assert json.loads(out)["label"] == f"x{ESC}[2J"


def test_lint_info_never_fails_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    long = GOOD + " " + " ".join(["It handles many spreadsheet layouts and encodings."] * 8)
    write_skill(root, "sheet-export", description=long)
    code, out, _ = run(capsys, "lint", str(root), "--format", "json")
    assert "SL005" in out and code == 0, out
    assert run(capsys, "lint", str(root), "--fail-on", "info")[0] == 1
    assert run(capsys, "lint", str(root), "--fail-on", "info", "--exit-zero")[0] == 0
