"""Benchmark the session store: policy checks per second and concurrent approvals.

Usage: ``python tests/benchmarks/bench_sessions.py [--checks 5000] [--procs 4]
[--approvals 100]``. Runs in a temporary SKILLDECK_HOME; prints p50/p95 latency, items/s
and peak RSS.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKER = """
import sys, time
from skilldeck.core.sessions import SessionStore
sid, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with SessionStore() as store:
    print("ready", flush=True)
    sys.stdin.readline()
    lat = []
    for i in range(count):
        t = time.perf_counter()
        store.approve(sid, f"tool-{worker}-{i}", actor=f"worker-{worker}")
        lat.append(time.perf_counter() - t)
print(" ".join(f"{x:.6f}" for x in lat), flush=True)
"""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_checks(count: int, telemetry: bool) -> None:
    from skilldeck.core.config import Settings
    from skilldeck.core.sessions import SessionStore

    with SessionStore(settings=Settings(telemetry=telemetry)) as store:
        sid = store.create(mode="approval").id
        store.activate_skill(sid, "git", ["Bash(git log:*)", "Read", "Grep", "Glob"])
        for i in range(20):
            store.approve(sid, f"approved-{i}")
        store.deny(sid, "Write")
        for label, tools in (
            ("allowlisted", ["Read", "Bash", "Grep"]),
            ("denied", ["Write"]),
            ("pending (approval mode)", ["WebFetch", "Task"]),
        ):
            lat = []
            started = time.perf_counter()
            for i in range(count):
                t = time.perf_counter()
                store.check(sid, tools[i % len(tools)])
                lat.append(time.perf_counter() - t)
            total = time.perf_counter() - started
            state = "on " if telemetry else "off"
            print(
                f"check {label:<24} telemetry={state} n={count:<6} "
                f"{count / total:8.0f} checks/s  p50 {statistics.median(lat) * 1000:.3f} ms  "
                f"p95 {_pct(lat, 0.95) * 1000:.3f} ms"
            )


def bench_concurrent(procs: int, approvals: int) -> None:
    from skilldeck.core.sessions import SessionStore

    with SessionStore() as store:
        sid = store.create().id
    per = approvals // procs
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, sid, str(w), str(per)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(procs)
    ]
    for w in workers:
        assert w.stdout is not None
        w.stdout.readline()
    started = time.perf_counter()
    for w in workers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    lat: list[float] = []
    for w in workers:
        out, _ = w.communicate(timeout=300)
        lat.extend(float(x) for x in out.split())
    total = time.perf_counter() - started
    with SessionStore() as store:
        session = store.get(sid)
        audited = sum(1 for e in store.audit(sid) if e.action == "approve")
    ok = len(session.approved) == per * procs == audited
    print(
        f"concurrent approvals: {per * procs} from {procs} processes in {total:.3f} s "
        f"({per * procs / total:.0f}/s)  p50 {statistics.median(lat) * 1000:.2f} ms  "
        f"p95 {_pct(lat, 0.95) * 1000:.2f} ms  all stored+audited: {ok}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--approvals", type=int, default=100)
    parser.add_argument("--sizes", default=None, help="comma-separated check counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["SKILLDECK_HOME"] = home
        os.environ["SKILLDECK_CONFIG"] = str(Path(home) / "config.toml")
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.checks]
        for size in sizes:
            for telemetry in (True, False):
                bench_checks(size, telemetry)
        bench_concurrent(args.procs, args.approvals)
        db = Path(home) / "sessions.db"
        print(f"database size {db.stat().st_size / 1024:.0f} KiB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS {rss / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
