"""What a user waits for: the whole ``skilldeck --root R search Q`` command, end to end.

Usage: python tests/benchmarks/bench_oneshot.py [--sizes 1000,10000] [--runs 7]
       [--cold-runs 2] [--corpus 10000=/tmp/c10k,100000=/tmp/c100k] [--with-100k]

Not pass/fail: it prints wall time p50/p95 and the child's peak RSS (``os.wait4``, the
child alone) and CPU time p50 (its user + system time) for, side by side in the same run
and on the same catalog:

``skilldeck cold``
    ``python -m skilldeck --root R search Q --no-semantic`` with an empty ``SKILLDECK_HOME``
    (discover, parse, index, save, query), a fresh home each run.
``skilldeck warm``
    The same command again on the home the cold runs left (store filled): what every
    later search costs. It takes the one-shot path (``Workspace.search`` before any
    discovery): walk and fingerprint the roots, answer from the saved index, load only
    the shown skills.
``plain pipeline``
    A minimal script: find every SKILL.md, ``yaml.CSafeLoader`` over its frontmatter,
    ``rank_bm25.BM25Okapi`` over name + description tokens, one query, top 20 printed. The
    goal is warm <= 0.4x this.
``bm25s pipeline``
    The same with ``bm25s`` instead of rank-bm25 (when installed).
``... bodies too``
    Both pipelines indexing what the cold build indexes (name, description, tags, body
    cut at ``body_bytes_for(n)``): the cold figure's side-by-side.

Each run uses another query (two or three words from the catalog's descriptions). 100k is
measured only with ``--with-100k`` (its cold run takes minutes).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_search import _pct, _write_corpus

PLAIN = r"""
import os, re, sys, yaml
from rank_bm25 import BM25Okapi
root, query = sys.argv[1], sys.argv[2]
word = re.compile(r"[a-z0-9]+")
docs, names = [], []
for folder, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    if "SKILL.md" in files:
        with open(os.path.join(folder, "SKILL.md"), "rb") as fh:
            data = fh.read(16384)
        end = data.find(b"\n---", 3)
        meta = yaml.load(data[4:end], Loader=yaml.CSafeLoader) or {}
        text = f"{meta.get('name', '')} {meta.get('description', '')}".lower()
        docs.append(word.findall(text.replace("-", " ")))
        names.append(str(meta.get("name")))
bm25 = BM25Okapi(docs)
scores = bm25.get_scores(word.findall(query.lower()))
best = sorted(range(len(names)), key=lambda i: -scores[i])[:20]
print("\n".join(names[i] for i in best))
"""

BM25S = PLAIN.replace("from rank_bm25 import BM25Okapi", "import bm25s").replace(
    "bm25 = BM25Okapi(docs)\nscores = bm25.get_scores(word.findall(query.lower()))",
    "bm25 = bm25s.BM25()\nbm25.index(docs, show_progress=False)\n"
    "scores = bm25.get_scores(word.findall(query.lower()) or ['a'])",
)


_TEXT = "text = f\"{meta.get('name', '')} {meta.get('description', '')}\".lower()"
_WITH_BODY = (
    "text = f\"{meta.get('name', '')} {meta.get('description', '')} {meta.get('tags', '')} "
    "{data[end + 4 : end + 4 + int(sys.argv[3])].decode('utf-8', 'replace')}\".lower()"
)
assert _TEXT in PLAIN
PLAIN_BODIES = PLAIN.replace(_TEXT, _WITH_BODY)
BM25S_BODIES = BM25S.replace(_TEXT, _WITH_BODY)
"""The two pipelines indexing what a cold build indexes: name, description, tags and the
body cut at ``body_bytes_for(n)`` (argv[3]). Side by side with ``skilldeck cold``: the
same text through well-kept libraries, with no validation, store, typo or prefix
structures."""


def _queries(root: Path, count: int) -> list[str]:
    """Two or three consecutive words from the descriptions of random skills."""
    rng = random.Random(11)
    files = sorted(root.rglob("SKILL.md"))
    out = []
    for path in rng.sample(files, min(count, len(files))):
        text = path.read_text(encoding="utf-8", errors="replace")
        line = next((ln for ln in text.splitlines() if ln.startswith("description:")), "")
        words = line.removeprefix("description:").replace(".", "").split()[:12] or ["skill"]
        k = rng.randint(2, 3)
        start = rng.randint(0, max(0, len(words) - k))
        out.append(" ".join(words[start : start + k]))
    return out


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: "no confident match"
        raise RuntimeError(f"{cmd[:4]} failed: {err[-400:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _summary(label: str, runs: list[tuple[float, float, float]]) -> dict[str, object]:
    walls = [r[0] for r in runs]
    return {
        "label": label,
        "p50": statistics.median(walls),
        "p95": _pct(walls, 0.95),
        "rss": max(r[1] for r in runs),
        "cpu": statistics.median(r[2] for r in runs),
        "runs": len(runs),
    }


def bench_size(root: Path, runs: int, cold_runs: int) -> list[dict[str, object]]:
    """Every variant over the catalog at ``root``; one summary per variant."""
    queries = _queries(root, max(runs, cold_runs))
    skilldeck = [sys.executable, "-m", "skilldeck", "--root", str(root), "search"]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-oneshot-") as tmp:
        env = {**os.environ, "NO_COLOR": "1"}
        cold = []
        home = Path(tmp, "home-0")
        for i in range(cold_runs):
            home = Path(tmp, f"home-{i}")
            cold_env = {**env, "SKILLDECK_HOME": str(home)}
            cold.append(_run([*skilldeck, queries[i], "--no-semantic"], cold_env))
        results.append(_summary("skilldeck cold (empty store)", cold))
        warm_env = {**env, "SKILLDECK_HOME": str(home)}
        warm = [_run([*skilldeck, q, "--no-semantic"], warm_env) for q in queries[:runs]]
        results.append(_summary("skilldeck warm (store filled)", warm))
        plain = [_run([sys.executable, "-c", PLAIN, str(root), q], env) for q in queries[:runs]]
        results.append(_summary("plain pipeline (CSafeLoader + rank-bm25)", plain))
        try:
            import bm25s  # noqa: F401
        except ImportError:
            pass
        else:
            fast = [_run([sys.executable, "-c", BM25S, str(root), q], env) for q in queries[:runs]]
            results.append(_summary("bm25s pipeline (CSafeLoader + bm25s)", fast))
        results.extend(_with_bodies(root, queries[:cold_runs], env))
    return results


def _with_bodies(root: Path, queries: list[str], env: dict[str, str]) -> list[dict[str, object]]:
    """The pipelines over bodies too (compare with ``skilldeck cold``)."""
    from skilldeck.core.search.analysis import body_bytes_for

    cap = str(body_bytes_for(sum(1 for _ in root.rglob("SKILL.md"))))
    out = []
    for label, script in (("rank-bm25", PLAIN_BODIES), ("bm25s", BM25S_BODIES)):
        if label == "bm25s":
            try:
                import bm25s  # noqa: F401
            except ImportError:
                continue
        runs = [_run([sys.executable, "-c", script, str(root), q, cap], env) for q in queries]
        out.append(_summary(f"{label} pipeline, bodies too (compare with cold)", runs))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cold-runs", type=int, default=2)
    parser.add_argument("--corpus", default="", help="SIZE=DIR,... catalogs to reuse")
    parser.add_argument("--with-100k", action="store_true", help="also 100,000 skills")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.corpus.split(",") if "=" in item)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.with_100k and 100_000 not in sizes:
        sizes.append(100_000)
    print("| skills | command | p50 s | p95 s | CPU p50 s | peak RSS MB | runs | vs plain |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-oneshot-corpus-") as tmp:
            root = Path(given[str(size)]) if str(size) in given else Path(tmp)
            if str(size) not in given:
                _write_corpus(root, size)
                # a catalog fingerprint ignores files changed in the last 2 s (they may
                # change again within one timestamp tick): warm runs measure the steady state
                time.sleep(2.1)
            rows = bench_size(root, args.runs, args.cold_runs)
            plain = next(r for r in rows if str(r["label"]).startswith("plain"))
            for row in rows:
                ratio = float(row["p50"]) / float(plain["p50"])  # type: ignore[arg-type]
                print(
                    f"| {size:,} | {row['label']} | {row['p50']:.3f} | {row['p95']:.3f} "
                    f"| {row['cpu']:.3f} | {row['rss']:.0f} | {row['runs']} | {ratio:.2f}x |",
                    flush=True,
                )
    print(f"\nload average {os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
