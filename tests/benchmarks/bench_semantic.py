"""The embedding signal's costs (needs the extra: ``pip install -e '.[semantic]'``).

Usage: python tests/benchmarks/bench_semantic.py [--corpus /work/shared/corpus/skills]
       [--size 10000] [--runs 9] [--keystroke-size 10000] [--part oneshot,keystroke]

Not pass/fail. Two parts:

``oneshot``
    Wall time p50/p95, CPU time p50 and the child's peak RSS (``os.wait4``) of whole
    commands over the corpus (or, with ``--size N``, over N real-sized skills: the
    corpus's ``SKILL.md`` files copied under new names until N, as
    ``bench_first_index.py`` does), side by side in one run, each with another query:

    * ``skilldeck hybrid cold``: ``python -m skilldeck --root R search Q`` (embeddings on)
      with an empty ``SKILLDECK_HOME``: discover, index, embed every skill, store.
    * ``skilldeck hybrid warm``: the same on the filled store: the one-shot path reads the
      saved index and the stored vectors and embeds only the query. Goal: <= 1.0 s and
      <= 350 MB at 372 skills.
    * ``skilldeck lexical warm``: the same with ``--no-semantic``.
    * ``plain MiniLM cosine``: a minimal script that loads the same model, embeds every
      skill's name and description and the query, and prints the top 20 by cosine (what
      a search without stored vectors costs).
    * ``plain MiniLM cosine, vectors from .npy``: the same with the skills' vectors read
      from a ``.npy`` file: the floor of a warm hybrid search.

    The two plain scripts embed the whole catalog, so they run only up to
    :data:`PLAIN_UP_TO` skills. Measured: 372 skills, hybrid warm 0.42 s and 125 MB,
    lexical 0.33 s (load average 3); 10,000 skills (11 runs, load average 1.7-2.4), hybrid
    warm 0.47 s (CPU 0.47 s) and 223 MB (the first warm run writes the vector matrix; 193
    MB after), lexical 0.36 s (CPU 0.37 s), cold 67 s (CPU 108 s) and 376 MB with
    ``OPENBLAS_CORETYPE=Haswell``; without it hybrid warm 0.45 s, lexical 0.34 s, cold 48 s
    (CPU 69 s) and 381 MB. Before the saved second weighting, the vector matrix and the
    ``numpy.ma``-free ranking (same harness, Haswell): hybrid warm 0.59 s, lexical 0.40 s.

``keystroke``
    A synthetic catalog (``bench_search._write_corpus``) of ``--keystroke-size`` skills,
    indexed, with the embedding signal on from stored vectors (random unit rows written
    to an in-memory store first: embedding 10k synthetic skills would take minutes and
    the ranking cost does not depend on the values). Queries typed one character at a
    time, each keystroke one ``index.search(prefix)``: p50/p95 with the signal (query
    embedded every keystroke: the hybrid per-keystroke goal is p95 <= 15 ms) and without
    (the TUI types lexically and adds embeddings at a pause).
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
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_oneshot import _queries, _run, _summary
from bench_search import _pct, _write_corpus

COSINE = r"""
import os, sys, numpy as np, yaml
from skilldeck.core.search.semantic import load_embedder
root, query, cache = sys.argv[1], sys.argv[2], sys.argv[3]
texts, names = [], []
for folder, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    if "SKILL.md" in files:
        with open(os.path.join(folder, "SKILL.md"), "rb") as fh:
            data = fh.read(16384)
        end = data.find(b"\n---", 3)
        try:
            meta = yaml.load(data[4:end], Loader=yaml.CSafeLoader) or {}
        except yaml.YAMLError:
            meta = {}
        name = str(meta.get("name", ""))
        names.append(name)
        texts.append(f"{name.replace('-', ' ')}: {meta.get('description', '')}")
embedder = load_embedder()
if cache != "-" and os.path.exists(cache):
    vectors = np.load(cache)
else:
    vectors = embedder.encode(texts)
    if cache != "-":
        np.save(cache, vectors)
cos = vectors @ embedder.encode([query])[0]
print("\n".join(names[i] for i in np.argsort(-cos)[:20]))
"""


PLAIN_UP_TO = 1000
"""Largest catalog the plain scripts (which embed every skill) run on."""


def real_catalog(corpus: Path, root: Path, size: int) -> None:
    """``size`` real-sized skills under ``root``: the corpus's ``SKILL.md`` files in turn,
    each copy's frontmatter ``name`` given a suffix (so each copy is a new skill)."""
    files = sorted(corpus.rglob("SKILL.md"))
    for i in range(size):
        text = files[i % len(files)].read_text(encoding="utf-8", errors="replace")
        head, sep, rest = text.partition("\nname:")
        line, newline, tail = rest.partition("\n")
        name = line.strip().strip("'\"") or files[i % len(files)].parent.name
        folder = root / f"s{i // 1000:03d}" / f"{name}-{i}"[:100]
        folder.mkdir(parents=True)
        renamed = f"{head}{sep} {name}-{i}{newline}{tail}" if sep else text
        (folder / "SKILL.md").write_text(renamed, encoding="utf-8")


def bench_oneshot(root: Path, runs: int) -> list[dict[str, object]]:
    """The whole-command variants over ``root`` (see the module docstring)."""
    queries = _queries(root, runs + 2)
    skilldeck = [sys.executable, "-m", "skilldeck", "--root", str(root), "search"]
    out = []
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        env = {**os.environ, "NO_COLOR": "1", "SKILLDECK_HOME": str(Path(tmp, "home"))}
        cold = [_run([*skilldeck, queries[0]], env)]
        out.append(_summary("skilldeck hybrid cold (empty store)", cold))
        warm, lexical = [], []
        for q in queries[1 : runs + 1]:  # alternated: a change in the machine's load hits both
            warm.append(_run([*skilldeck, q], env))
            lexical.append(_run([*skilldeck, q, "--no-semantic"], env))
        out.append(_summary("skilldeck hybrid warm (store filled)", warm))
        out.append(_summary("skilldeck lexical warm (--no-semantic)", lexical))
        if sum(1 for _ in root.rglob("SKILL.md")) > PLAIN_UP_TO:
            return out
        cosine = [sys.executable, "-c", COSINE, str(root)]
        plain = [_run([*cosine, q, "-"], env) for q in queries[1 : min(runs, 3) + 1]]
        out.append(_summary("plain MiniLM cosine (embeds every skill)", plain))
        npy = str(Path(tmp, "vectors.npy"))
        _run([*cosine, queries[0], npy], env)
        floor = [_run([*cosine, q, npy], env) for q in queries[1 : runs + 1]]
        out.append(_summary("plain MiniLM cosine (vectors from .npy)", floor))
    return out


def _typed(rng: random.Random, descriptions: list[str], count: int) -> list[str]:
    """Three consecutive words of a description, with a typo in the middle (as
    ``bench_search``'s keystroke queries)."""
    out = []
    for _ in range(count):
        words = rng.choice(descriptions).replace(".", "").split()
        start = rng.randint(0, max(0, len(words) - 3))
        query = " ".join(words[start : start + 3])
        out.append(query[:-3] + query[-2] + query[-3] + query[-1] if len(query) > 6 else query)
    return out


def bench_keystroke(size: int, queries: int) -> dict[str, Any]:
    """Per-keystroke search times at ``size`` skills, embeddings on and off."""
    import numpy as np

    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.search import SearchIndex, vectors
    from skilldeck.core.search.semantic import load_embedder
    from skilldeck.core.store import LocalStore

    with tempfile.TemporaryDirectory(prefix="bench-keys-") as tmp:
        root = Path(tmp)
        descriptions = _write_corpus(root, size)
        skills = [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]
        index = SearchIndex.build(skills, semantic=False)
    embedder = load_embedder()
    index.vector_store = LocalStore.in_memory()
    rows = np.random.default_rng(3).standard_normal((size, embedder.dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    keyed = dict(zip(index.vector_keys(), rows, strict=True))
    vectors.save(index.vector_store, embedder.model_id, keyed)
    assert index.enable_semantic() and index.embedded == 0, index.semantic_error
    typed = _typed(random.Random(5), descriptions, queries)
    result: dict[str, Any] = {"size": size}
    for semantic in (True, False):
        times = []
        for query in typed:
            for i in range(1, len(query) + 1):
                started = time.perf_counter()
                index.search(query[:i], limit=20, semantic=semantic)
                times.append((time.perf_counter() - started) * 1000)
        name = "hybrid" if semantic else "lexical"
        result[f"{name}_p50_ms"] = statistics.median(times)
        result[f"{name}_p95_ms"] = _pct(times, 0.95)
        result["keystrokes"] = len(times)
    embeds = []
    for query in typed:
        started = time.perf_counter()
        embedder.encode([query])
        embeds.append((time.perf_counter() - started) * 1000)
    result["query_embed_p50_ms"] = statistics.median(embeds)
    result["query_embed_p95_ms"] = _pct(embeds, 0.95)
    return result


def _print_oneshot(root: Path, runs: int) -> None:
    count = sum(1 for _ in root.rglob("SKILL.md"))
    print(f"one-shot search over {root} ({count} skills), {runs} runs", flush=True)
    for row in bench_oneshot(root, runs):
        print(
            f"  {row['label']:<45} p50 {row['p50']:.2f} s  p95 {row['p95']:.2f} s  "
            f"CPU p50 {row['cpu']:.2f} s  peak RSS {row['rss']:.0f} MB  ({row['runs']} runs)",
            flush=True,
        )
    print(f"  load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/work/shared/corpus/skills")
    parser.add_argument("--size", type=int, default=0, help="real-sized skills (0: the corpus)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keystroke-size", type=int, default=10_000)
    parser.add_argument("--keystroke-queries", type=int, default=40)
    parser.add_argument("--part", default="oneshot,keystroke")
    args = parser.parse_args()
    parts = set(args.part.split(","))
    if "oneshot" in parts:
        with tempfile.TemporaryDirectory(prefix="bench-semantic-catalog-") as tmp:
            root = Path(args.corpus)
            if args.size:
                real_catalog(root, Path(tmp), args.size)
                root = Path(tmp)
                time.sleep(2.1)  # the fingerprint ignores files changed in the last 2 s
            _print_oneshot(root, args.runs)
    if "keystroke" in parts:
        # a child process: the catalog and index RSS do not mix with the one-shot part
        code = (
            "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_semantic as b; "
            "print(json.dumps(b.bench_keystroke(int(sys.argv[2]), int(sys.argv[3]))))"
        )
        argv = [str(Path(__file__).parent), str(args.keystroke_size), str(args.keystroke_queries)]
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
        )
        print(f"per-keystroke search, {proc.stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
