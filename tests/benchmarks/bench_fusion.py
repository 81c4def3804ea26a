"""Ranking quality of the fusion against single rankers, per split (not pass/fail).

Usage: python tests/benchmarks/bench_fusion.py [--shared DIR] [--rankers
       lexical,hybrid,minilm,rank_bm25] [--sets corpus,metatool] [--json]

Sets (``DIR`` is ``SKILLDECK_SHARED`` or ``shared/`` beside the repository; see
``tests/eval/README.md`` for the files and the train/held-out rule):

``corpus``
    ``DIR/eval/queries-dev.jsonl`` and ``tests/eval/queries-extra.jsonl`` over
    ``DIR/corpus/skills`` (372 skills).
``metatool``
    ``DIR/eval/metatool/queries-dev.jsonl`` over ``DIR/eval/metatool/skills`` (199 tools).

The 150 requests of ``DIR/eval/metatool/negatives-dev.jsonl`` need no skill; they are run
against both catalogs and counted when the top result is flagged confident.

Rankers:

``lexical``
    :meth:`SearchIndex.search` with ``semantic=False``.
``hybrid``
    :meth:`SearchIndex.search` with embeddings on (needs the semantic extra).
``minilm``
    Plain cosine between the query's and each skill's embedding (the same model and skill
    text as the index), best first: the embedding model alone. Never confident.
``rank_bm25``
    ``rank_bm25.BM25Okapi`` over all five fields joined, tokenised by our tokenizer.
    Never confident.

For each set, split and ranker: recall@1, recall@3, MRR@10, and for the rankers with a
``confident`` flag its coverage (share of positives flagged), its precision (share of
flagged tops that are right) and the flagged share of the negatives.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
RANKERS = ("lexical", "hybrid", "minilm", "rank_bm25")
SETS = ("corpus", "metatool")


def _shared(arg: str | None) -> Path:
    return Path(arg or os.environ.get("SKILLDECK_SHARED") or REPO.parent / "shared").expanduser()


def _skills(root: Path) -> list[Any]:
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.model import Source

    paths = sorted(root.rglob("SKILL.md"))
    return [parse_skill_file(p, source=Source.EXPLICIT, root=root) for p in paths]


def _sets(shared: Path) -> dict[str, tuple[Path, list[Path]]]:
    return {
        "corpus": (
            shared / "corpus" / "skills",
            [shared / "eval" / "queries-dev.jsonl", REPO / "tests/eval/queries-extra.jsonl"],
        ),
        "metatool": (
            shared / "eval" / "metatool" / "skills",
            [shared / "eval" / "metatool" / "queries-dev.jsonl"],
        ),
    }


def _minilm(skills: list[Any]) -> Callable[[str, int], Any]:
    from skilldeck.core.search.evaluate import Ranked
    from skilldeck.core.search.index import SearchIndex
    from skilldeck.core.search.semantic import load_embedder

    embedder = load_embedder()
    vectors = embedder.encode([SearchIndex._embed_text(s) for s in skills])
    ids = [s.rel_id for s in skills]

    def rank(query: str, limit: int) -> Ranked:
        cos = vectors @ embedder.encode([query])[0]
        order = np.argsort(-cos, kind="stable")[:limit]
        return Ranked([ids[i] for i in order])

    return rank


def _rank_bm25(skills: list[Any]) -> Callable[[str, int], Any]:
    from rank_bm25 import BM25Okapi

    from skilldeck.core.search import tokenize
    from skilldeck.core.search.analysis import body_bytes_for, field_texts, read_body
    from skilldeck.core.search.evaluate import Ranked

    cut = body_bytes_for(len(skills))
    docs = [tokenize(" ".join(field_texts(s, read_body(s, cut)))) for s in skills]
    bm25 = BM25Okapi(docs)
    ids = [s.rel_id for s in skills]

    def rank(query: str, limit: int) -> Ranked:
        scores = bm25.get_scores(tokenize(query))
        order = np.argsort(-scores, kind="stable")[:limit]
        return Ranked([ids[i] for i in order if scores[i] > 0])

    return rank


def _rankers(skills: list[Any], wanted: list[str]) -> dict[str, Callable[[str, int], Any]]:
    from skilldeck.core.search import SearchIndex, index_ranker

    out: dict[str, Callable[[str, int], Any]] = {}
    if "lexical" in wanted:
        out["lexical"] = index_ranker(SearchIndex.build(skills, semantic=False), semantic=False)
    if "hybrid" in wanted or "minilm" in wanted:
        hybrid = SearchIndex.build(skills, semantic=True)
        if not hybrid.semantic:
            print(f"no embeddings: {hybrid.semantic_error}", file=sys.stderr)
        else:
            if "hybrid" in wanted:
                out["hybrid"] = index_ranker(hybrid)
            if "minilm" in wanted:
                out["minilm"] = _minilm(skills)
    if "rank_bm25" in wanted:
        out["rank_bm25"] = _rank_bm25(skills)
    return out


def run(shared: Path, wanted: list[str], sets: list[str]) -> dict[str, Any]:
    """Every (set, split, ranker) report, as JSON-ready dicts."""
    from skilldeck.core.search.evaluate import SPLITS, evaluate, load_queries, select_split

    negatives = load_queries(shared / "eval" / "metatool" / "negatives-dev.jsonl")
    out: dict[str, Any] = {}
    for name in sets:
        root, files = _sets(shared)[name]
        skills = _skills(root)
        queries = [q for f in files for q in load_queries(f)]
        for ranker_name, ranker in _rankers(skills, wanted).items():
            for split in SPLITS:
                chosen = select_split(queries + negatives, split)
                started = time.perf_counter()
                report = evaluate(ranker, chosen)
                data = report.to_dict()
                data["seconds"] = round(time.perf_counter() - started, 2)
                data.pop("misses")
                out[f"{name}/{split}/{ranker_name}"] = data
    return out


def _print(results: dict[str, Any]) -> None:
    head = f"{'set/split/ranker':34} {'n':>5} {'r@1':>6} {'r@3':>6} {'MRR':>6}"
    print(f"{head} {'conf':>6} {'prec':>6} {'c&r':>6} {'neg':>5} {'neg%':>6}")
    for key, data in results.items():
        o = data["overall"]
        neg = data["negatives"].get("negative", {"queries": 0, "rate": 0.0})
        print(
            f"{key:34} {o['queries']:>5} {o['recall@1']:>6.3f} {o['recall@3']:>6.3f} "
            f"{o['mrr@10']:>6.3f} {o['confident']:>6.3f} {o['confident_precision']:>6.3f} "
            f"{o['confident_right']:>6.3f} {neg['queries']:>5} {neg['rate']:>6.3f}"
        )


def main() -> None:
    """Parse arguments, run, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=None, help="the shared folder")
    parser.add_argument("--rankers", default=",".join(RANKERS))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    shared = _shared(args.shared)
    if not (shared / "eval").is_dir():
        sys.exit(f"shared evaluation data not found at {shared} (set SKILLDECK_SHARED)")
    results = run(shared, args.rankers.split(","), args.sets.split(","))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)


if __name__ == "__main__":
    main()
