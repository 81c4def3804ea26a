"""Benchmark: cold and warm discovery of N synthetic skills.

Usage::

    python tests/benchmarks/bench_discovery.py [--sizes 1000,10000,100000] [--repeat 5]
        [--keep DIR] [--profile]

Each size runs in its own child process (so peak RSS is per size). *Cold* means no
metadata cache (every SKILL.md parsed, cache written); *warm* means the cache from the
previous run is used, in the same process right after it; *new proc* is a warm discovery
alone in a new process (what a command like ``skilldeck list`` meets). The OS page cache
is warm in all cases (files were just written).
Goals on the 2-core reference machine: cold 10k < 1 s, warm 10k < 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "pdf",
    "docx",
    "chart",
    "table",
    "deploy",
    "kubernetes",
    "review",
    "lint",
    "test",
    "commit",
    "changelog",
    "invoice",
    "slack",
    "email",
    "calendar",
    "spreadsheet",
    "csv",
    "parquet",
    "sql",
    "migration",
    "schema",
    "api",
    "graphql",
    "docker",
    "terraform",
    "image",
    "resize",
    "audio",
    "transcript",
    "translate",
    "summary",
    "research",
    "paper",
    "citation",
    "budget",
    "forecast",
]


def generate(root: Path, n: int) -> None:
    """Write ``n`` skills under ``root/group-XXX/skill-NNNNNN/SKILL.md``."""
    for i in range(n):
        group = root / f"group-{i // 1000:03d}"
        folder = group / f"skill-{i:06d}"
        os.makedirs(folder, exist_ok=True)
        a, b, c = WORDS[i % len(WORDS)], WORDS[(i * 7) % len(WORDS)], WORDS[(i * 13) % len(WORDS)]
        extra = ""
        if i % 3 == 0:
            extra += "allowed-tools: Read Grep Bash(git log:*)\n"
        if i % 4 == 0:
            extra += f'metadata:\n  version: "1.{i % 10}"\n  tags: [{a}, {b}]\n'
        if i % 5 == 0:
            extra += f"triggers:\n  keywords: [{a}, {c}]\n  verbs: [convert, check]\n"
        text = (
            f"---\nname: skill-{i:06d}\n"
            f"description: Handles {a} and {b} files with {c} support. Use when the user asks "
            f"to work with {a} or {b} documents.\n"
            f"license: MIT\n{extra}---\n# Skill {i}\n\n" + f"Instructions for {a} {b} {c}.\n" * 40
        )
        with open(folder / "SKILL.md", "w", encoding="utf-8") as handle:
            handle.write(text)
        if i % 10 == 0:
            os.makedirs(folder / "scripts", exist_ok=True)
            with open(folder / "scripts" / "run.py", "w", encoding="utf-8") as handle:
                handle.write("print('hi')\n")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(root: Path, n: int, repeat: int, profile: bool) -> dict[str, object]:
    """Run in a fresh process: time cold and warm discovery of ``root``."""
    from skilldeck.core.cache import clear_all
    from skilldeck.core.config import Settings
    from skilldeck.core.discovery import Root, discover
    from skilldeck.core.model import Source

    roots = [Root(root, Source.EXPLICIT)]
    settings = Settings()
    cold: list[float] = []
    warm: list[float] = []
    count = 0
    if profile:
        import cProfile
        import pstats

        clear_all()
        prof = cProfile.Profile()
        prof.enable()
        discover(roots, settings)
        prof.disable()
        print("--- cold profile ---", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
        prof = cProfile.Profile()
        prof.enable()
        discover(roots, settings)
        prof.disable()
        print("--- warm profile ---", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    cold_cpu: list[float] = []
    warm_cpu: list[float] = []
    workers_cpu: list[float] = []
    for _ in range(repeat):
        clear_all()
        started, cpu, forked = time.perf_counter(), time.process_time(), _children_cpu()
        catalog = discover(roots, settings)
        cold.append(time.perf_counter() - started)
        cold_cpu.append(time.process_time() - cpu)
        workers_cpu.append(_children_cpu() - forked)
        count = len(catalog.skills)
        del catalog  # freeing the previous catalog is not part of the next start
        started, cpu = time.perf_counter(), time.process_time()
        catalog = discover(roots, settings)
        warm.append(time.perf_counter() - started)
        warm_cpu.append(time.process_time() - cpu)
        assert len(catalog.skills) == count
        del catalog
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "n": n,
        "found": count,
        "cold_p50": statistics.median(cold),
        "cold_p95": _pct(cold, 0.95),
        "warm_p50": statistics.median(warm),
        "warm_p95": _pct(warm, 0.95),
        "cold_cpu": statistics.median(cold_cpu),
        "warm_cpu": statistics.median(warm_cpu),
        "workers_cpu": statistics.median(workers_cpu),
        "peak_rss_mb": rss_kb / 1024,
    }


def warm_once(root: Path) -> float:
    """Run in a new process: seconds one warm discovery of ``root`` takes there (what a
    command such as ``skilldeck list`` meets), the cache being already written."""
    from skilldeck.core.config import Settings
    from skilldeck.core.discovery import Root, discover
    from skilldeck.core.model import Source

    roots = [Root(root, Source.EXPLICIT)]
    settings = Settings()
    started = time.perf_counter()
    discover(roots, settings)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Parse options, generate skills, run one child process per size, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=0, help="runs per size (default: auto)")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    parser.add_argument("--profile", action="store_true", help="print cProfile of one run")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.once:
        print(warm_once(args.dir))
        return 0
    if args.child is not None:
        result = child(args.dir, args.child, max(1, args.repeat), args.profile)
        print(json.dumps(result))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = args.keep or Path(tempfile.mkdtemp(prefix="skilldeck-bench-"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}, "
        f"data in {base}"
    )
    print(
        "cpu = CPU seconds of the discovering process; workers = CPU of its forked workers "
        "(cold only); new proc = p50 of warm discovery each in a new process"
    )
    header = (
        f"{'skills':>8} {'cold p50':>9} {'cold p95':>9} {'cold sk/s':>10} "
        f"{'warm p50':>9} {'warm p95':>9} {'warm sk/s':>10} {'peak RSS':>9} {'gen s':>6} "
        f"{'cold cpu':>9} {'workers':>8} {'warm cpu':>9} {'load':>5} {'new proc':>9}"
    )
    print(header)
    try:
        for n in sizes:
            root = base / f"n{n}"
            started = time.perf_counter()
            if not (root / ".done").exists():
                shutil.rmtree(root, ignore_errors=True)
                generate(root, n)
                (root / ".done").touch()
            gen = time.perf_counter() - started
            repeat = args.repeat or (5 if n <= 10_000 else 2)
            home = Path(tempfile.mkdtemp(prefix="skilldeck-bench-home-"))
            env = dict(os.environ, SKILLDECK_HOME=str(home))
            cmd = [
                sys.executable,
                __file__,
                "--child",
                str(n),
                "--dir",
                str(root),
                "--repeat",
                str(repeat),
            ] + (["--profile"] if args.profile else [])
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            fresh: list[float] = []
            for _ in range(repeat if out.returncode == 0 else 0):
                once = [sys.executable, __file__, "--once", "--dir", str(root)]
                run = subprocess.run(once, env=env, capture_output=True, text=True)
                if run.returncode == 0:
                    fresh.append(float(run.stdout.strip().splitlines()[-1]))
            shutil.rmtree(home, ignore_errors=True)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                return 1
            if args.profile:
                print(out.stderr, file=sys.stderr)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{n:>8} {r['cold_p50']:>8.3f}s {r['cold_p95']:>8.3f}s "
                f"{n / r['cold_p50']:>10.0f} {r['warm_p50']:>8.3f}s {r['warm_p95']:>8.3f}s "
                f"{n / r['warm_p50']:>10.0f} {r['peak_rss_mb']:>7.0f}MB {gen:>6.1f} "
                f"{r['cold_cpu']:>8.3f}s {r['workers_cpu']:>7.3f}s {r['warm_cpu']:>8.3f}s "
                f"{os.getloadavg()[0]:>5.1f} "
                f"{statistics.median(fresh) if fresh else float('nan'):>8.3f}s",
                flush=True,
            )
            if r["found"] != n:
                print(f"  ! found {r['found']} skills, expected {n}", file=sys.stderr)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
