"""``skilldeck search`` and ``skilldeck eval`` through the real CLI entry point."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEV_QUERIES, write_skill
from skilldeck.cli.main import main


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    write_skill(
        base,
        "postmortem-writing",
        "Write blameless postmortems after incidents.",
        body="# Postmortem\n\n## Timeline\n",
    )
    write_skill(base, "terraform-modules", "Build reusable Terraform modules for AWS.")
    write_skill(base, "grafana-dashboards", "Create Grafana dashboards for metrics.")
    write_skill(
        base,
        "grafana-dashboards",
        "Older copy of the Grafana dashboards skill.",
        folder="old/grafana-dashboards",
    )
    return base


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_text(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--root", str(root), "search", "postmortum", "--no-semantic")
    assert code == 0
    assert out.splitlines()[0].split()[2] == "postmortem-writing"


def test_search_explain_text(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "search", "terraform", "aws", "--explain", "--no-semantic", "--root", str(root)
    )
    assert code == 0
    assert "signals: bm25=" in out and "description: terraform, aws" in out


def test_search_json(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "--format",
        "json",
        "--root",
        str(root),
        "search",
        "grafana",
        "--limit",
        "1",
        "--explain",
        "--no-semantic",
    )
    assert code == 0
    data = json.loads(out)
    assert data["query"] == "grafana"
    assert len(data["results"]) == 1
    result = data["results"][0]
    assert result["name"] == "grafana-dashboards" and 0 <= result["score"] <= 1
    assert Path(result["path"]).is_file()
    assert "signals" in result and "matched" in result
    assert isinstance(data["confident"], bool) and isinstance(data["clustered"], bool)


def test_search_jsonl_one_result_per_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "--format",
        "jsonl",
        "--root",
        str(root),
        "search",
        "grafana",
        "terraform",
        "--no-semantic",
    )
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) >= 2 and all("name" in line and "score" in line for line in lines)


def test_search_reads_queries_from_stdin(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("terraform modules\n\ngrafana dash\n"))
    code, out, _ = _run(capsys, "--root", str(root), "search", "-", "--limit", "2", "--no-semantic")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["query"] for line in lines] == ["terraform modules", "grafana dash"]
    assert lines[0]["results"][0]["name"] == "terraform-modules"
    assert {"name", "path", "score"} <= set(lines[1]["results"][0])


def test_search_stdin_in_a_subprocess(root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skilldeck", "--root", str(root), "search", "-", "--no-semantic"],
        input="grafana\npostmortem\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["results"][0]["name"] for line in lines] == [
        "grafana-dashboards",
        "postmortem-writing",
    ]


def test_search_agent_view(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "--root", str(root), "search", "--agent", "quantum", "zebra", "--no-semantic"
    )
    assert code == 0
    code, out, _ = _run(
        capsys,
        "--root",
        str(root),
        "--format",
        "json",
        "search",
        "--agent",
        "write",
        "a",
        "blameless",
        "postmortem",
        "--no-semantic",
    )
    data = json.loads(out)
    assert len(data["results"]) <= 3 and data["message"]


def test_search_shows_only_winning_copy(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(
        capsys, "--format", "json", "--root", str(root), "search", "grafana", "--no-semantic"
    )
    names = [r["name"] for r in json.loads(out)["results"]]
    assert names.count("grafana-dashboards") == 1


def test_search_bad_options(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "--root", str(root), "search", "x", "--limit", "0")[0] == 2
    assert _run(capsys, "--root", str(root), "--format", "xml", "search", "x")[0] == 2
    assert _run(capsys, "--root", str(root / "nope"), "search", "x")[0] == 2


def test_eval_text_and_json(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"query": "postmortem", "expected": ["postmortem-writing"], "kind": "keyword"},
                {"query": "terrafrom", "expected": ["terraform-modules"], "kind": "typo"},
                {
                    "query": "older copy grafana",
                    "expected": ["old/grafana-dashboards"],
                    "kind": "keyword",
                },
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, "--root", str(root), "eval", str(queries), "--no-semantic")
    assert code == 0
    assert "recall@1" in out and "MRR@10" in out
    overall = next(line for line in out.splitlines() if line.startswith("overall"))
    assert overall.split()[1:3] == ["3", "1.000"]
    code, out, _ = _run(
        capsys,
        "--format",
        "json",
        "--root",
        str(root),
        "eval",
        str(queries),
        "--limit",
        "5",
        "--no-semantic",
    )
    data = json.loads(out)
    assert data["overall"]["recall@1"] == 1.0 and data["limit"] == 5
    assert set(data["kinds"]) == {"keyword", "typo"}


def test_eval_bad_files(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "--root", str(root), "eval", str(tmp_path / "missing.jsonl"))[0] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": 1}\n', encoding="utf-8")
    code, _, err = _run(capsys, "--root", str(root), "eval", str(bad), "--no-semantic")
    assert code == 2 and "bad.jsonl:1" in err


def test_eval_dev_set_meets_targets(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not DEV_QUERIES.is_file():
        pytest.skip("dev queries not found")
    code, out, _ = _run(
        capsys,
        "--format",
        "json",
        "--root",
        str(corpus_dir),
        "eval",
        str(DEV_QUERIES),
        "--no-semantic",
    )
    assert code == 0
    data = json.loads(out)
    assert data["overall"]["recall@1"] >= 0.80
    assert data["kinds"]["paraphrase"]["recall@1"] >= 0.40
    assert data["kinds"]["typo"]["recall@1"] >= 0.85
    assert not data["unknown_ids"]
