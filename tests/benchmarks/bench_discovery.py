"""Benchmark: cold and warm discovery of N synthetic skills through the local store.

Usage::

    python tests/benchmarks/bench_discovery.py [--sizes 1000,10000] [--big] [--repeat 5]
        [--keep DIR] [--corpus DIR] [--profile]

Each size runs in its own child process (so peak RSS is per size), with its own
``SKILLDECK_HOME``. *Cold* means an empty store (every SKILL.md parsed, rows written);
*warm* means the store from the cold run, in the same process right after it; *new proc*
is one warm discovery alone in a new process (what ``skilldeck list`` meets): the time of
``discover`` there, and the whole process (start-up, imports, discovery) measured from
outside. ``--big`` adds 100,000 skills; ``--corpus`` times an existing folder instead.
Generated files are dated a minute back (files modified within the last two seconds are
always read again). The OS page cache is warm in all cases.
Goals on the 2-core reference machine: cold 10k well under 1.5 s, warm 10k <= 0.5 s
(a new process about 0.2 s).
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
from typing import Any

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


def _profile(roots: list[Any], settings: Any, store: Any) -> None:
    """Print a cProfile of one cold and one warm discovery to stderr."""
    import cProfile
    import pstats

    from skilldeck.core.discovery import discover

    for label in ("cold", "warm"):
        prof = cProfile.Profile()
        prof.enable()
        discover(roots, settings, store=store)
        prof.disable()
        print(f"--- {label} profile ---", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    store.close()


def child(root: Path, n: int, repeat: int, profile: bool) -> dict[str, object]:
    """Run in a fresh process: time cold and warm discovery of ``root``."""
    from skilldeck.core.config import Settings
    from skilldeck.core.discovery import Root, discover
    from skilldeck.core.model import Source
    from skilldeck.core.store import LocalStore

    roots = [Root(root, Source.EXPLICIT)]
    settings = Settings()

    def fresh_store() -> LocalStore:
        home = Path(os.environ["SKILLDECK_HOME"])
        for name in ("store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm"):
            (home / name).unlink(missing_ok=True)
        return LocalStore.open()

    if profile:
        _profile(roots, settings, fresh_store())
    cold: list[float] = []
    warm: list[float] = []
    cold_cpu: list[float] = []
    warm_cpu: list[float] = []
    count = 0
    for _ in range(repeat):
        store = fresh_store()
        started, cpu = time.perf_counter(), time.process_time()
        catalog = discover(roots, settings, store=store)
        cold.append(time.perf_counter() - started)
        cold_cpu.append(time.process_time() - cpu)
        count = len(catalog.skills)
        del catalog  # freeing the previous catalog is not part of the next start
        started, cpu = time.perf_counter(), time.process_time()
        catalog = discover(roots, settings, store=store)
        warm.append(time.perf_counter() - started)
        warm_cpu.append(time.process_time() - cpu)
        assert len(catalog.skills) == count
        del catalog
        store.close()
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
        "peak_rss_mb": rss_kb / 1024,
    }


def warm_once(root: Path) -> tuple[float, float]:
    """Run in a new process: seconds one warm discovery of ``root`` takes there, the
    store being already written, and peak RSS (MB)."""
    from skilldeck.core.config import Settings
    from skilldeck.core.discovery import Root, discover
    from skilldeck.core.model import Source
    from skilldeck.core.store import LocalStore

    started = time.perf_counter()
    discover([Root(root, Source.EXPLICIT)], Settings(), store=LocalStore.open())
    took = time.perf_counter() - started
    return took, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def age(root: Path) -> None:
    """Date every file and folder under ``root`` a minute back."""
    then = time.time() - 60
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.utime(os.path.join(folder, name), (then, then))
    os.utime(root, (then, then))


def _fresh_process(root: Path, env: dict[str, str], repeat: int) -> tuple[float, float, float]:
    """p50 of a warm discovery in a new process: ``(discover s, whole process s, RSS MB)``."""
    inner: list[float] = []
    whole: list[float] = []
    rss: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        cmd = [sys.executable, __file__, "--once", "--dir", str(root)]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True)
        whole.append(time.perf_counter() - started)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return float("nan"), float("nan"), float("nan")
        took, mb = json.loads(run.stdout.strip().splitlines()[-1])
        inner.append(took)
        rss.append(mb)
    return statistics.median(inner), statistics.median(whole), max(rss)


def _measure(root: Path, n: int, repeat: int, profile: bool) -> int:
    """Time one corpus in child processes and print its row."""
    home = Path(tempfile.mkdtemp(prefix="skilldeck-bench-home-"))
    env = dict(os.environ, SKILLDECK_HOME=str(home))
    cmd = [sys.executable, __file__, "--child", str(n), "--dir", str(root)]
    cmd += ["--repeat", str(repeat)] + (["--profile"] if profile else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        shutil.rmtree(home, ignore_errors=True)
        return 1
    if profile:
        print(out.stderr, file=sys.stderr)
    inner, whole, rss = _fresh_process(root, env, repeat)
    shutil.rmtree(home, ignore_errors=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    found = int(r["found"])
    print(
        f"{found:>8} {r['cold_p50']:>8.3f}s {r['cold_p95']:>8.3f}s {r['cold_cpu']:>8.3f}s "
        f"{r['warm_p50']:>8.3f}s {r['warm_p95']:>8.3f}s {r['warm_cpu']:>8.3f}s "
        f"{r['peak_rss_mb']:>7.0f}MB {inner:>8.3f}s {whole:>8.3f}s {rss:>6.0f}MB "
        f"{os.getloadavg()[0]:>5.1f}",
        flush=True,
    )
    if n and found != n:
        print(f"  ! found {found} skills, expected {n}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse options, generate skills, run child processes per size, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--big", action="store_true", help="add 100,000 skills")
    parser.add_argument("--repeat", type=int, default=0, help="runs per size (default: auto)")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    parser.add_argument("--corpus", type=Path, help="time this existing folder instead")
    parser.add_argument("--profile", action="store_true", help="print cProfile of one run")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.once:
        print(json.dumps(warm_once(args.dir)))
        return 0
    if args.child is not None:
        print(json.dumps(child(args.dir, args.child, max(1, args.repeat), args.profile)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()] + ([100_000] if args.big else [])
    base = args.keep or Path(tempfile.mkdtemp(prefix="skilldeck-bench-"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}")
    print("new proc = p50 of one warm discovery in a new process: discover / whole process")
    print(
        f"{'skills':>8} {'cold p50':>9} {'cold p95':>9} {'cold cpu':>9} {'warm p50':>9} "
        f"{'warm p95':>9} {'warm cpu':>9} {'peak RSS':>9} {'new proc':>9} {'whole':>9} "
        f"{'RSS':>8} {'load':>5}"
    )
    try:
        if args.corpus is not None:
            return _measure(args.corpus.resolve(), 0, args.repeat or 5, args.profile)
        for n in sizes:
            root = base / f"n{n}"
            if not (root / ".done").exists():
                shutil.rmtree(root, ignore_errors=True)
                generate(root, n)
                age(root)
                (root / ".done").touch()
            if _measure(root, n, args.repeat or (5 if n <= 10_000 else 2), args.profile):
                return 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
