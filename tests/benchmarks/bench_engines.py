"""Side-by-side benchmark of BM25 engines on the same synthetic catalogs (not pass/fail).

Usage: python tests/benchmarks/bench_engines.py [--sizes 1000,10000] [--queries 100]
       [--engines ours,fts5,bm25s,rank_bm25] [--corpus 10000=/tmp/c10k,100000=/tmp/c100k]

Engines, each fed the same skills (the five fields of :mod:`skilldeck.core.search`, bodies
cut at ``body_bytes_for(n)``):

``ours``
    :class:`skilldeck.core.search.SearchIndex` (numpy postings, field weights) and its
    whole ``search``: BM25, coverage, rapidfuzz name and typo signals, prefix completion,
    triggers, fusion. Also its persisted form: save to and load from the local store.
``fts5``
    SQLite FTS5 (in memory, ``detail=column``), ``ORDER BY bm25(fts, 1.5, 3, 2.5, .75, .5)
    LIMIT 20``; OR queries, and the last word as a prefix query (``word*``) for typing.
``bm25s``
    ``bm25s.BM25`` over all fields joined (no field weights), tokenised by our tokenizer;
    ``get_scores`` then the top 20. No prefix queries.
``rank_bm25``
    ``rank_bm25.BM25Okapi`` likewise (the reference the tests compare against).

Each (size, engine) runs in its own subprocess so peak RSS is its own. Build time includes
reading the bodies (the same for all); ``index MB`` is the RSS growth over the build.
Without ``--corpus`` a catalog is written to a temp folder with ``bench_search``'s generator.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_search import _pct, _rss_mb, _write_corpus

ENGINES = ("ours", "fts5", "bm25s", "rank_bm25")


def _load_skills(root: Path) -> list[Any]:
    from skilldeck.core.discovery.frontmatter import parse_skill_file

    return [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]


def _texts(skills: list[Any]) -> list[tuple[str, str, str, str, str]]:
    from skilldeck.core.search.analysis import body_bytes_for, field_texts, read_body

    cut = body_bytes_for(len(skills))
    return [field_texts(s, read_body(s, cut))[:5] for s in skills]  # examples left out


def _queries(skills: list[Any], count: int, seed: int) -> tuple[list[str], list[str]]:
    """Full-word queries (2-3 description words) and typing ones (last word cut to 3-5)."""
    rng = random.Random(seed)
    full, typed = [], []
    for _ in range(count):
        words = [w for w in rng.choice(skills).description.replace(".", "").split() if w]
        k = rng.randint(2, 3)
        start = rng.randint(0, max(0, len(words) - k))
        chosen = words[start : start + k]
        full.append(" ".join(chosen))
        typed.append(" ".join([*chosen[:-1], chosen[-1][: rng.randint(3, 5)]]))
    return full, typed


def _time(fn: Any, queries: list[str]) -> tuple[float, float]:
    times = []
    for query in queries:
        t0 = time.perf_counter()
        fn(query)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), _pct(times, 0.95)


def _ours(skills: list[Any], full: list[str], typed: list[str], out: dict[str, Any]) -> None:
    from skilldeck.core.search import SearchIndex
    from skilldeck.core.search.persist import load_or_build
    from skilldeck.core.store import LocalStore

    t0 = time.perf_counter()
    index = SearchIndex.build(skills, semantic=False)
    out["build_s"] = time.perf_counter() - t0
    out["full"] = _time(lambda q: index.search(q + " ", limit=20), full)
    out["prefix"] = _time(lambda q: index.search(q, limit=20), typed)
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as home:
        store = LocalStore.open(Path(home))
        t0 = time.perf_counter()
        index.save(store, "bench")
        out["save_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        loaded = load_or_build(skills, store, "bench", semantic=False)
        out["load_s"] = time.perf_counter() - t0
        out["store_mb"] = Path(home, "store.sqlite3").stat().st_size / 1e6
        t0 = time.perf_counter()
        loaded.search(full[0], limit=20)
        out["first_query_ms"] = (time.perf_counter() - t0) * 1000


def _fts5(skills: list[Any], full: list[str], typed: list[str], out: dict[str, Any]) -> None:
    from skilldeck.core.search.text import STOPWORDS, words

    t0 = time.perf_counter()
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(name, description, tags, headings, body, "
        "tokenize='unicode61', detail=column)"
    )
    with conn:
        conn.executemany("INSERT INTO fts VALUES (?, ?, ?, ?, ?)", _texts(skills))
    out["build_s"] = time.perf_counter() - t0
    sql = (
        "SELECT rowid FROM fts WHERE fts MATCH ? "
        "ORDER BY bm25(fts, 1.5, 3.0, 2.5, 0.75, 0.5) LIMIT 20"
    )

    def run(query: str, prefix: bool) -> None:
        terms = [f'"{w}"' for w in words(query) if w not in STOPWORDS] or ['""']
        if prefix:
            terms[-1] += "*"
        conn.execute(sql, (" OR ".join(terms),)).fetchall()

    out["full"] = _time(lambda q: run(q, False), full)
    out["prefix"] = _time(lambda q: run(q, True), typed)


def _tokens(skills: list[Any]) -> list[list[str]]:
    from skilldeck.core.search import tokenize

    return [tokenize(" ".join(t)) for t in _texts(skills)]


def _top(scores: Any) -> Any:
    import numpy as np

    return np.argpartition(-scores, 19)[:20] if len(scores) > 20 else scores


def _bm25s(skills: list[Any], full: list[str], typed: list[str], out: dict[str, Any]) -> None:
    import bm25s

    from skilldeck.core.search import tokenize

    t0 = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(_tokens(skills), show_progress=False)
    out["build_s"] = time.perf_counter() - t0
    out["full"] = _time(lambda q: _top(retriever.get_scores(tokenize(q) or ["a"])), full)


def _rank_bm25(skills: list[Any], full: list[str], typed: list[str], out: dict[str, Any]) -> None:
    from rank_bm25 import BM25Okapi

    from skilldeck.core.search import tokenize

    t0 = time.perf_counter()
    bm25 = BM25Okapi(_tokens(skills))
    out["build_s"] = time.perf_counter() - t0
    out["full"] = _time(lambda q: _top(bm25.get_scores(tokenize(q))), full[:30])


def run_one(engine: str, root: Path, n_queries: int) -> dict[str, Any]:
    """Benchmark one engine over the catalog at ``root`` in this process."""
    skills = _load_skills(root)
    full, typed = _queries(skills, n_queries, seed=len(skills))
    out: dict[str, Any] = {"engine": engine, "size": len(skills)}
    before = _rss_mb()
    {"ours": _ours, "fts5": _fts5, "bm25s": _bm25s, "rank_bm25": _rank_bm25}[engine](
        skills, full, typed, out
    )
    out["index_mb"] = _rss_mb() - before
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _row(data: dict[str, Any]) -> str:
    full = data.get("full")
    prefix = data.get("prefix")
    cells = [
        f"{data['size']:,}",
        data["engine"],
        f"{data['build_s']:.2f} s",
        f"{full[0]:.2f} / {full[1]:.2f}" if full else "-",
        f"{prefix[0]:.2f} / {prefix[1]:.2f}" if prefix else "n/a",
        f"{data['index_mb']:.0f}",
        f"{data['peak_rss_mb']:.0f}",
    ]
    if "load_s" in data:
        cells.append(
            f"save {data['save_s']:.2f} s, load {data['load_s'] * 1000:.0f} ms, "
            f"store {data['store_mb']:.0f} MB, first query {data['first_query_ms']:.1f} ms"
        )
    else:
        cells.append("")
    return "| " + " | ".join(cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--corpus", default="", help="SIZE=DIR,... catalogs to reuse")
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], Path(args.one[1]), args.queries)))
        return 0
    given = dict(item.split("=", 1) for item in args.corpus.split(",") if "=" in item)
    print(
        "| skills | engine | build | query p50 / p95 ms | prefix p50 / p95 ms | index MB "
        "| peak RSS MB | persisted |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        with tempfile.TemporaryDirectory(prefix="bench-engines-corpus-") as tmp:
            root = Path(given[str(size)]) if str(size) in given else Path(tmp)
            if str(size) not in given:
                _write_corpus(root, size)
            for engine in args.engines.split(","):
                cmd = [sys.executable, __file__, "--queries", str(args.queries), "--one"]
                done = subprocess.run(
                    [*cmd, engine, str(root)], capture_output=True, text=True, check=False
                )
                if done.returncode != 0:
                    print(f"| {size:,} | {engine} | failed: {done.stderr.strip()[-200:]} |")
                    continue
                print(_row(json.loads(done.stdout.strip().splitlines()[-1])), flush=True)
    print(
        f"\nload average {os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}; "
        f"sqlite {sqlite3.sqlite_version}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
