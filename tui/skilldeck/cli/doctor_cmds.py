"""``skilldeck doctor``: where Skilldeck keeps its state and whether it is usable.

Shows the home folder, the config file and its problems, and the sessions backend
(embedded SQLite or a shared PostgreSQL database) with whether it answers. Exit code 0
when everything is usable, 1 when something is not (the report says what).
"""

from __future__ import annotations

import argparse
from typing import Any

from skilldeck.cli.context import CliContext, table

FORMATS = ("text", "json")


def register(sub: Any) -> None:
    """Register ``doctor``."""
    p = sub.add_parser(
        "doctor",
        help="show where state lives and whether the sessions database is reachable",
        description="Report SKILLDECK_HOME, the config file, and the sessions backend "
        "(sqlite, or postgresql when SKILLDECK_SESSIONS_URL / sessions_url is set) with "
        "whether it answers. Exit 1 when the sessions database is unusable.",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        help="seconds to keep trying an unreachable sessions database (default 2)",
    )
    p.set_defaults(func=cmd_doctor)


def collect(ctx: CliContext, timeout: float) -> dict[str, Any]:
    """The doctor's findings as a JSON-ready dictionary."""
    from skilldeck.core.config import config_path, home_dir
    from skilldeck.core.sessions import describe_backend

    settings = ctx.settings
    return {
        "home": str(home_dir()),
        "config": str(config_path()),
        "config_exists": config_path().is_file(),
        "config_problems": [d.message for d in settings.diagnostics],
        "sessions": describe_backend(settings, retry_seconds=max(0.0, timeout)),
    }


def cmd_doctor(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck doctor``."""
    fmt = ctx.output_format(FORMATS)
    report = collect(ctx, args.timeout)
    sessions = report["sessions"]
    healthy = bool(sessions.get("reachable"))
    if fmt == "json":
        ctx.emit_json({**report, "ok": healthy})
        return 0 if healthy else 1
    state = ctx.paint("reachable", "green") if healthy else ctx.paint("UNREACHABLE", "red")
    rows = [
        ["home", report["home"]],
        ["config", report["config"] + ("" if report["config_exists"] else " (absent)")],
        ["sessions backend", str(sessions.get("backend"))],
        ["sessions location", str(sessions.get("location"))],
        ["sessions state", state],
    ]
    if sessions.get("schema_version") is not None:
        rows.append(["sessions schema", str(sessions["schema_version"])])
    if sessions.get("server_version"):
        rows.append(["server version", str(sessions["server_version"])])
    for key in ("note", "error"):
        if sessions.get(key):
            rows.append([f"sessions {key}", str(sessions[key])])
    rows += [["config problem", problem] for problem in report["config_problems"]]
    for line in table(rows):
        ctx.echo(line)
    return 0 if healthy else 1
