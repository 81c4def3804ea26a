"""``skilldeck usage``: how skills are really used (matches, loads, silent misses, runs).

From the local telemetry and the session audit (:mod:`skilldeck.core.usage`). The JSON form
is versioned (``"schema": 1``, documented in :mod:`skilldeck.core.usage`'s model); the text
form fits 80 columns, and every name and request in it is escaped for the terminal.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.cli.tools_cmds import parse_since
from skilldeck.core.safe_text import for_terminal
from skilldeck.core.usage import SkillUsage, UsageReport, collect_usage, stamp

WIDTH = 80
"""Columns the text form fits in."""
NAME_WIDTH = 28
SHOWN = 10
"""Rows of each list the text form shows (JSON has them all)."""


def register(sub: Any) -> None:
    """Register ``usage``."""
    p = sub.add_parser(
        "usage",
        help="which skills agents matched, loaded, ignored (silent misses) or never used",
        description="Per skill: matched (confident top result of an agent's search), "
        "loaded (by actor), silent misses (sessions where it was the confident match and "
        "was never loaded, with the requests), script runs and failures, last use; the "
        "catalog's never-used skills; requests nothing matched confidently. From local "
        "telemetry and the session audit. --format json: a stable document (schema 1).",
    )
    p.add_argument(
        "--since",
        default="7d",
        help="window start: Nd / Nh / Nw, YYYY-MM-DD or an ISO time; 'all' for everything "
        "kept (default 7d)",
    )
    p.add_argument("--session", metavar="ID", default=None, help="only this session")
    p.set_defaults(func=cmd_usage)


def cmd_usage(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck usage [--since 7d] [--session ID]``: exit 0."""
    fmt = ctx.output_format()
    since = None if str(args.since).strip().lower() == "all" else parse_since(args.since)
    names = [skill.name for skill in ctx.workspace().listed()]
    report = collect_usage(ctx.settings, names, since=since, session=args.session)
    if fmt == "json":
        ctx.emit_json(report.to_dict())
        return 0
    for line in render(report):
        ctx.echo(line)
    return 0


def _cut(text: str, width: int) -> str:
    """``text`` escaped for the terminal, then cut to ``width`` columns."""
    shown = for_terminal(text)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _when(moment: float | None) -> str:
    text = stamp(moment)
    return "-" if text is None else text[5:16].replace("T", " ")


def render(report: UsageReport) -> list[str]:
    """The text form: a header, the skills table, silent misses, never used, unmatched."""
    since = stamp(report.since)
    window = f"since {since[:16].replace('T', ' ')} UTC" if since else "everything kept"
    scope = f" · session {_cut(report.session, 20)}" if report.session else ""
    lines = [f"Skill usage {window}{scope}"]
    for note in report.sources.notes:
        lines += textwrap.wrap(f"note: {for_terminal(note)}", WIDTH, subsequent_indent="  ")
    lines += _skills_table(report.ranked())
    lines += _misses(report)
    if report.never_used:
        names = ", ".join(_cut(n, NAME_WIDTH) for n in report.never_used[:SHOWN])
        more = len(report.never_used) - SHOWN
        tail = f" (+{more} more)" if more > 0 else ""
        lines += ["", f"Never matched nor loaded ({len(report.never_used)}):"]
        lines += _wrap(names + tail)
    if report.unmatched:
        lines += ["", f"Requests nothing matched confidently ({len(report.unmatched)}):"]
        for entry in report.unmatched[:SHOWN]:
            best = f"  best {_cut(entry.best, 20)}" if entry.best else ""
            head = f"  {entry.count:>4}× "
            lines.append(head + _cut(repr(entry.query), WIDTH - len(head) - len(best)) + best)
    return lines


def _skills_table(skills: list[SkillUsage]) -> list[str]:
    if not skills:
        return ["", "No skill was matched, loaded or run in this window."]
    head = f"{'SKILL':<{NAME_WIDTH}} {'MATCH':>5} {'LOADS':>5} {'MISS':>4} {'RUNS':>4} {'FAIL':>4}"
    lines = ["", f"{head}  LAST USED"]
    for usage in skills[: SHOWN * 3]:
        lines.append(
            f"{_cut(usage.name, NAME_WIDTH):<{NAME_WIDTH}} {usage.matched:>5} {usage.loads:>5} "
            f"{len(usage.silent_misses):>4} {usage.script_runs:>4} {usage.script_failures:>4}"
            f"  {_when(usage.last_used)}"
        )
    if len(skills) > SHOWN * 3:
        lines.append(f"(+{len(skills) - SHOWN * 3} more skills: --format json has them all)")
    return lines


def _misses(report: UsageReport) -> list[str]:
    misses = report.silent_misses
    if not misses:
        return []
    lines = ["", f"Silent misses ({len(misses)}): confident match, never loaded in the session"]
    for miss in misses[:SHOWN]:
        head = f"  {_when(miss.last)}  {_cut(miss.skill, 22)}  {_cut(miss.session, 12)}  "
        lines.append(head + _cut(repr(miss.requests[-1][0]), WIDTH - len(head)))
    return lines


def _wrap(text: str) -> list[str]:
    lines: list[str] = []
    current = " "
    for word in text.split(" "):
        if len(current) + len(word) + 1 > WIDTH:
            lines.append(current)
            current = " "
        current += " " + word
    return [*lines, current]
