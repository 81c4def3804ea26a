"""Timing goals that used to be asserted by unit tests, measured here instead.

A unit test asserts behaviour; how fast that behaviour is depends on the machine and its
load, so the timings are reported, each beside the goal it had, and never fail a run.

Usage: ``python tests/benchmarks/bench_timing.py [--repeat 3] [--corpus PATH]``.

* ``overlap``: :func:`find_overlaps` over 3,000 skills with one identical description
  (bounded by ``max_candidates``; goal 3 s).
* ``lint-corpus`` and ``validate-corpus``: the shared real-world corpus linted, and
  validated under every profile (goals 20 s and 5 s; skipped without the corpus).
* ``script-return``: a script whose grandchild holds the pipes open and sleeps returns
  at once with its output (goal 3 s; needs bubblewrap).
* ``tui-live-request``: a request made on another host shows on the TUI's sessions screen,
  announced by PostgreSQL LISTEN/NOTIFY with the poll timer off (goal 1 s; needs the
  PostgreSQL binaries, started like the tests do).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS), str(TESTS / "app")]

GOALS = {
    "overlap": 3.0,
    "lint-corpus": 20.0,
    "validate-corpus": 5.0,
    "script-return": 3.0,
    "tui-live-request": 1.0,
}
"""Seconds each measurement aimed at when it was a test's assertion."""


def overlap() -> float:
    from skilldeck.core.lint.overlap import find_overlaps
    from skilldeck.core.model import Skill

    root = Path(tempfile.gettempdir())
    desc = "Splits PDF files page by page for archiving reports"
    skills = [Skill(f"s{i}", desc, root / f"s{i}", root) for i in range(3000)]
    started = time.perf_counter()
    find_overlaps(skills, 0.8, max_candidates=50)
    return time.perf_counter() - started


def corpus_skills(corpus: Path) -> list[object]:
    from skilldeck.core.discovery.frontmatter import parse_skill_file

    return [parse_skill_file(p) for p in sorted(corpus.rglob("SKILL.md"))]


def lint_corpus(corpus: Path) -> float:
    from skilldeck.core.lint import LintConfig, lint_catalog
    from skilldeck.core.model import Catalog

    skills = corpus_skills(corpus)
    catalog = Catalog(skills=skills)  # type: ignore[arg-type]
    started = time.perf_counter()
    lint_catalog(skills, catalog, LintConfig())  # type: ignore[arg-type]
    return time.perf_counter() - started


def validate_corpus(corpus: Path) -> float:
    from skilldeck.core.validate import PROFILES, validate_skill

    skills = corpus_skills(corpus)
    started = time.perf_counter()
    for profile in PROFILES:
        for skill in skills:
            validate_skill(skill, profile)  # type: ignore[arg-type]
    return time.perf_counter() - started


def script_return() -> float:
    from skilldeck.core.config import load_settings
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.execution import add_to_allowlist, execute, resolve_script

    holder = "import subprocess\nsubprocess.Popen(['sleep', '27.1828'], start_new_session=True)\n"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text("skills_exec = true\n", encoding="utf-8")
        os.environ["SKILLDECK_HOME"] = str(home)
        folder = Path(tmp) / "skills" / "holder"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            "---\nname: holder\ndescription: Holds pipes. Use when benchmarking.\n---\n# H\n",
            encoding="utf-8",
        )
        (folder / "run.py").write_text(holder + "print('kept')\n", encoding="utf-8")
        skill = parse_skill_file(folder / "SKILL.md", root=folder.parent)
        add_to_allowlist(resolve_script(skill, "run.py"))
        result = execute(load_settings(), skill, "run.py", [])
        assert result.run.stdout == "kept\n", result.run
        return result.run.duration_ms / 1000


def tui_live_request() -> float:
    from pg_server import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL binaries not found")
    server = PgServer(bindir)
    server.init()
    server.start()
    try:
        return asyncio.run(_live_request(server.create_database()))
    finally:
        server.cleanup()


async def _live_request(url: str) -> float:
    from apptools import new_app, ready, screen_is, wait_for

    from conftest import build_root
    from skilldeck.app.screens.sessions_screen import SessionsScreen
    from skilldeck.core.config import Settings
    from skilldeck.core.sessions import SessionStore

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SKILLDECK_HOME"] = str(Path(tmp) / "home")
        os.environ["SKILLDECK_SESSIONS_URL"] = url
        other_host = SessionStore(settings=Settings(telemetry=False, sessions_url=url))
        session = other_host.create(mode="approval", actor="agent")
        app = new_app([build_root(Path(tmp) / "skills")])
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            await pilot.press("down", "f5")
            screen = await screen_is(pilot, SessionsScreen)
            await wait_for(pilot, lambda: screen.listening, what="the listener up")
            pending = screen.query_one("#pending")
            started = time.monotonic()
            other_host.check(session.id, "WebFetch", actor="agent")
            while not any(
                pending.get_option_at_index(i).id == "WebFetch"  # type: ignore[attr-defined]
                for i in range(pending.option_count)  # type: ignore[attr-defined]
            ):
                await pilot.pause()
            took = time.monotonic() - started
        other_host.close()
        return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=TESTS.parent.parent / "shared" / "corpus")
    args = parser.parse_args()
    corpus = args.corpus / "skills" if (args.corpus / "skills").is_dir() else args.corpus
    runs: dict[str, Callable[[], float]] = {
        "overlap": overlap,
        "lint-corpus": lambda: lint_corpus(corpus),
        "validate-corpus": lambda: validate_corpus(corpus),
        "script-return": script_return,
        "tui-live-request": tui_live_request,
    }
    for name, run in runs.items():
        try:
            times = [run() for _ in range(args.repeat)]
        except Exception as exc:  # a missing corpus, bubblewrap or PostgreSQL
            print(f"{name:18} skipped: {type(exc).__name__}: {exc}")
            continue
        median = statistics.median(times)
        verdict = "within" if median <= GOALS[name] else "OVER"
        print(
            f"{name:18} median {median:7.3f} s  (min {min(times):.3f}, max {max(times):.3f})"
            f"  {verdict} the {GOALS[name]:g} s goal"
        )


if __name__ == "__main__":
    main()
