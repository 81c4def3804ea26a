"""Tools and telemetry commands.

``skilldeck tools [SKILL] [--refresh]``: the tools known here, or one skill's tool
availability (exit 1 when the skill has tool errors). ``skilldeck telemetry [--since]
[--event]``: a summary of the local telemetry.
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from skilldeck.cli.advice import diagnostic_advice
from skilldeck.cli.context import CliContext, table
from skilldeck.core import tools
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.telemetry import Telemetry

if TYPE_CHECKING:
    from skilldeck.core.model import Skill
    from skilldeck.core.tools import ToolRegistry


def register(sub: Any) -> None:
    """Register ``tools`` and ``telemetry``."""
    p = sub.add_parser(
        "tools",
        help="available tools, or one skill's tool availability",
        description="Known tools (built-in preset, tools file, MCP servers of .mcp.json) or "
        "one skill's availability. MCP servers of a project's .mcp.json are started only "
        "with --refresh; those of a configured mcp_config also when never queried.",
    )
    p.add_argument("skill", nargs="?", help="skill name")
    p.add_argument("--refresh", action="store_true", help="re-query the MCP servers now")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per MCP server")
    p.set_defaults(func=cmd_tools)

    p = sub.add_parser("telemetry", help="summarise the local telemetry")
    p.add_argument("--since", default=None, help="YYYY-MM-DD, an ISO time, or Nd / Nh (e.g. 7d)")
    p.add_argument("--event", default=None, help="only this event")
    p.set_defaults(func=cmd_telemetry)


# -------------------------------------------------------------------------------- tools


def cmd_tools(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck tools [SKILL] [--refresh]``; exit 1 when the skill has tool errors."""
    fmt = ctx.output_format()
    # A project's .mcp.json is only run on an explicit --refresh (it may come from an
    # untrusted checkout); a configured mcp_config is trusted and queried when not cached.
    trusted = ctx.settings.mcp_config is not None
    registry = tools.ToolRegistry.load(
        ctx.settings, query_missing=trusted and not args.refresh, timeout=args.timeout
    )
    if args.refresh:
        registry.refresh_mcp(timeout=args.timeout)
    if args.skill is None:
        return _print_registry(ctx, registry, fmt)

    skill = ctx.workspace().resolve(args.skill)
    return _print_skill_tools(ctx, skill, registry, fmt)


def _print_registry(ctx: CliContext, registry: ToolRegistry, fmt: str) -> int:
    """Every known tool, the MCP servers queried and the registry's diagnostics."""
    if fmt == "json":
        ctx.emit_json(registry.to_dict())
        return 0
    rows = [["TOOL", "SOURCE", ""]]
    for info in sorted(registry.tools.values(), key=lambda t: (t.source, t.name)):
        rows.append([info.name, info.source, "hidden" if info.hidden else ""])
    for line in table(rows):
        ctx.echo(line)
    for server in registry.to_dict()["mcp_servers"]:
        when = server["queried_at"] or "never"
        ctx.echo(
            f"mcp server {server['name']}: {len(server['tools'])} tool(s), "
            f"queried {when}" + (f", error: {server['error']}" if server["error"] else "")
        )
    for diag in registry.diagnostics:
        said = diagnostic_advice(diag.code, diag.message)
        ctx.echo(ctx.paint(f"{diag.code} {diag.severity.value}: {said}", "yellow"))
    return 0


def _print_skill_tools(ctx: CliContext, skill: Skill, registry: ToolRegistry, fmt: str) -> int:
    """One skill's tool availability; 1 when it has tool errors."""
    availability, diags = tools.check_skill_tools(skill, registry)
    failed = any(d.severity.value == "error" for d in diags)
    if fmt == "json":
        ctx.emit_json(
            {
                "name": skill.name,
                "path": str(skill.path),
                **availability.to_dict(),
                "diagnostics": [d.to_dict() for d in diags],
            }
        )
        return 1 if failed else 0
    colors = {"available": "green", "missing": "red", "hidden": "yellow"}
    rows = [["TOOL", "STATUS", "REQUIRED", "SOURCE", "FROM"]]
    for entry in availability.entries:
        rows.append(
            [
                entry.name,
                ctx.paint(entry.status, colors[entry.status]),
                "yes" if entry.required else "no",
                entry.source or "-",
                ",".join(entry.origins),
            ]
        )
    ctx.echo(
        f"{ctx.paint(skill.name, 'bold')}: "
        + ("complete" if availability.complete else "incomplete")
    )
    for line in table(rows):
        ctx.echo("  " + line)
    for diag in diags:
        ctx.echo(
            f"  {diag.code} {diag.severity.value}: {diagnostic_advice(diag.code, diag.message)}"
        )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- telemetry

_RELATIVE = re.compile(r"^(\d+)\s*([dhw])$")


def parse_since(text: str | None, now: datetime | None = None) -> datetime | None:
    """``7d`` / ``12h`` / ``2w``, ``YYYY-MM-DD`` or an ISO time -> an aware UTC datetime."""
    if not text:
        return None
    now = now or datetime.now(UTC)
    found = _RELATIVE.match(text.strip().lower())
    if found:
        amount = int(found.group(1))
        unit = {"d": "days", "h": "hours", "w": "weeks"}[found.group(2)]
        return now - timedelta(**{unit: amount})
    try:
        if len(text.strip()) == 10:
            day = date.fromisoformat(text.strip())
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"--since {text!r}: use YYYY-MM-DD, an ISO time or Nd/Nh/Nw"
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def cmd_telemetry(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck telemetry [--since DATE|7d] [--event E]``."""
    fmt = ctx.output_format()
    since = parse_since(args.since)
    summary = Telemetry.from_settings(ctx.settings).summarize(since, args.event)
    if fmt == "json":
        ctx.emit_json(summary)
        return 0
    state = "on" if summary["enabled"] else "off (opt-out in config)"
    ctx.echo(f"telemetry {state}: {summary['directory']}")
    ctx.echo(f"{summary['total']} event(s)" + (f" since {summary['since']}" if since else ""))
    for title, key in (
        ("events", "events"),
        ("days", "days"),
        ("authorizations", "authorizations"),
    ):
        if summary[key]:
            ctx.echo(ctx.paint(title, "bold"))
            for line in table([[k, str(v)] for k, v in summary[key].items()]):
                ctx.echo("  " + line)
    if summary["top_skills"]:
        ctx.echo(ctx.paint("top skills", "bold"))
        for line in table([[t["skill"], str(t["count"])] for t in summary["top_skills"]]):
            ctx.echo("  " + line)
    return 0
