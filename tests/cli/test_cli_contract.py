"""CLI rough edges (issue #13) and hardening: exit codes, JSON errors, rule look-up, agent
scope, shadowed copies and hostile text that must never reach the terminal raw."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli as run
from conftest import write_skill
from skilldeck.cli.main import main

GOOD = "Converts spreadsheets to CSV files for imports. Use when exporting spreadsheet data."
ESC = "\x1b"


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


# -- issue #25: run exit status, CLI polish, parsing diagnostics ------------------------------


@pytest.fixture
def exec_root(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A skill ``codes`` whose script exits with its first argument; skills_exec on and the
    skill allowed in the isolated home."""
    from conftest import allowlist_line

    for name in ("SKILLDECK_SKILLS_EXEC", "SKILLDECK_SKILLS_V1", "SKILLDECK_EXEC_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "skills"
    write_skill(root, "codes", GOOD)
    (root / "codes" / "scripts").mkdir()
    script = "import sys\nprint('ran')\nsys.exit(int(sys.argv[1]))\n"
    (root / "codes" / "scripts" / "exit.py").write_text(script, encoding="utf-8")
    (isolated_home / "config.toml").write_text("skills_exec = true\n", encoding="utf-8")
    line = allowlist_line(root / "codes", "scripts/exit.py")
    (isolated_home / "ALLOWLIST.txt").write_text(line + "\n", encoding="utf-8")
    return root


def test_run_passes_the_scripts_exit_status_through(
    exec_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for status in (0, 1, 2, 3, 42):
        code, out, _ = run(
            capsys, "--root", str(exec_root), "run", "codes", "scripts/exit.py", str(status)
        )
        assert (code, out) == (status, "ran\n")


def test_run_own_refusals_and_errors_exit_125(
    exec_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--root", str(exec_root), "run", "codes", "scripts/nope.py")
    assert code == 125 and "skilldeck: error" in err
    code, _, err = run(capsys, "--root", str(exec_root), "run", "no-such-skill", "x.py")
    assert code == 125 and "no-such-skill" in err
    code, _, err = run(capsys, "--root", str(exec_root), "run", "codes")
    assert code == 125 and "skilldeck run --help" in err
    (exec_root / "codes" / "scripts" / "exit.py").write_text("changed\n", encoding="utf-8")
    code, _, err = run(capsys, "--root", str(exec_root), "run", "codes", "scripts/exit.py", "0")
    assert code == 125 and "PERMISSION_DENIED" in err


def test_mistyped_command_and_choice_suggest_the_right_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "lsit")
    assert code == 2 and "did you mean 'list'?" in err and "See 'skilldeck --help'." in err
    code, _, err = run(capsys, "lint", "--fail-on", "warn")
    assert code == 2 and "did you mean 'warning'?" in err
    assert "See 'skilldeck lint --help'." in err
    code, _, err = run(capsys, "session", "pending")
    assert code == 2 and "See 'skilldeck session pending --help'." in err
    code, _, err = run(capsys, "lint", "--selcet", "SL1")
    assert code == 2 and "did you mean '--select'?" in err and "'skilldeck lint --help'" in err


def test_version_and_quiet_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["-V"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("skilldeck ")
    root = tmp_path / "skills"
    write_skill(root, "csv-export", GOOD)
    code, out, _ = run(capsys, "--root", str(root), "validate")
    assert code == 0 and "skill(s) checked" in out
    code, out, _ = run(capsys, "-q", "--root", str(root), "validate")
    assert code == 0 and out == ""
    code, out, _ = run(capsys, "--root", str(root), "list", "--quiet")
    assert code == 0 and "csv-export" in out and "skill(s)" not in out


def test_list_labels_its_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "skills"
    write_skill(root, "csv-export", GOOD)
    code, out, _ = run(capsys, "--root", str(root), "list")
    header = out.splitlines()[0].split()
    assert code == 0 and header == ["NAME", "SOURCE", "STATUS", "DESCRIPTION"]
    assert "STATUS:" in out.splitlines()[-1]


def test_root_that_is_a_file_is_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hi\n", encoding="utf-8")
    code, out, err = run(capsys, "--root", str(notes), "list")
    assert code == 2 and out == "" and "is a file, not a folder of skills" in err
    assert "Traceback" not in err
    skill_md = write_skill(tmp_path / "skills", "csv-export", GOOD)
    code, out, _ = run(capsys, "--root", str(skill_md), "list")
    assert code == 0 and "csv-export" in out  # a SKILL.md root still works


def test_session_pending_says_nothing_waiting(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "session", "new", "--mode", "approval")
    sid = out.strip()
    code, out, _ = run(capsys, "session", "pending", sid)
    assert code == 0 and "nothing waiting" in out
    code, out, _ = run(capsys, "session", "pending", sid, "--format", "json")
    assert json.loads(out)["pending"] == []


def test_help_texts_load_arguments_optional_and_serve_lists_mcp_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from skilldeck.mcp.schemas import TOOLS

    with pytest.raises(SystemExit):
        main(["load", "--help"])
    out = capsys.readouterr().out
    assert "[ARGUMENTS ...]" in out and "optional" in out
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert all(spec.name in out for spec in TOOLS) and "Prompts:" in out


def test_cli_import_does_not_import_mcp() -> None:
    code = "import sys, skilldeck.cli.main as m; m.build_parser(); print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_completion_script_completes_commands_and_options(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = subprocess.run(
        [sys.executable, "-m", "skilldeck", "completion", "bash"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / "skilldeck.bash").write_text(script, encoding="utf-8")
    show = '; _skilldeck; echo "${COMPREPLY[*]}"\n'
    probe = (
        f"source {tmp_path / 'skilldeck.bash'}\n"
        f"COMP_WORDS=(skilldeck li); COMP_CWORD=1{show}"
        f"COMP_WORDS=(skilldeck --root x lint --fa); COMP_CWORD=4{show}"
        f"COMP_WORDS=(skilldeck session app); COMP_CWORD=2{show}"
    )
    out = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["list lint", "--fail-on", "approve"]
    zsh = subprocess.run(
        [sys.executable, "-m", "skilldeck", "completion", "zsh"], capture_output=True, text=True
    )
    assert zsh.returncode == 0 and "bashcompinit" in zsh.stdout and "_skilldeck" in zsh.stdout


def test_validate_and_lint_report_bom_and_bad_body_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    bom = write_skill(root, "with-bom", GOOD)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    latin = write_skill(root, "latin-body", GOOD, body="# Title\n\ncafe time\n")
    latin.write_bytes(latin.read_bytes().replace(b"cafe", b"caf\xe9"))
    code, out, _ = run(capsys, "validate", str(root))
    assert f"{bom}:1:1: SD119 warning" in out and "byte order mark" in out
    assert f"{latin}:7:4: SD106 warning body is not valid UTF-8 at line 7" in out
    code, out, _ = run(capsys, "lint", str(root))
    assert code == 1 and f"{bom}:1:1: SL106" in out and f"{latin}:7:4: SL106" in out


def test_lint_reports_a_missing_description_like_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "skills" / "no-desc"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: no-desc\n---\n# Body\n", encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(folder))
    assert code == 1 and "SV201" in out
    code, out, _ = run(capsys, "lint", str(folder))
    assert code == 1 and "SL011 error description is missing" in out


def test_unterminated_quote_points_at_its_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "skills" / "quoted"
    folder.mkdir(parents=True)
    text = '---\nname: quoted\ndescription: "Converts files\nlicense: MIT\nx: y\n---\nbody\n'
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(folder))
    assert code == 1 and ':3:14: SD103 error YAML error: unterminated " quote' in out


def test_validate_shipped_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "skills"
    meta = "metadata:\n  version: '1.2'\n"
    write_skill(root, "csv-export", GOOD, body="See [notes](references/notes.md).\n", extra=meta)
    code, out, _ = run(capsys, "validate", "--profile", "shipped", str(root))
    assert code == 1
    for code_ in ("SV502", "SV503", "SV504"):
        assert code_ in out, out
    code, out, _ = run(capsys, "validate", str(root))
    assert code == 0, out  # the default profile does not ask for the shipped contract


def test_the_command_map_names_every_command_of_the_full_parser() -> None:
    """A command line builds only its own group's parser (COMMANDS): the map must match
    what the groups register, or a command would be missing from its own parser."""
    import argparse

    from skilldeck.cli import main as cli_main

    full = cli_main.build_parser()
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert set(cli_main.COMMANDS) == set(sub.choices)
    for command, module in cli_main.COMMANDS.items():
        one = cli_main.build_parser(command)
        only = next(a for a in one._actions if isinstance(a, argparse._SubParsersAction))
        assert command in only.choices and module in cli_main.COMMAND_MODULES


def test_token_add_prints_the_token_alone_on_stdout(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #35 item 9: stdout saved as a remote's token_file must be the token itself."""
    code, out, err = run(capsys, "token", "add", "ci-bot")
    assert code == 0
    token = out.strip()
    assert out == token + "\n" and " " not in token and len(token) >= 32
    assert "shown once" in err
    saved = (isolated_home / "mcp-clients").glob("*")
    assert any(token in p.read_text(encoding="utf-8") for p in saved if p.is_file())
