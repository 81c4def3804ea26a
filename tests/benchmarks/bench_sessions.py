"""Benchmark the session store on SQLite and PostgreSQL: checks/s and decisions/s.

Usage: ``python tests/benchmarks/bench_sessions.py [--backend sqlite|postgres|both]
[--url postgresql://…] [--checks 5000] [--decisions 2000] [--procs 4] [--approvals 100]``.
Runs in a temporary SKILLDECK_HOME. PostgreSQL: the database of ``--url``, else a
throwaway local server started like the tests do (``tests/pg_server.py``; fsync off, so
figures are for the protocol, not the disk). Prints p50/p95 latency, items/s and peak RSS.
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


def _settings(url: str, telemetry: bool = False) -> object:
    from skilldeck.core.config import Settings

    return Settings(telemetry=telemetry, sessions_url=url)


def bench_checks(count: int, telemetry: bool, url: str = "") -> None:
    from skilldeck.core.sessions import SessionStore

    with SessionStore(settings=_settings(url, telemetry)) as store:  # type: ignore[arg-type]
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
                f"{_name(url)} check {label:<24} telemetry={state} n={count:<6} "
                f"{count / total:8.0f} checks/s  p50 {statistics.median(lat) * 1000:.3f} ms  "
                f"p95 {_pct(lat, 0.95) * 1000:.3f} ms"
            )


def _name(url: str) -> str:
    return "postgres" if url else "sqlite  "


def bench_decisions(count: int, url: str = "") -> None:
    """Operator decisions (approve, deny, revoke in turn) from one process, one at a time."""
    from skilldeck.core.sessions import SessionStore

    with SessionStore(settings=_settings(url)) as store:  # type: ignore[arg-type]
        sid = store.create(mode="approval").id
        lat = []
        started = time.perf_counter()
        for i in range(count):
            tool = f"tool-{i % 50}"
            verb = (store.approve, store.deny, store.revoke)[i % 3]
            t = time.perf_counter()
            verb(sid, tool, actor="bench")
            lat.append(time.perf_counter() - t)
        total = time.perf_counter() - started
        print(
            f"{_name(url)} decisions (approve/deny/revoke) n={count:<6} "
            f"{count / total:8.0f} decisions/s  p50 {statistics.median(lat) * 1000:.3f} ms  "
            f"p95 {_pct(lat, 0.95) * 1000:.3f} ms"
        )


def bench_concurrent(procs: int, approvals: int, url: str = "") -> None:
    from skilldeck.core.sessions import SessionStore

    if url:
        os.environ["SKILLDECK_SESSIONS_URL"] = url
    else:
        os.environ.pop("SKILLDECK_SESSIONS_URL", None)
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
        f"{_name(url)} concurrent approvals: {per * procs} from {procs} processes in {total:.3f} s "
        f"({per * procs / total:.0f}/s)  p50 {statistics.median(lat) * 1000:.2f} ms  "
        f"p95 {_pct(lat, 0.95) * 1000:.2f} ms  all stored+audited: {ok}"
    )


def _postgres(url: str | None) -> tuple[str, object]:
    """``(url, server)``: the given database, or a throwaway local server's."""
    if url:
        return url, None
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from pg_server import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries found: pass --url")
    server = PgServer(bindir)
    server.init()
    server.start()
    return server.create_database(), server


def run(args: argparse.Namespace, url: str) -> None:
    """Every benchmark on one backend (``url`` empty: SQLite)."""
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.checks]
    for size in sizes:
        for telemetry in (True, False):
            bench_checks(size, telemetry, url)
    bench_decisions(args.decisions, url)
    bench_concurrent(args.procs, args.approvals, url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--url", default=None, help="PostgreSQL database to use")
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--approvals", type=int, default=100)
    parser.add_argument("--sizes", default=None, help="comma-separated check counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["SKILLDECK_HOME"] = home
        os.environ["SKILLDECK_CONFIG"] = str(Path(home) / "config.toml")
        if args.backend in ("sqlite", "both"):
            run(args, "")
            db = Path(home) / "sessions.db"
            print(f"sqlite database size {db.stat().st_size / 1024:.0f} KiB")
        if args.backend in ("postgres", "both"):
            url, server = _postgres(args.url)
            try:
                run(args, url)
            finally:
                if server is not None:
                    server.cleanup()  # type: ignore[attr-defined]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS {rss / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
