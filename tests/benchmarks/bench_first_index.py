"""The first hybrid index of a catalog of real-sized skills: how long until lexical answers,
how long until embeddings join (needs the semantic extra; not pass/fail).

Usage: python tests/benchmarks/bench_first_index.py [--shared DIR] [--size 1000] [--workers N]

The catalog is the shared corpus's skills (372 real ones) repeated under new names until
``--size`` (each copy's name differs, so each is embedded: nothing is cached), indexed
from an empty in-memory store. Prints the lexical build, the embedding of every skill's
name and description cut at ``TEXT_TOKENS`` (what the index embeds: the body is not
embedded), the texts per second, the CPU time, a linear extrapolation to 10,000 skills,
the process's peak RSS and the load average before and after (other work on the machine
slows the wall time: on two idle cores the wall time is about the CPU time over two).
``--workers`` sets the embedding threads (default: one per core, at most 4).

It prints the OpenBLAS kernel too: OpenBLAS picks it when numpy loads, and
``OPENBLAS_CORETYPE`` overrides its choice (this project's sessions set ``Haswell``; run
with ``env -u OPENBLAS_CORETYPE`` for OpenBLAS's own, SkylakeX on this AMD EPYC).

Measured on this 2-core machine, 2 threads, 10,000 skills: Haswell kernel 102-108 s CPU,
60 s wall at load average 1.6-2.1 (73 s at 1.3-2.5), 335-369 MB peak, lexical index
2.7-2.9 s; SkylakeX 67-69 s CPU.
1,000 skills, same load, before / after this round's cuts (44 tokens instead of 48, a GELU
of fewer passes): Haswell 12.0-12.1 / 10.5-10.9 s CPU, SkylakeX 8.2 / 7.3 s. The round
before: 10,000 skills 126 s CPU / 224 s wall at load average 6-8 (21 s CPU per 1,000
before the cut at 48 tokens).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fusion import _shared, _skills


def main() -> None:
    """Build, embed, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=None)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=None, help="embedding threads")
    args = parser.parse_args()
    from skilldeck.core.search import SearchIndex, minilm
    from skilldeck.core.search.semantic import load_embedder
    from skilldeck.core.store import LocalStore

    base = _skills(_shared(args.shared) / "corpus" / "skills")
    skills = [
        dataclasses.replace(base[i % len(base)], name=f"{base[i % len(base)].name}-{i}")
        for i in range(args.size)
    ]
    if args.workers:
        minilm.WORKERS = args.workers
    load_embedder()  # the model's load is not part of an index build
    load = os.getloadavg()[0]
    started = time.perf_counter()
    index = SearchIndex.build(skills, semantic=False)
    lexical = time.perf_counter() - started
    index.vector_store = LocalStore(None)
    started, cpu = time.perf_counter(), time.process_time()
    if not index.enable_semantic():
        sys.exit(f"no embeddings: {index.semantic_error}")
    vectors, cpu = time.perf_counter() - started, time.process_time() - cpu
    rate = index.embedded / vectors
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.size} skills: lexical index {lexical:.1f} s (answers from here)")
    print(
        f"  embeddings {vectors:.1f} s ({cpu:.1f} s CPU, {minilm.WORKERS} threads, "
        f"OpenBLAS kernel {_kernel()}) for {index.embedded} texts ({rate:.0f}/s)"
    )
    per_10k = 10_000 / index.embedded
    print(
        f"  10,000 skills at that rate: {vectors * per_10k:.0f} s ({cpu * per_10k:.0f} s CPU); "
        f"peak RSS {peak:.0f} MB; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after"
    )


def _kernel() -> str:
    """The kernel OpenBLAS runs (``OPENBLAS_CORETYPE`` overrides its own choice)."""
    from threadpoolctl import threadpool_info

    found = [str(i.get("architecture")) for i in threadpool_info() if i.get("architecture")]
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"{'/'.join(found) or 'unknown'}{f' (OPENBLAS_CORETYPE={forced})' if forced else ''}"


if __name__ == "__main__":
    main()
