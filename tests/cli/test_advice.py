"""The core says what happened and gives a reason code; the command line words its own
advice (its flags and commands), which the core never names."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.cli.advice import advice, with_advice
from skilldeck.cli.main import main
from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution import execute
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace


def test_exec_off_core_explains_the_cli_advises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "demo")
    (root / "demo" / "run.py").write_text("print('x')\n", encoding="utf-8")
    ws = Workspace(Settings(semantic=False), [root], store=LocalStore.in_memory())
    ws.discover()
    with pytest.raises(SkilldeckError) as caught:
        execute(Settings(semantic=False), ws.resolve("demo"), "run.py", [])
    core = caught.value
    assert core.details["reason"] == "exec_disabled" and "skills_exec" not in core.message
    assert "SKILLDECK_SKILLS_EXEC=1" in with_advice(core)
    code = main(["--root", str(root), "run", "demo", "run.py"])
    err = capsys.readouterr().err
    assert code == 125 and "set skills_exec = true in config.toml" in err


def test_advice_needs_its_details_and_never_guesses() -> None:
    approval = SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        "script demo/run.py waits for the operator's approval in session s1",
        reason="requires_approval",
        session="s1",
        kind="script",
        ref="demo/run.py",
    )
    assert advice(approval) == "skilldeck session approve s1 --script demo/run.py"
    partial = SkilldeckError(ErrorCode.PERMISSION_DENIED, "x", reason="requires_approval")
    assert advice(partial) == ""  # a detail is missing: no half-filled command
    assert with_advice(SkilldeckError(ErrorCode.NOT_FOUND, "gone")) == "gone"
