"""Benchmark of ``skilldeck serve``: time to ready and per-call latency with N skills.

Usage::

    python tests/benchmarks/bench_mcp.py [--sizes 1000,10000] [--calls 200] [--semantic]
    python tests/benchmarks/bench_mcp.py --root /tmp/c10k [--home /tmp/wshome]

For each size, synthetic skills are written to a temporary folder and a server is started
over stdio with the MCP SDK's own client (as an agent would). Reported per size:

* ready: from spawning the process to a completed protocol handshake, cold (empty
  local store) and warm (second start: skills and search index come from the store);
* first search: the first ``search_skills`` right after ready, cold and warm (the server
  loads the index before it answers ``initialize``, so this is one search). Goal: warm
  at 10k skills under 100 ms;
* search_skills / load_skill / read_skill_resource / list_skills: per-call latency seen by
  the client, p50 and p95 in milliseconds, and calls per second;
* peak RSS of the server process (VmHWM).

The embedding signal is off unless ``--semantic`` is given (it loads a model).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from mcp import Client

_VOCABULARY = (
    "pdf form invoice chart table csv json yaml parse render deploy kubernetes docker "
    "terraform lint test review commit branch merge release docs api schema sql query "
    "migrate backup restore image resize video audio transcript translate summarise email "
    "calendar slack ticket jira github gitlab security audit secret rotate log metric trace "
    "alert dashboard budget forecast report slide deck spreadsheet notebook model train "
    "evaluate prompt agent skill tool browser scrape crawl cache index search rank"
)
WORDS = tuple(_VOCABULARY.split())
VERBS = ("fill", "build", "check", "clean", "convert", "draft", "explain", "fix", "plan", "write")


def make_corpus(root: Path, count: int, seed: int = 7) -> list[str]:
    """Write ``count`` synthetic skills under ``root``; return their names."""
    rng = random.Random(seed)
    names: list[str] = []
    for i in range(count):
        topic = rng.sample(WORDS, 3)
        name = f"{topic[0]}-{topic[1]}-{i}"
        verb = rng.choice(VERBS)
        description = (
            f"{verb.capitalize()} {topic[0]} {topic[1]} work with {topic[2]} "
            f"support. Use when asked to {verb} a {topic[0]} or {topic[1]}."
        )
        body = "\n".join(
            [f"# {name}", "", f"Steps to {verb} the {topic[0]} for $ARGUMENTS:", ""]
            + [f"{n}. {' '.join(rng.sample(WORDS, 8))}." for n in range(1, 30)]
        )
        folder = root / f"group-{i % 100:02d}" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n"
            f"allowed-tools: Read Grep\n---\n{body}\n",
            encoding="utf-8",
        )
        (folder / "notes.md").write_text(f"# Notes for {name}\n\n" + "text " * 200)
        names.append(name)
    return names


def _children_rss_peak(parent: int) -> int:
    """Peak RSS (kB) of this process's direct children (the server), from /proc."""
    peak = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != parent:
                continue
            with open(f"/proc/{entry}/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except (OSError, IndexError, ValueError):
            continue
    return peak


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _time_calls(
    client: Client, name: str, argument_sets: list[dict[str, Any]]
) -> list[float]:
    times: list[float] = []
    for arguments in argument_sets:
        started = time.perf_counter()
        result = await client.call_tool(name, arguments)
        times.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise RuntimeError(f"{name} {arguments} failed: {result.content}")
    return times


async def run_size(
    count: int,
    calls: int,
    semantic: bool,
    settle: float,
    root: Path | None = None,
    home: Path | None = None,
) -> dict[str, Any]:
    """Measure one corpus: ``count`` synthetic skills, or the existing ``root``."""
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        base = Path(tmp)
        home = home or base / "home"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(f"semantic = {'true' if semantic else 'false'}\n")
        started = time.perf_counter()
        synthetic = root is None
        if root is None:
            root = base / "skills"
            names = make_corpus(root, count)
        else:
            names = [p.parent.name for p in sorted(root.rglob("SKILL.md"))]
        generated = time.perf_counter() - started
        env = {"SKILLDECK_HOME": str(home), "HOME": str(base), "PATH": os.environ.get("PATH", "")}
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "skilldeck", "--root", str(root), "serve"], env=env
        )
        report: dict[str, Any] = {"skills": len(names), "generate_s": round(generated, 2)}
        for cache in ("cold", "warm"):
            started = time.perf_counter()
            async with Client(params, read_timeout_seconds=600) as client:
                report[f"ready_{cache}_s"] = round(time.perf_counter() - started, 3)
                first = time.perf_counter()
                await client.call_tool("search_skills", {"query": "fill pdf form"})
                report[f"first_search_{cache}_ms"] = round((time.perf_counter() - first) * 1000, 1)
                if cache == "warm":
                    await asyncio.sleep(settle)
                    await _time_all(client, names, calls, report, reads=synthetic)
        return report


async def _time_all(
    client: Client, names: list[str], calls: int, report: dict[str, Any], *, reads: bool
) -> None:
    """Per-call latencies of the tools, calls per second and the server's peak RSS.

    ``read_skill_resource`` is timed only on the synthetic corpus (it has ``notes.md``).
    """
    rng = random.Random(11)
    queries = [{"query": " ".join(rng.sample(WORDS, rng.randint(2, 6)))} for _ in range(calls)]
    loads = [{"name": rng.choice(names), "arguments": "x.pdf"} for _ in range(calls)]
    files = [{"name": rng.choice(names), "path": "notes.md"} for _ in range(calls if reads else 0)]
    t_start = time.perf_counter()
    search = await _time_calls(client, "search_skills", queries)
    load = await _time_calls(client, "load_skill", loads)
    read = await _time_calls(client, "read_skill_resource", files) or [0.0]
    listing = await _time_calls(client, "list_skills", [{}] * max(5, calls // 20))
    elapsed = time.perf_counter() - t_start
    total_calls = len(search) + len(load) + len(read) + len(listing)
    for key, values in (("search", search), ("load", load), ("read", read), ("list", listing)):
        report[f"{key}_p50_ms"] = round(statistics.median(values), 2)
        report[f"{key}_p95_ms"] = round(_pct(values, 0.95), 2)
    report["calls_per_s"] = round(total_calls / elapsed, 1)
    report["server_peak_rss_mb"] = round(_children_rss_peak(os.getpid()) / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--semantic", action="store_true")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds to wait after the warm first search before timing, so a background "
        "embedding run (--semantic) is done (default 0)",
    )
    parser.add_argument("--root", type=Path, help="an existing corpus instead of --sizes")
    parser.add_argument("--home", type=Path, help="SKILLDECK_HOME to use (kept) with --root")
    args = parser.parse_args(argv)
    if args.root is not None:
        jobs = [(0, args.root.absolute(), args.home)]
    else:
        jobs = [(int(s), None, None) for s in args.sizes.split(",") if s]
    for size, root, home in jobs:
        report = asyncio.run(run_size(size, args.calls, args.semantic, args.settle, root, home))
        print("  ".join(f"{k}={v}" for k, v in report.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
