"""``skilldeck usage`` and ``skilldeck agents`` in process: text that fits 80 columns and
escapes what skills and agents wrote, bad input refused with a diagnostic, and where each
agent sees each skill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, write_skill
from skilldeck.core.config import load_settings
from skilldeck.core.sessions import SessionStore
from skilldeck.core.telemetry import Telemetry

HOSTILE = "pdf\x1b]0;pwned\x07\x1b[2J\u202eevil"


def seed(root: Path) -> str:
    """A catalog of two skills; a session that matched ``pdf-forms`` (with a hostile
    request) and never loaded it, and a forged event naming a hostile skill."""
    write_skill(root, "pdf-forms", description="Fill PDF forms. Use for pdf forms.")
    write_skill(root, "idle-skill", description="Never used. Use when testing.")
    settings = load_settings()
    store = SessionStore(settings.sessions_db, settings=settings)
    session = store.create().id
    store.close()
    telemetry = Telemetry.from_settings(settings)
    telemetry.emit(
        "skill_selected", query=f"fill {HOSTILE}", selected="pdf-forms", confident=True,
        session=session,
    )  # fmt: skip
    telemetry.emit("skill_loaded", name=HOSTILE + "x" * 90, actor="agent")
    telemetry.emit("skill_selected", query=HOSTILE, selected=None, confident=False)
    return session


def test_usage_text_fits_80_columns_and_escapes_untrusted_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    session = seed(root)
    code, out, err = run_cli(capsys, "--root", str(root), "usage")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b" in out and ("<U+202E>" in out or "\\u202e" in out)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "pdf-forms" in out and session[:12] in out and "idle-skill" in out


def test_usage_json_is_schema_1_with_the_silent_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    session = seed(root)
    code, out, _ = run_cli(
        capsys, "--root", str(root), "usage", "--since", "all", "--format", "json"
    )
    data = json.loads(out)
    assert code == 0 and data["schema"] == 1 and data["since"] is None
    pdf = next(s for s in data["skills"] if s["name"] == "pdf-forms")
    assert pdf["matched"] == 1 and pdf["silent_misses"][0]["session"] == session
    assert data["never_used"] == ["idle-skill"]
    assert data["unmatched"][0]["query"] == HOSTILE  # JSON keeps the text; it escapes it


def test_usage_with_telemetry_off_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    root = tmp_path / "skills"
    seed(root)
    (isolated_home / "config.toml").write_text("telemetry = false\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "--root", str(root), "usage")
    assert code == 0
    assert "note: telemetry is off" in out
    assert "Silent misses" not in out and "nothing matched" not in out


@pytest.mark.parametrize("since", ["yesterday", "7x", "\x1b[2J"])
def test_a_bad_since_is_refused_with_a_diagnostic(
    since: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "--root", str(tmp_path), "usage", "--since", since)
    assert code == 2 and out == ""
    assert "--since" in err and "INVALID_PARAM" in err and "\x1b" not in err
    assert "Traceback" not in err


def views(out: str) -> dict[str, dict[str, Any]]:
    data = json.loads(out)
    assert data["schema"] == 1
    return {a["name"]: a for a in data["agents"]}


def seen_from(view: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["folder"] for s in view["skills"] if s["status"] == "seen"}


def test_agents_places_skills_under_the_agent_whose_folder_holds_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path.home()
    write_skill(home / ".claude/skills", "claude-only", description="C. Use when testing.")
    write_skill(home / ".codex/skills", "codex-only", description="X. Use when testing.")
    code, out, err = run_cli(capsys, "agents", "--format", "json")
    assert code == 0, err
    agents = views(out)
    assert set(agents) >= {
        "Claude Code", "Codex", "Cursor", "Gemini CLI", "GitHub Copilot", "OpenCode"
    }  # fmt: skip
    assert seen_from(agents["Claude Code"]) == {"claude-only": str(home / ".claude/skills")}
    assert seen_from(agents["Codex"]) == {"codex-only": str(home / ".codex/skills")}
    missing = {m["name"]: m for m in agents["Claude Code"]["not_seen"]}
    assert missing["codex-only"]["folder"] == str(home / ".codex/skills")
    assert "Codex" in missing["codex-only"]["reason"]
    assert all(a["docs"] and a["docs"][0].startswith("https://") for a in agents.values())


def test_agents_shadowed_disabled_and_cut_by_the_listing_budget(
    project: Path, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    home = Path.home()
    write_skill(project / ".agents/skills", "dup", description="Project copy. Use for x.")
    write_skill(home / ".agents/skills", "dup", description="User copy. Use for x.")
    write_skill(home / ".claude/skills", "parked", description="Disabled. Use for x.")
    (isolated_home / "registry.json").write_text('{"skills": {"parked": {"enabled": false}}}')
    long = "Does a long thing. " * 50
    for i in range(12):
        write_skill(home / ".claude/skills", f"big-{i:02d}", description=long[:990])
    code, out, err = run_cli(capsys, "agents", "--format", "json")
    assert code == 0, err
    agents = views(out)
    codex = {(s["name"], s["scope"]): s for s in agents["Codex"]["skills"]}
    assert codex[("dup", "project")]["status"] == "seen"
    assert codex[("dup", "user")]["status"] == "shadowed"
    claude = {s["name"]: s for s in agents["Claude Code"]["skills"]}
    assert claude["parked"]["status"] == "disabled"
    statuses = [claude[f"big-{i:02d}"]["status"] for i in range(12)]
    assert statuses[0] == "seen" and statuses[-1] == "cut"
    assert agents["Claude Code"]["listing"]["chars"] > 8_000


def test_agents_text_escapes_folder_names_and_fits_80_columns(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_skill(Path.home() / ".claude/skills", "fine", folder="bad\x1b[2Jname")
    code, out, err = run_cli(capsys, "agents")
    assert code == 0, err
    assert "\x1b" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "Claude Code (installed)" in out


def test_usage_of_an_unknown_session_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    seed(root)
    code, out, _ = run_cli(capsys, "--root", str(root), "usage", "--session", "nope\x1b[2J")
    assert code == 0 and "no session 'nope\\x1b[2J' in the session store" in out
    assert "\x1b" not in out


def test_trigger_view_from_the_silent_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    seed(root)
    argv = ("--root", str(root), "eval", "--triggers", "pdf-forms", "--format", "json")
    code, out, err = run_cli(capsys, *argv)
    data = json.loads(out)
    assert data["schema"] == 1 and data["source"].startswith("silent misses")
    assert [c["query"] for c in data["cases"]] == [f"fill {HOSTILE}"]
    assert code in (0, 1), err


def test_trigger_view_of_an_eval_file_names_the_winner_and_the_missing_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    seed(root)
    write_skill(root, "invoices", description="Merge invoice spreadsheets. Use for invoices.")
    cases = [
        {"query": "fill a pdf form", "should_trigger": True},
        {"query": "merge the invoice spreadsheets", "should_trigger": True},
        {"query": "bake a cake", "should_trigger": False},
    ]
    evals = tmp_path / "evals.json"
    evals.write_text(json.dumps(cases), encoding="utf-8")
    argv = ("--root", str(root), "eval", "--triggers", "pdf-forms", str(evals))
    code, out, _ = run_cli(capsys, *argv, "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["should_trigger"] == 2 and data["triggered"] == 1
    missed = data["cases"][1]
    assert missed["outcome"] == "other_won" and missed["winner"] == "invoices"
    assert {"merge", "invoice", "spreadsheets"} <= set(missed["missing"])
    assert data["cases"][2]["outcome"] == "quiet"
    code, out, _ = run_cli(capsys, *argv)
    assert code == 1 and "won by invoices" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_bad_trigger_eval_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    seed(root)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"query": "x", "should_trigger": "yes"}]', encoding="utf-8")
    code, _, err = run_cli(capsys, "--root", str(root), "eval", "--triggers", "pdf-forms", str(bad))
    assert code == 2 and "entry 1" in err and "INVALID_PARAM" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "--root", str(root), "eval")
    assert code == 2 and "query file" in err
