"""``skilldeck eval``: confident coverage and precision, requests needing no skill, the
agentskills.io trigger-eval format and the train/held-out splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.cli.main import main
from skilldeck.core.search.evaluate import split_of


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill(base, "postmortem-writing", "Write blameless postmortems after incidents.")
    write_skill(base, "terraform-modules", "Build reusable Terraform modules for AWS.")
    write_skill(base, "grafana-dashboards", "Create Grafana dashboards for metrics.")
    return base


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, items: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def test_confident_columns_and_negatives(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = _write(
        tmp_path / "q.jsonl",
        [
            {"query": "write a blameless postmortem", "expected": ["postmortem-writing"]},
            {"query": "grafana dashboards for metrics", "expected": ["grafana-dashboards"]},
            {"query": "bake sourdough bread at home", "expected": []},
        ],
    )
    code, out, _ = _run(capsys, "--root", str(root), "eval", str(queries), "--no-semantic")
    assert code == 0
    assert "confident" in out.splitlines()[0] and "precision" in out.splitlines()[0]
    overall = next(line for line in out.splitlines() if line.startswith("overall"))
    assert overall.split()[1:3] == ["2", "1.000"]
    negative = next(line for line in out.splitlines() if line.startswith("negative"))
    assert negative.split() == ["negative", "1", "0", "0.000"]
    code, out, _ = _run(
        capsys, "--format", "json", "--root", str(root), "eval", str(queries), "--no-semantic"
    )
    data = json.loads(out)
    assert data["overall"]["confident"] == 1.0 and data["overall"]["confident_precision"] == 1.0
    assert data["negatives"] == {"negative": {"queries": 1, "flagged": 0, "rate": 0.0}}
    assert data["split"] == "all"


def test_trigger_eval_file(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evals = tmp_path / "eval_queries.json"
    evals.write_text(
        json.dumps(
            [
                {"query": "write up the incident postmortem", "should_trigger": True},
                {"query": "blameless postmortem after the outage", "should_trigger": True},
                {"query": "build terraform modules for aws", "should_trigger": False},
            ]
        ),
        encoding="utf-8",
    )
    code, _, err = _run(capsys, "--root", str(root), "eval", str(evals), "--no-semantic")
    assert code == 2 and "--skill" in err
    code, out, _ = _run(
        capsys,
        "--format",
        "json",
        "--root",
        str(root),
        "eval",
        str(evals),
        "--skill",
        "postmortem-writing",
        "--no-semantic",
    )
    assert code == 0
    data = json.loads(out)
    assert data["kinds"]["should-trigger"]["recall@1"] == 1.0
    assert data["negatives"]["should-not-trigger"]["flagged"] == 0
    assert not data["unknown_ids"]


def test_split_option(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = [f"grafana dashboards number {i}" for i in range(12)]
    queries = _write(
        tmp_path / "q.jsonl", [{"query": t, "expected": ["grafana-dashboards"]} for t in texts]
    )
    counts = {}
    for split in ("train", "held-out"):
        code, out, _ = _run(
            capsys,
            "--format",
            "json",
            "--root",
            str(root),
            "eval",
            str(queries),
            "--split",
            split,
            "--no-semantic",
        )
        assert code == 0
        counts[split] = json.loads(out)["overall"]["queries"]
    assert counts["train"] == sum(split_of(t) == "train" for t in texts)
    assert counts["train"] + counts["held-out"] == len(texts)


def test_folds_report_mean_spread_and_examples_from_training_only(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items: list[dict[str, object]] = [
        {"query": f"{w} blameless postmortem", "expected": ["postmortem-writing"]}
        for w in ("write", "draft", "review", "plan", "share", "edit")
    ]
    items.append({"query": "bake sourdough bread at home", "expected": []})
    queries = _write(tmp_path / "q.jsonl", items)
    before = {p: p.read_bytes() for p in root.rglob("SKILL.md")}
    base = ("--format", "json", "--root", str(root), "eval", str(queries), "--no-semantic")
    code, out, _ = _run(capsys, *base, "--folds", "3", "--with-examples")
    assert code == 0
    data = json.loads(out)
    assert data["folds"] == 3 and data["with_examples"] is True
    assert len(data["recall@1"]["per_fold"]) == 3 and sum(data["queries"]) == 6
    assert data["recall@1"]["mean"] == 1.0 and data["recall@1"]["spread"] == 0.0
    assert {p: p.read_bytes() for p in root.rglob("SKILL.md")} == before  # copies only
    code, out, _ = _run(capsys, "--root", str(root), "eval", str(queries), "--folds", "3")
    assert code == 0 and "recall@1" in out and "fold 3" in out
    code, _, err = _run(capsys, *base, "--folds", "1")
    assert code != 0 and "at least 2 folds" in err


def test_misses_become_examples_only_when_asked(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = _write(
        tmp_path / "q.jsonl",
        [
            {"query": "what went wrong in last night's outage", "expected": ["postmortem-writing"]},
            {"query": "grafana dashboards for metrics", "expected": ["grafana-dashboards"]},
        ],
    )
    target = root / "postmortem-writing" / "SKILL.md"
    original = target.read_bytes()
    base = ("--root", str(root), "eval", str(queries), "--no-semantic")
    assert _run(capsys, *base, "--misses")[0] == 0
    assert target.read_bytes() == original  # nothing is written unless asked
    code, out, _ = _run(capsys, *base, "--add-misses-as-examples")
    assert code == 0 and f"added 1 example(s) to {target}" in out
    assert "what went wrong in last night's outage" in target.read_text(encoding="utf-8")
    assert (root / "grafana-dashboards" / "SKILL.md").read_text().count("examples") == 0
    # now an example: the request is found through it
    code, out, _ = _run(capsys, "--format", "json", *base)
    assert json.loads(out)["overall"]["recall@1"] == 1.0
