"""Benchmark of skill search on synthetic catalogs (1k, 10k, 100k skills by default).

Usage: python tests/benchmarks/bench_search.py [--sizes 1000,10000,100000] [--queries 200]
       [--no-compare]

Each size runs in its own subprocess (so peak RSS is that size's own): it writes that many
SKILL.md files (Zipf-distributed pseudo-words, headings, a few KB of body) to a temp dir,
parses them, builds the index (timed, RSS growth and array bytes measured), then times
short queries, long queries and a query typed one character at a time (each keystroke is
one search, as in the TUI). With comparison on (sizes <= 10k by default, up to 100k with
--compare-all) it also times ``rank_bm25.BM25Okapi.get_scores`` on the same tokens. Last,
the index is saved to a local store and loaded back (:mod:`skilldeck.core.search.persist`):
unchanged, then with one skill edited (only its body is read again).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "po",
    "si",
    "va",
    "de",
    "gra",
    "fin",
    "tor",
    "plex",
    "ion",
    "ber",
    "cal",
    "dor",
    "ex",
    "qua",
    "zen",
    "lum",
    "ard",
    "ost",
    "ish",
    "ent",
]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _write_corpus(root: Path, count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 30_000)
    cum = list(itertools.accumulate(1.0 / (i + 1) ** 0.9 for i in range(len(vocab))))

    def pick(n: int) -> list[str]:
        return rng.choices(vocab, cum_weights=cum, k=n)

    def text(n: int) -> str:
        return " ".join(pick(n))

    descriptions = []
    for i in range(count):
        name = "-".join(pick(rng.randint(1, 3))) + f"-{i}"
        description = text(rng.randint(12, 30)) + ". Use when " + text(6) + "."
        descriptions.append(description)
        body_parts = []
        for _ in range(rng.randint(3, 6)):
            body_parts.append(
                f"## {text(rng.randint(2, 4)).title()}\n\n{text(rng.randint(40, 120))}\n"
            )
        folder = root / f"s{i // 1000:03d}" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n"
            f"tags: [{', '.join(pick(3))}]\n---\n"
            f"# {name}\n\n" + "\n".join(body_parts),
            encoding="utf-8",
        )
    return descriptions


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _persisted(index: Any, skills: list[Any], root: Path) -> dict[str, float]:
    """Save to a local store, load back (nothing changed), then one skill edited."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.search.persist import load_or_build
    from skilldeck.core.store import LocalStore

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-search-home-") as home:
        store = LocalStore.open(Path(home))
        t0 = time.perf_counter()
        index.save(store, "bench")
        out["save_s"] = time.perf_counter() - t0
        out["store_mb"] = Path(home, "store.sqlite3").stat().st_size / 1e6
        loads = []
        for _ in range(3):
            t0 = time.perf_counter()
            load_or_build(skills, store, "bench", semantic=False)
            loads.append(time.perf_counter() - t0)
        out["load_s"] = statistics.median(loads)
        edited = skills[len(skills) // 2].path
        edited.write_text(edited.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
        changed = list(skills)
        changed[len(skills) // 2] = parse_skill_file(edited, root=root)
        t0 = time.perf_counter()
        load_or_build(changed, store, "bench", semantic=False)
        out["update_one_s"] = time.perf_counter() - t0
    return out


def run_one(size: int, n_queries: int, compare: bool) -> dict[str, object]:
    """Benchmark one catalog size in this process; return the figures."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.model import Source
    from skilldeck.core.search import SearchIndex

    rng = random.Random(size)
    out: dict[str, object] = {"size": size}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        descriptions = _write_corpus(root, size)
        out["write_s"] = time.perf_counter() - started
        started = time.perf_counter()
        skills = [
            parse_skill_file(p, source=Source.EXPLICIT, root=root)
            for p in sorted(root.rglob("SKILL.md"))
        ]
        out["parse_s"] = time.perf_counter() - started
        gc.collect()
        rss_before = _rss_mb()
        started = time.perf_counter()
        index = SearchIndex.build(skills, semantic=False)
        out["build_s"] = time.perf_counter() - started
        out["build_skills_per_s"] = size / out["build_s"]  # type: ignore[operator]
        gc.collect()
        out["index_rss_mb"] = _rss_mb() - rss_before
        out["index_arrays_mb"] = index.nbytes() / 1e6
        out["body_bytes"] = index.body_bytes

        def sample_words(k: int) -> str:
            words = rng.choice(descriptions).replace(".", "").split()
            start = rng.randint(0, max(0, len(words) - k))
            return " ".join(words[start : start + k])

        short = [sample_words(2) for _ in range(n_queries)]
        long = [sample_words(15) for _ in range(n_queries)]
        for label, queries in (("short", short), ("long", long)):
            times = []
            cpu = []
            for query in queries:
                t0, c0 = time.perf_counter(), time.thread_time()
                index.search(query + " ", limit=20)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.thread_time() - c0) * 1000)
            out[f"{label}_p50_ms"] = statistics.median(times)
            out[f"{label}_p95_ms"] = _pct(times, 0.95)
            out[f"{label}_cpu_p95_ms"] = _pct(cpu, 0.95)
            out[f"{label}_qps"] = 1000 / statistics.mean(times)
        keys = []
        keys_cpu = []
        for query in [sample_words(3) for _ in range(max(10, n_queries // 10))]:
            # a typo in the middle word makes the correction path part of the benchmark
            typed = query[:-3] + query[-2] + query[-3] + query[-1] if len(query) > 6 else query
            for i in range(1, len(typed) + 1):
                t0, c0 = time.perf_counter(), time.thread_time()
                index.search(typed[:i], limit=20)
                keys.append((time.perf_counter() - t0) * 1000)
                keys_cpu.append((time.thread_time() - c0) * 1000)
        out["keystroke_p50_ms"] = statistics.median(keys)
        out["keystroke_p95_ms"] = _pct(keys, 0.95)
        out["keystroke_cpu_p50_ms"] = statistics.median(keys_cpu)
        out["keystroke_cpu_p95_ms"] = _pct(keys_cpu, 0.95)
        out["load_average"] = os.getloadavg()[0]
        out["keystrokes"] = len(keys)
        out.update(_persisted(index, skills, root))
        if compare:
            from rank_bm25 import BM25Okapi

            from skilldeck.core.search import tokenize

            docs = [tokenize(f"{s.name.replace('-', ' ')} {s.description}") for s in skills]
            t0 = time.perf_counter()
            bm25 = BM25Okapi(docs)
            out["rank_bm25_build_s"] = time.perf_counter() - t0
            times = []
            for query in short[: min(30, n_queries)]:
                toks = tokenize(query)
                t0 = time.perf_counter()
                bm25.get_scores(toks)
                times.append((time.perf_counter() - t0) * 1000)
            out["rank_bm25_short_p50_ms"] = statistics.median(times)
            out["rank_bm25_short_p95_ms"] = _pct(times, 0.95)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-compare", action="store_true")
    parser.add_argument("--compare-all", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    args = parser.parse_args()
    if args.one:
        compare = not args.no_compare and (args.compare_all or args.one <= 10_000)
        print(json.dumps(run_one(args.one, args.queries, compare)))
        return 0
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        cmd = [sys.executable, __file__, "--one", str(size), "--queries", str(args.queries)]
        if args.no_compare:
            cmd.append("--no-compare")
        if args.compare_all:
            cmd.append("--compare-all")
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"size {size}: failed\n{done.stderr}", file=sys.stderr)
            return 1
        data = json.loads(done.stdout.strip().splitlines()[-1])
        if args.json:
            print(json.dumps(data))
            continue
        print(f"== {size} skills (body bytes indexed: {data['body_bytes']})")
        print(
            f"  build {data['build_s']:.2f}s ({data['build_skills_per_s']:.0f} skills/s; "
            f"parse {data['parse_s']:.2f}s)  index RSS +{data['index_rss_mb']:.1f} MB, "
            f"arrays {data['index_arrays_mb']:.1f} MB, peak RSS {data['peak_rss_mb']:.0f} MB"
        )
        for label in ("short", "long"):
            print(
                f"  {label:5} query  p50 {data[f'{label}_p50_ms']:.2f} ms  "
                f"p95 {data[f'{label}_p95_ms']:.2f} ms "
                f"(CPU p95 {data[f'{label}_cpu_p95_ms']:.2f})  "
                f"{data[f'{label}_qps']:.0f} queries/s"
            )
        print(
            f"  keystroke    p50 {data['keystroke_p50_ms']:.2f} ms  "
            f"p95 {data['keystroke_p95_ms']:.2f} ms  CPU p50 {data['keystroke_cpu_p50_ms']:.2f} "
            f"p95 {data['keystroke_cpu_p95_ms']:.2f} ms  ({data['keystrokes']} keystrokes, "
            f"load average {data['load_average']:.1f})"
        )
        print(
            f"  persisted    save {data['save_s']:.2f} s, store {data['store_mb']:.0f} MB, "
            f"load (unchanged) {data['load_s'] * 1000:.0f} ms, "
            f"one skill edited {data['update_one_s'] * 1000:.0f} ms"
        )
        if "rank_bm25_short_p50_ms" in data:
            print(
                f"  rank_bm25 BM25Okapi.get_scores (name+description) short "
                f"p50 {data['rank_bm25_short_p50_ms']:.2f} ms  "
                f"p95 {data['rank_bm25_short_p95_ms']:.2f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
