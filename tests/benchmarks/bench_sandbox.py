"""What the sandbox costs a run: the shipped ``measuring-text-files`` script, side by side
in the same run.

Usage: ``python tests/benchmarks/bench_sandbox.py [--runs 30]``. Times, in a temporary
SKILLDECK_HOME with the script allowed:

- ``python3 text_stats.py FILE`` run directly (what a user would do without Skilldeck);
- ``run_skill_file`` at the ``rlimits-only`` level (pin, private copy, limits, unshare);
- ``run_skill_file`` at the ``bwrap`` level (the same plus bubblewrap), when usable;
- ``skilldeck run`` end to end (start, discovery, pin, authorize, audit, sandboxed run).

Prints p50/p95 in milliseconds for each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKILL = REPO / "skills" / "measuring-text-files"
SCRIPT = "scripts/text_stats.py"


def _times(runs: int, once: Callable[[], None]) -> list[float]:
    once()  # warm caches and the sandbox probe
    found = []
    for _ in range(runs):
        started = time.perf_counter()
        once()
        found.append((time.perf_counter() - started) * 1000)
    return found


def _row(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{label:<44} p50 {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    home = Path(tempfile.mkdtemp(prefix="skilldeck-bench-home-"))
    os.environ["SKILLDECK_HOME"] = str(home)
    (home / "config.toml").write_text("skills_exec = true\nsemantic = false\n", "utf-8")
    sample = Path(tempfile.mkdtemp(prefix="skilldeck-bench-data-")) / "sample.md"
    sample.parent.chmod(0o755)  # the sandbox shows only what its user (as root: nobody) reads
    sample.write_text("# Title\n\n" + "one two three four five\n" * 200, encoding="utf-8")
    sample.chmod(0o644)

    from skilldeck.core.execution import run_skill_file, runner, sandbox, snapshot_skill

    pinned = snapshot_skill(SKILL)
    real = sandbox.probe()
    direct = [sys.executable, str(SKILL / SCRIPT), str(sample)]
    print(_row("python3 text_stats.py (no Skilldeck)", _times(runs, lambda: _ok(direct))))
    fallback = sandbox.Sandbox(sandbox.RLIMITS_ONLY, True)
    setattr(runner, "probe", lambda: fallback)  # noqa: B010 - the runner's own name
    rlimits = _times(runs, lambda: _check(run_skill_file(pinned, SCRIPT, [str(sample)], 30)))
    print(_row("run_skill_file, rlimits-only", rlimits))
    setattr(runner, "probe", lambda: real)  # noqa: B010
    if real.level == sandbox.BWRAP:
        bwrap = _times(runs, lambda: _check(run_skill_file(pinned, SCRIPT, [str(sample)], 30)))
        print(_row("run_skill_file, bwrap", bwrap))
    else:
        print(f"bwrap: not usable here ({'; '.join(real.notes)})")
    cli = [sys.executable, "-m", "skilldeck", "--root", str(SKILL.parent)]
    _ok([*cli, "allow", SKILL.name, SCRIPT])
    run = [*cli, "run", SKILL.name, SCRIPT, str(sample)]
    print(_row(f"skilldeck run (end to end, {real.level})", _times(runs, lambda: _ok(run))))


def _ok(argv: list[str]) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


def _check(result: object) -> None:
    assert getattr(result, "exit_code", 1) == 0, result


if __name__ == "__main__":
    main()
