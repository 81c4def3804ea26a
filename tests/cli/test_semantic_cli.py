"""``skilldeck search`` with the embedding signal on (issue #22): results from the first
and every later run, ``search -`` too, and a missing or damaged model folder answered
lexically with a diagnostic, never a traceback.

The runs with the extra skip without it, unless ``SKILLDECK_REQUIRE_SEMANTIC=1`` (CI
installs the extra: there they must run); the model-folder tests run either way.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import need_semantic_extra, write_skill
from skilldeck.cli.main import main
from skilldeck.core.search import semantic


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill(base, "resume-tailor", "Tailor a resume to a job description.")
    write_skill(base, "grafana-dashboards", "Create Grafana dashboards for metrics.")
    write_skill(base, "terraform-modules", "Build reusable Terraform modules for AWS.")
    when = time.time_ns() - 10_000_000_000  # older than the fingerprint's "too recent"
    for path in [base, *base.rglob("*")]:
        os.utime(path, ns=(when, when))
    return base


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_with_embeddings_finds_skills(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It printed "no skills found (check --root)" for every query."""
    need_semantic_extra()
    for _run_number in range(3):  # cold (embeds the skills), then warm (the saved index)
        code, out, err = _run(capsys, "--root", str(root), "search", "adjust my CV")
        assert code in (0, 1), err
        assert "no skills found" not in out
        assert out.splitlines()[0].split()[2] == "resume-tailor"
        assert "semantic signal off" not in err
    argv = ["--format", "json", "--root", str(root), "search", "my CV", "--explain"]
    code, out, _ = _run(capsys, *argv)
    data = json.loads(out)
    assert data["semantic"] is True
    assert "semantic" in data["results"][0]["signals"]


def test_search_stdin_with_embeddings(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``search -`` returned empty results when the quick saved-index path skipped
    discovery."""
    need_semantic_extra()
    for _run_number in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO("adjust my CV\n\ngrafana metrics\n"))
        argv = ["--root", str(root), "search", "-", "--limit", "2", "--explain"]
        code, out, _ = _run(capsys, *argv)
        assert code == 0
        lines = [json.loads(line) for line in out.splitlines()]
        assert [line["results"][0]["name"] for line in lines] == [
            "resume-tailor",
            "grafana-dashboards",
        ]
        assert all("semantic" in line["results"][0]["signals"] for line in lines)


def test_missing_model_folder_answers_lexically(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    missing = tmp_path / "no-such-model"
    (isolated_home / "config.toml").write_text(
        f'semantic_model_path = "{missing}"\n', encoding="utf-8"
    )
    code, out, err = _run(capsys, "--root", str(root), "search", "grafana", "--explain")
    assert code in (0, 1)
    assert out.splitlines()[0].split()[2] == "grafana-dashboards"
    assert f"semantic model folder {missing} has no config.json" in err
    assert "results are lexical only" in err
    assert "semantic signal off" in out  # --explain says it too
    code, out, _ = _run(capsys, "--format", "json", "--root", str(root), "search", "grafana")
    data = json.loads(out)
    assert data["semantic"] is False and data["results"][0]["name"] == "grafana-dashboards"


def test_damaged_model_folder_is_no_traceback(root: Path, tmp_path: Path) -> None:
    """The real command in a process of its own: a damaged model is one line on stderr."""
    model = tmp_path / "damaged-model"
    model.mkdir()
    config = {"model_type": "bert", "num_attention_heads": 12, "num_hidden_layers": 6}
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (model / "tokenizer.json").write_text("{not json", encoding="utf-8")
    (model / "model.safetensors").write_bytes(b"\x00" * 64)
    env = {**os.environ, "SKILLDECK_SEMANTIC_MODEL_PATH": str(model)}
    proc = subprocess.run(
        [sys.executable, "-m", "skilldeck", "--root", str(root), "search", "grafana"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[0].split()[2] == "grafana-dashboards"
    if semantic.extra_installed():
        assert f"model at {model} failed to load" in proc.stderr
        assert proc.stderr.count("\n") == 1
