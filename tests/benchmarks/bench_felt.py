"""What a person feels of the TUI: the installed ``skilldeck`` in a real terminal (tmux).

Run: ``python tests/benchmarks/bench_felt.py [--sizes 372,10000] [--runs 3] [--keys 15]``.
372 is the shared corpus (``../shared/corpus/skills`` or ``SKILLDECK_SHARED``); other
sizes are synthetic skills (see ``bench_tui.make_skills``), dated a minute back as
``bench_discovery`` dates them. Each size gets its own SKILLDECK_HOME, launched once to
warm it (that first, cold launch is reported too).

The clock starts before ``tmux new-session`` starts the process, and the screen is read
with ``tmux capture-pane`` every ~5 ms, so Python start-up, imports, discovery and the
terminal's drawing are all inside the figures:

- *launch → first rows*: until a skill name of the catalog is on the screen;
- *launch → all stages*: until the status line says ``N skills · x ms`` with no stage
  still running (no ``…``);
- *key → list repainted*: typing three queries one key at a time, from ``send-keys`` to
  the first screen where the left column (status line and result list; not the search
  box's text row, which echoes at once, nor the detail panes, which follow when typing
  pauses) changed (p50/p95); once waiting for each change (a key that changes nothing
  there within 2 s is not counted), once at a fixed 150 ms between keys (a fast
  typist), where a key can land while the previous one is still being drawn (a repaint
  counts for the key whose text the search box shows in it).

What the user would use instead, in the same run: ``grep -ril QUERY --include=SKILL.md``
over the same folder (a search that shows nothing until it is done), timed end to end.

Absolute figures differ threefold between machines, so the same run measures a bare
Textual app in the same tmux (:data:`BARE_APP`: one Input and 25 rows of skill names that
change with every key) and prints Skilldeck's figures as ratios to it: launch → first
rows and → all stages over the bare app's first paint, key → list over its repaint. The
CPU seconds each launch used by then are printed too (:func:`cpu_seconds`): on a shared
machine the wall clock follows the other processes' load, the CPU time hardly does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_discovery import age
from bench_tui import QUERIES, make_skills

SESSION = "skilldeck-felt"
STATUS = re.compile(r"\b\d[\d,]* skills?\b.* · [\d.]+ ms")
POLL = 0.005


def pane() -> list[str]:
    """The visible screen, one string per row."""
    out = subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", SESSION], capture_output=True, text=True
    )
    return out.stdout.splitlines()


BARE_APP = """
import os, sys
from textual.app import App
from textual.widgets import Input, Static

NAMES = sorted(os.listdir(sys.argv[1]))

class Bare(App[None]):
    def compose(self):
        yield Input(placeholder="Search")
        yield Static(id="rows")

    def on_mount(self):
        self.show("")

    def on_input_changed(self, event):
        self.show(event.value)

    def show(self, query):
        found = [n for n in NAMES if query.lower() in n.lower()] or NAMES
        lines = [f"{n}  ({len(found)} for {query!r})" for n in found[:25]]
        self.query_one("#rows", Static).update(chr(10).join(lines))

Bare().run()
"""
"""The yardstick: a bare Textual app, one Input and 25 rows of text that change with it."""


def launch(root: Path, home: Path, width: int, height: int, bare: Path | None = None) -> float:
    """Start ``skilldeck --root ROOT`` (or the ``bare`` app's script over ROOT) in a fresh
    tmux session; the clock start."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    exe = shutil.which("skilldeck") or "skilldeck"
    # Bytecode caches are written as a user's Python writes them (the first, cold launch
    # writes them): with PYTHONDONTWRITEBYTECODE set where the benchmark runs, every
    # launch compiled Skilldeck's modules again (about 0.1 s) while Textual's, installed
    # with their caches, were not.
    env = "env -u PYTHONDONTWRITEBYTECODE"
    command = f"{env} SKILLDECK_HOME={home} SKILLDECK_SEMANTIC=0 {exe} --root {root}"
    if bare is not None:
        command = f"{env} {sys.executable} {bare} {root}"
    for attempt in range(3):
        started = time.perf_counter()
        # The kill above may leave the server exiting ("server exited unexpectedly"): a
        # new session started at that moment fails; the next attempt starts a new server.
        size = ["-x", str(width), "-y", str(height)]
        made = subprocess.run(
            ["tmux", "new-session", "-d", "-s", SESSION, *size, command],
            capture_output=attempt < 2,
        )
        if made.returncode == 0:
            return started
        time.sleep(0.2)
    raise RuntimeError("tmux could not start a session")


def wait_for(test: object, timeout: float = 120.0) -> float:
    """Poll the screen until ``test(rows)`` is true; the time it became true."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        rows = pane()
        if test(rows):  # type: ignore[operator]
            return time.perf_counter()
        time.sleep(POLL)
    raise TimeoutError("the screen never showed what was awaited")


def all_done(rows: list[str]) -> bool:
    """The status line counts the skills, and no stage is still running."""
    return any(STATUS.search(r) and "…" not in r and "index building" not in r for r in rows)


def cpu_seconds() -> float:
    """CPU time (user + system) used so far by the processes in the tmux pane (the shell
    running the command and everything under it): unlike the wall clock, hardly changed
    by what else the machine runs."""
    out = subprocess.run(
        ["tmux", "display", "-p", "-t", SESSION, "#{pane_pid}"], capture_output=True, text=True
    )
    stats: dict[int, tuple[int, float]] = {}  # pid: (parent, seconds)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            stats[int(entry.name)] = (int(fields[1]), seconds)
    tree = {int(out.stdout.strip() or 0)}
    while True:
        more = {pid for pid, (parent, _s) in stats.items() if parent in tree} - tree
        if not more:
            return sum(stats[pid][1] for pid in tree if pid in stats)
        tree |= more


def launch_times(
    root: Path, home: Path, names: set[str], size: tuple[int, int]
) -> tuple[float, float, float, float]:
    """(launch → first rows, launch → all stages) of one launch, then the CPU seconds used
    by each; the app is left running."""
    started = launch(root, home, *size)
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names)[:2000]))
    first = wait_for(lambda rows: any(pattern.search(r) for r in rows))
    first_cpu = cpu_seconds()
    done = wait_for(all_done)
    return first - started, done - started, first_cpu, cpu_seconds()


def _without(rows: list[str], typed: str = "") -> list[str]:
    """The left column (status line and result list; the detail panes right of the ``│``
    fill in later, when typing pauses, and are not the list) without the search box's
    text row (which echoes the keys at once): the row framed by ``▊ … ▎`` that is not one
    of the box's edges. A key that leaves the list as it was times out (not counted)
    instead of being charged with the detail panes' later repaint."""
    return [
        r.split("│", 1)[0]
        for r in rows
        if not (r.startswith("▊") and "▔" not in r and "▁" not in r)
    ]


def key_latencies(queries: tuple[str, ...], keys: int) -> list[float]:
    """Seconds from each key to the first repaint of the list, waiting for each."""
    out: list[float] = []
    for query in queries:
        subprocess.run(["tmux", "send-keys", "-t", SESSION, "C-u"], check=True)
        time.sleep(0.5)
        typed = ""
        for ch in query[:keys]:
            before = _without(pane(), typed)
            typed += ch
            sent = time.perf_counter()
            subprocess.run(["tmux", "send-keys", "-t", SESSION, "-l", ch], check=True)
            try:
                seen = wait_for(lambda rows, t=typed, b=before: _without(rows, t) != b, 2.0)
                out.append(seen - sent)
            except TimeoutError:
                pass  # the key changed nothing but the search box (same list)
            time.sleep(0.05)
    return out


def paced_latencies(queries: tuple[str, ...], interval: float) -> list[float]:
    """Key → repaint with keys sent every ``interval`` seconds whatever the screen does."""
    out: list[float] = []
    for query in queries:
        subprocess.run(["tmux", "send-keys", "-t", SESSION, "C-u"], check=True)
        time.sleep(0.5)
        frames: list[tuple[float, list[str]]] = []
        stop = threading.Event()
        watcher = threading.Thread(target=_watch, args=(frames, stop))
        watcher.start()
        time.sleep(0.1)
        sends: list[tuple[float, str]] = []
        typed = ""
        for ch in query:
            typed += ch
            sends.append((time.perf_counter(), typed))
            subprocess.run(["tmux", "send-keys", "-t", SESSION, "-l", ch], check=True)
            time.sleep(interval)
        time.sleep(0.5)
        stop.set()
        watcher.join()
        out.extend(_paced(frames, sends))
    return out


def _watch(frames: list[tuple[float, list[str]]], stop: threading.Event) -> None:
    while not stop.is_set():
        frames.append((time.perf_counter(), pane()))
        time.sleep(POLL)


def _box_text(rows: list[str]) -> str | None:
    """What the search box shows (stripped), or None when it is not on the screen."""
    for r in rows:
        if r.startswith("▊") and "▔" not in r and "▁" not in r and "▎" in r:
            return r[1 : r.index("▎")].strip()
    return None


def _paced(frames: list[tuple[float, list[str]]], sends: list[tuple[float, str]]) -> list[float]:
    """Per key, the first frame whose list differs from the one before the key and whose
    search box shows this key's text (a later frame showing the next key's text is that
    key's repaint; a key that leaves the list as it was, such as a trailing space, has no
    repaint and is not counted)."""
    found: list[float] = []
    for sent, typed in sends:
        before = [rows for t, rows in frames if t < sent]
        if not before:
            continue
        base = _without(before[-1], typed[:-1])
        for t, rows in frames:
            if t <= sent:
                continue
            shown = _box_text(rows)
            text = typed.strip()
            if shown is not None and shown != text:
                if shown.startswith(text) and len(shown) > len(text):
                    break  # the next key is on the screen: this one changed nothing
                continue  # this key is not on the screen yet
            if _without(rows, typed) != base:
                found.append(t - sent)
                break
    return found


def grep_time(root: Path, query: str) -> float:
    """End to end: ``grep -ril WORD --include=SKILL.md ROOT`` for the query's first word."""
    started = time.perf_counter()
    subprocess.run(
        ["grep", "-ril", query.split()[0], "--include=SKILL.md", str(root)],
        capture_output=True,
    )
    return time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) in milliseconds."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def corpus() -> Path | None:
    """The shared corpus folder, or None."""
    base = Path(os.environ.get("SKILLDECK_SHARED", Path(__file__).parents[3] / "shared"))
    found = base / "corpus" / "skills"
    return found if found.is_dir() else None


def bare_times(
    names: set[str], geometry: tuple[int, int], runs: int, keys: int
) -> tuple[float, float, list[float]]:
    """(median launch → first paint, its median CPU seconds, key → repaint latencies) of
    :data:`BARE_APP`."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bare_app.py"
        script.write_text(BARE_APP, encoding="utf-8")
        listing = Path(tmp) / "names"  # one entry per skill: the corpus nests its skills
        listing.mkdir()
        for name in names:
            (listing / name).touch()
        pattern = re.compile("|".join(re.escape(n) for n in sorted(names)[:2000]))
        firsts, cpus = [], []
        for _ in range(runs + 1):  # the first launch warms the imports, as for Skilldeck
            started = launch(listing, Path(tmp), *geometry, bare=script)
            firsts.append(wait_for(lambda rows: any(pattern.search(r) for r in rows)) - started)
            cpus.append(cpu_seconds())
        waited = key_latencies(QUERIES, keys)
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return statistics.median(firsts[1:]), statistics.median(cpus[1:]), waited


def ratio(value: float, base: float) -> str:
    """``value / base`` as ``2.3x`` (``-`` when either is missing)."""
    if not base or value != value or base != base:  # NaN when nothing was measured
        return "-"
    return f"{value / base:.1f}x"


def measure(size: int, runs: int, keys: int, interval: float, geometry: tuple[int, int]) -> None:
    """Print the figures of one catalog size."""
    with tempfile.TemporaryDirectory() as tmp:
        if size == 372 and corpus() is not None:
            root = corpus()
            assert root is not None
        else:
            root = Path(tmp) / "skills"
            make_skills(root, size)
            age(root)  # as a catalog is: files just written are always read again
        names = {p.parent.name for p in root.rglob("SKILL.md")}
        home = Path(tmp) / "home"
        cold = launch_times(root, home, names, geometry)
        firsts, dones, cpus = [], [], []
        for _ in range(runs):
            first, done, first_cpu, done_cpu = launch_times(root, home, names, geometry)
            firsts.append(first)
            dones.append(done)
            cpus.append((first_cpu, done_cpu))
        waited = key_latencies(QUERIES, keys)
        paced = paced_latencies(QUERIES, interval)
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
        greps = [grep_time(root, q) for q in QUERIES for _ in range(3)]
        bare_first, bare_cpu, bare_keys = bare_times(names, geometry, runs, keys)
    first, done = statistics.median(firsts), statistics.median(dones)
    p50, p95 = pct(waited, 0.5), pct(waited, 0.95)
    bare50, bare95 = pct(bare_keys, 0.5), pct(bare_keys, 0.95)
    print(
        f"{len(names):>7} skills, bare Textual app in the same tmux: first paint "
        f"{bare_first:.2f} s, key→repaint p50/p95 {bare50:.0f}/{bare95:.0f} ms "
        f"(n={len(bare_keys)}) | Skilldeck as a ratio to it: first rows "
        f"{ratio(first, bare_first)}, all stages {ratio(done, bare_first)}, key→list p50 "
        f"{ratio(p50, bare50)}, p95 {ratio(p95, bare95)}"
    )
    print(
        f"{len(names):>7} skills {geometry[0]}x{geometry[1]} | cold launch: first rows "
        f"{cold[0]:.2f} s, all stages {cold[1]:.2f} s | warm (median of {runs}): first rows "
        f"{statistics.median(firsts):.2f} s, all stages {statistics.median(dones):.2f} s | "
        f"key→list p50/p95 {pct(waited, 0.5):.0f}/{pct(waited, 0.95):.0f} ms (n={len(waited)})"
        f" | every {interval * 1000:.0f} ms: {pct(paced, 0.5):.0f}/{pct(paced, 0.95):.0f} ms "
        f"(n={len(paced)}) | grep -ril p50 {pct(greps, 0.5):.0f} ms"
    )
    cpu_first = statistics.median(c[0] for c in cpus)
    cpu_done = statistics.median(c[1] for c in cpus)
    print(
        f"{len(names):>7} skills, CPU seconds (user + system, the process and its children):"
        f" bare first paint {bare_cpu:.2f} | Skilldeck first rows {cpu_first:.2f} "
        f"({ratio(cpu_first, bare_cpu)}), all stages {cpu_done:.2f} ({ratio(cpu_done, bare_cpu)})"
    )


def main() -> None:
    """Parse the options and measure each size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="372,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", type=int, default=15)
    parser.add_argument("--interval", type=float, default=0.150)
    parser.add_argument("--geometry", default="120x36")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed (apt-get install tmux)")
    width, height = (int(v) for v in args.geometry.split("x"))
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.runs, args.keys, args.interval, (width, height))


if __name__ == "__main__":
    main()
