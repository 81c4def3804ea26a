"""``skilldeck eval --triggers SKILL [FILE]``: does the skill trigger, and if not, why.

From a trigger-eval file (``[{"query", "should_trigger"}]``) or, without one, from the
skill's silent misses in the usage window (``--since``): for each request, who won
instead (another skill or none), the skill's rank and matched terms, and the request's
words its fields lack; then the words most worth adding to the description
(:mod:`skilldeck.core.usage` triggers). Edit the description and run it again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from skilldeck.cli.context import CliContext
from skilldeck.cli.tools_cmds import parse_since
from skilldeck.cli.usage_cmds import WIDTH
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.safe_text import for_terminal
from skilldeck.core.usage import (
    TriggerCase,
    TriggerReport,
    collect_usage,
    load_trigger_cases,
    trigger_view,
)

MARK = {
    "triggered": "✓",
    "quiet": "✓",
    "other_won": "✗",
    "nothing_won": "✗",
    "false_trigger": "✗",
}


def run_triggers(args: argparse.Namespace, ctx: CliContext) -> int:
    """The trigger view of ``args.triggers``: exit 0 when every request did what it should,
    1 when some did not (findings), 2 for bad input."""
    fmt = ctx.output_format()
    workspace = ctx.workspace()
    skill = workspace.resolve(args.triggers)
    if args.queries:
        cases = load_trigger_cases(Path(args.queries))
        source = str(args.queries)
    else:
        report = collect_usage(ctx.settings, [], since=parse_since(args.since))
        usage = report.skills.get(skill.name)
        misses = usage.silent_misses if usage is not None else []
        cases = [(query, True) for miss in misses for query, _ in miss.requests]
        source = f"silent misses since {args.since}"
        if not cases:
            raise SkilldeckError(
                ErrorCode.NOT_FOUND,
                f"{skill.name} has no silent misses since {args.since}; give a trigger-eval "
                "file (skilldeck eval --triggers SKILL FILE)",
            )
    result = trigger_view(workspace, skill.name, cases, source)
    if fmt == "json":
        ctx.emit_json(result.to_dict())
    else:
        for line in render(result):
            ctx.echo(line)
    return 0 if all(c.ok for c in result.cases) else 1


def _cut(text: str, width: int) -> str:
    shown = for_terminal(text)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _case_lines(case: TriggerCase) -> list[str]:
    head = f"{MARK[case.outcome]} {case.outcome:<13} "
    lines = [head + _cut(repr(case.query), WIDTH - len(head))]
    facts = []
    if case.winner and case.outcome != "triggered":
        facts.append(f"won by {case.winner}")
    facts.append(f"rank {case.rank}" if case.rank else "not in the top results")
    if case.missing and not case.ok:
        facts.append("lacks " + ", ".join(case.missing))
    if case.winner_words:
        facts.append("winner matched " + ", ".join(case.winner_words))
    lines.append("    " + _cut("; ".join(facts), WIDTH - 4))
    return lines


def render(report: TriggerReport) -> list[str]:
    """The text form: one pair of lines per request, then the suggested words."""
    should = [c for c in report.cases if c.should_trigger]
    triggered = sum(c.outcome == "triggered" for c in should)
    lines = [
        _cut(f"Triggers of {report.skill} ({report.source}): {triggered}/{len(should)}", WIDTH)
    ]
    for case in report.cases:
        lines += _case_lines(case)
    suggested = report.suggestions()
    if suggested:
        words = ", ".join(f"{for_terminal(w)} ({n})" for w, n in suggested)
        lines += ["", _cut(f"Words the description could add: {words}", WIDTH)]
    return lines
