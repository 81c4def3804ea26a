"""Search quality on the shared corpus (skips without it) and the semantic extra paths."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import skilldeck.core.search.index as search_index
from conftest import CORPUS, DEV_QUERIES, write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.model import Skill, Source
from skilldeck.core.search import SearchIndex, evaluate, index_ranker, load_queries
from skilldeck.core.search import semantic as semantic_mod
from skilldeck.core.search.evaluate import EvalQuery, Ranked, Ranker, select_split

EXTRA_QUERIES = Path(__file__).resolve().parent.parent / "eval" / "queries-extra.jsonl"
HAVE_SEMANTIC = semantic_mod.extra_installed()
SINGLE_SIGNALS = ("bm25", "coverage", "name")


@lru_cache(maxsize=1)
def _corpus_skills() -> tuple[Skill, ...]:
    paths = sorted(CORPUS.rglob("SKILL.md"))
    return tuple(parse_skill_file(p, source=Source.EXPLICIT, root=CORPUS) for p in paths)


@lru_cache(maxsize=1)
def _lexical_index() -> SearchIndex:
    return SearchIndex.build(list(_corpus_skills()), semantic=False)


def _events(home: Path, name: str) -> list[dict[str, object]]:
    return [
        e
        for f in (home / "telemetry").glob("*.jsonl")
        for line in f.read_text().splitlines()
        if (e := json.loads(line))["event"] == name
    ]


@pytest.mark.parametrize("path", [DEV_QUERIES, EXTRA_QUERIES], ids=["dev", "extra"])
def test_query_files_resolve(corpus_dir: Path, path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} not found")
    ids = {s.rel_id for s in _corpus_skills()}
    queries = load_queries(path)
    assert queries
    assert all(e in ids for q in queries for e in q.expected)


def test_dev_set_lexical_targets(corpus_dir: Path) -> None:
    if not DEV_QUERIES.is_file():
        pytest.skip("dev queries not found")
    report = evaluate(index_ranker(_lexical_index(), semantic=False), load_queries(DEV_QUERIES))
    assert report.overall.recall1 >= 0.80, report.to_dict()
    assert report.kinds["paraphrase"].recall1 >= 0.40, report.to_dict()
    assert report.kinds["typo"].recall1 >= 0.85, report.to_dict()


def test_extra_set_lexical(corpus_dir: Path) -> None:
    report = evaluate(index_ranker(_lexical_index(), semantic=False), load_queries(EXTRA_QUERIES))
    assert report.overall.recall1 >= 0.85, report.to_dict()
    assert report.kinds["typo"].recall1 >= 0.85, report.to_dict()


@pytest.mark.parametrize("path", [DEV_QUERIES, EXTRA_QUERIES], ids=["dev", "extra"])
def test_fusion_never_worse_than_best_single_signal(
    corpus_dir: Path, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not path.is_file():
        pytest.skip(f"{path} not found")
    index = _lexical_index()
    queries = load_queries(path)
    fused = evaluate(index_ranker(index, semantic=False), queries)
    for signal in SINGLE_SIGNALS:
        only = {k: (1.0 if k == signal else 0.0) for k in search_index.WEIGHTS}
        monkeypatch.setattr(search_index, "WEIGHTS", only)
        single = evaluate(index_ranker(index, semantic=False), queries)
        assert fused.overall.recall1 >= single.overall.recall1, signal
        assert fused.overall.mrr >= single.overall.mrr - 1e-9, signal


def test_typing_the_dev_queries_stays_sane(corpus_dir: Path) -> None:
    index = _lexical_index()
    query = "postmortem"
    for i in range(3, len(query) + 1):
        assert index.search(query[:i], limit=5).results, query[:i]
    assert index.search("postmor", limit=1).results[0].skill.name == "postmortem-writing"


# ---------------------------------------------------------------- semantic extra


def test_missing_extra_falls_back_to_lexical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setattr(semantic_mod, "_LOADED", {})
    monkeypatch.setattr(semantic_mod, "bundled_folder", lambda: None)
    root = tmp_path / "s"
    write_skill(root, "alpha", "Plot charts of data. Use for charts.")
    skills = [parse_skill_file(p, root=root) for p in root.rglob("SKILL.md")]
    index = SearchIndex.build(skills, semantic=True)
    assert not index.semantic
    assert index.postings.alt_contrib is None
    assert index.semantic_error and "skilldeck model fetch" in index.semantic_error
    assert index.search("charts").results[0].skill.name == "alpha"
    assert "semantic" not in index.search("charts").results[0].signals
    events = _events(isolated_home, "skill_embedding_fallback")
    assert events and "skilldeck model fetch" in str(events[0]["reason"])


@pytest.mark.skipif(not HAVE_SEMANTIC, reason="semantic extra not installed")
def test_semantic_signal_and_embedding_cache(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "s"
    write_skill(
        root, "resume-tailor", "Tailor a resume to a job description. Use for job applications."
    )
    write_skill(root, "bread", "Bake sourdough bread at home. Use for baking.")
    write_skill(root, "k8s", "Write Kubernetes manifests. Use for cluster deployments.")
    skills = [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]
    index = SearchIndex.build(skills, semantic=True)
    assert index.semantic, index.semantic_error
    top = index.search("adjust my CV for this vacancy").results[0]
    assert top.skill.name == "resume-tailor"
    assert top.signals["semantic"] > 0
    again = SearchIndex.build(skills, semantic=True)  # no store: the in-process cache
    assert again.semantic and index.embedded == 3 and again.embedded == 0
    lexical = index.search("adjust my CV for this vacancy", semantic=False).results
    assert all("semantic" not in r.signals for r in lexical)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SEMANTIC, reason="semantic extra not installed")
@pytest.mark.skipif(
    not os.environ.get("SKILLDECK_SLOW_TESTS"),
    reason="embeds 372 skills: set SKILLDECK_SLOW_TESTS=1",
)
def test_dev_set_semantic_target(corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = SearchIndex.build(list(_corpus_skills()), semantic=True)
    assert index.semantic, index.semantic_error
    queries = load_queries(DEV_QUERIES)
    report = evaluate(index_ranker(index), queries)
    # 0.933 before issue #22 came from weights fitted on these 30 queries; the weights are
    # now chosen on the train split only (held-out goals: test_held_out_hybrid_...)
    assert report.overall.recall1 >= 0.90, report.to_dict()
    for signal in (*SINGLE_SIGNALS, "semantic"):
        only = {k: (1.0 if k == signal else 0.0) for k in search_index.SEMANTIC_WEIGHTS}
        monkeypatch.setattr(search_index, "SEMANTIC_WEIGHTS", only)
        single = evaluate(index_ranker(index), queries)
        assert report.overall.recall1 >= single.overall.recall1, signal
        assert report.overall.mrr >= single.overall.mrr - 1e-9, signal
    # without embeddings, the same index ranks exactly as a lexical-only one
    lexical_only = evaluate(index_ranker(_lexical_index(), semantic=False), queries)
    assert evaluate(index_ranker(index, semantic=False), queries) == lexical_only


# ---------------------------------------------------------------- splits (issue #22)
# Weights and the confident rule were chosen on the train split only; these check the
# held-out split (tests/eval/README.md). Figures: tests/benchmarks/bench_fusion.py.

METATOOL = CORPUS.parent.parent / "eval" / "metatool"


def _split_sets(split: str) -> dict[str, tuple[list[Skill], list[EvalQuery]]]:
    """Catalog and queries of one split, per set; the no-skill requests go with both."""
    if not (METATOOL / "queries-dev.jsonl").is_file() or not DEV_QUERIES.is_file():
        pytest.skip(f"shared evaluation data not found under {CORPUS.parent.parent}")
    negatives = load_queries(METATOOL / "negatives-dev.jsonl")
    corpus = [*load_queries(DEV_QUERIES), *load_queries(EXTRA_QUERIES), *negatives]
    tools = [*load_queries(METATOOL / "queries-dev.jsonl"), *negatives]
    return {
        "corpus": (list(_corpus_skills()), select_split(corpus, split)),
        "metatool": (_metatool_skills(), select_split(tools, split)),
    }


def _metatool_skills() -> list[Skill]:
    root = METATOOL / "skills"
    return [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]


def test_split_counts_match_the_readme(corpus_dir: Path) -> None:
    sets = _split_sets("held-out")
    held = {name: sum(not q.negative for q in qs) for name, (_, qs) in sets.items()}
    negatives = sum(q.negative for q in sets["corpus"][1])
    assert (held["corpus"], held["metatool"], negatives) == (30, 401, 66)


def test_held_out_lexical_targets(corpus_dir: Path) -> None:
    goals = {"corpus": 0.90, "metatool": 0.47}
    for name, (skills, queries) in _split_sets("held-out").items():
        index = _lexical_index() if name == "corpus" else SearchIndex.build(skills, semantic=False)
        report = evaluate(index_ranker(index, semantic=False), queries)
        assert report.overall.recall1 >= goals[name], (name, report.overall)
        assert report.negatives["negative"].rate <= 0.05, (name, report.negatives)
        if name == "corpus":
            assert report.overall.precision >= 0.95, report.overall
            assert report.overall.confident_right_share >= 0.60, report.overall


def _minilm_ranker(skills: list[Skill]) -> Ranker:
    embedder = semantic_mod.load_embedder()
    vectors = embedder.encode([SearchIndex._embed_text(s) for s in skills])
    ids = [s.rel_id for s in skills]

    def rank(query: str, limit: int) -> Ranked:
        cos = vectors @ embedder.encode([query])[0]
        return Ranked([ids[i] for i in np.argsort(-cos, kind="stable")[:limit]])

    return rank


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SEMANTIC, reason="semantic extra not installed")
@pytest.mark.skipif(
    not os.environ.get("SKILLDECK_SLOW_TESTS"),
    reason="embeds 571 skills and 1,400 requests: set SKILLDECK_SLOW_TESTS=1",
)
def test_held_out_hybrid_beats_the_embedding_alone(corpus_dir: Path) -> None:
    # The share of confident-and-right answers is the coverage the calibration gives up to
    # hold precision on unseen requests (issue #34: a lower coverage before a broken
    # precision); the 48-token embedding cut took the corpus from 0.70 to 0.63 while r@1
    # rose to 1.0 and precision stayed 1.0.
    goals = {"corpus": (0.92, 0.95, 0.60), "metatool": (0.60, 0.90, 0.25)}
    for name, (skills, queries) in _split_sets("held-out").items():
        index = SearchIndex.build(skills, semantic=True)
        assert index.semantic, index.semantic_error
        report = evaluate(index_ranker(index), queries)
        alone = evaluate(_minilm_ranker(skills), queries)
        recall, precision, share = goals[name]
        assert report.overall.recall1 >= recall, (name, report.overall)
        assert report.overall.recall1 > alone.overall.recall1, (name, alone.overall)
        assert report.overall.precision >= precision, (name, report.overall)
        assert report.overall.confident_right_share >= share, (name, report.overall)
        assert report.negatives["negative"].rate <= 0.05, (name, report.negatives)
