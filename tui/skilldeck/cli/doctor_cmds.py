"""``skilldeck doctor``: where Skilldeck keeps its state and whether it is usable.

Shows the home folder, the config file and its problems, the sessions backend (embedded
SQLite or a shared PostgreSQL database) with whether it answers, and whether the audit
log's hash chain holds. Exit code 0 when everything is usable and the chain intact, 1 when
not (the report says what).
"""

from __future__ import annotations

import argparse
from typing import Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core import execution, sessions
from skilldeck.core.config import config_path, home_dir
from skilldeck.core.errors import SkilldeckError


def register(sub: Any) -> None:
    """Register ``doctor``."""
    p = sub.add_parser(
        "doctor",
        help="show where state lives and whether the sessions database is reachable",
        description="Report SKILLDECK_HOME, the config file, and the sessions backend "
        "(sqlite, or postgresql when SKILLDECK_SESSIONS_URL / sessions_url is set) with "
        "whether it answers, and whether the audit log's hash chain holds (skilldeck session "
        "verify). Exit 1 when the sessions database is unusable or the chain is broken.",
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
    settings = ctx.settings
    problems = [d.message for d in settings.diagnostics]
    try:
        sessions.check_retention(settings.audit_retention_days)
    except SkilldeckError as exc:
        problems.append(exc.message)
    return {
        "home": str(home_dir()),
        "config": str(config_path()),
        "config_exists": config_path().is_file(),
        "config_problems": problems,
        "sessions": sessions.describe_backend(settings, retry_seconds=max(0.0, timeout)),
        "sandbox": _sandbox(ctx),
        "remotes": _remotes(ctx),
    }


def _remotes(ctx: CliContext) -> list[dict[str, Any]]:
    """How each configured remote catalog answered (federation; reported, not fatal)."""
    from skilldeck.cli.remote_cmds import remote_listing

    listing = remote_listing(ctx)
    if listing is None:
        return []
    rows = [status.to_dict() for status in listing.statuses]
    rows += [
        {"label": p.split(":", 1)[0].removeprefix("remotes."), "ok": False, "error": p}
        for p in listing.problems
    ]
    return rows


def _sandbox(ctx: CliContext) -> dict[str, Any]:
    """The sandbox level skill code gets here, and allowlist lines that allow nothing."""
    level = execution.sandbox_level()
    return {
        "level": level.level,
        "network_isolated": level.network_isolated,
        "notes": list(level.notes),
        "require_sandbox": ctx.settings.require_sandbox,
        "ok": level.level == "bwrap" or not ctx.settings.require_sandbox,
        "allowlist_notices": execution.allowlist_notices(),
    }


def _audit_line(audit: dict[str, Any] | None, ctx: CliContext) -> list[str] | None:
    """The ``audit chain`` row: intact with its head, or the first break."""
    if audit is None:
        return None
    if audit["ok"]:
        head = audit["head"]
        return [
            "audit chain",
            f"{ctx.paint('intact', 'green')} ({audit['rows']} rows, head "
            f"{head['id']} {str(head['hash'])[:16]}…)",
        ]
    first = audit["problems"][0]
    more = len(audit["problems"]) - 1
    tail = f" (+{more} more: skilldeck session verify)" if more else ""
    return [
        "audit chain",
        f"{ctx.paint('BROKEN', 'red')} at id {first['id']} "
        f"({first['kind']}): {first['message']}{tail}",
    ]


def cmd_doctor(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck doctor``."""
    fmt = ctx.output_format()
    report = collect(ctx, args.timeout)
    backend = report["sessions"]
    audit = backend.get("audit")
    reachable = bool(backend.get("reachable"))
    healthy = reachable and (audit is None or bool(audit["ok"])) and report["sandbox"]["ok"]
    if fmt == "json":
        ctx.emit_json({**report, "ok": healthy})
        return 0 if healthy else 1
    state = ctx.paint("reachable", "green") if reachable else ctx.paint("UNREACHABLE", "red")
    rows = [
        ["home", report["home"]],
        ["config", report["config"] + ("" if report["config_exists"] else " (absent)")],
        ["sessions backend", str(backend.get("backend"))],
        ["sessions location", str(backend.get("location"))],
        ["sessions state", state],
    ]
    if backend.get("schema_version") is not None:
        rows.append(["sessions schema", str(backend["schema_version"])])
    if backend.get("server_version"):
        rows.append(["server version", str(backend["server_version"])])
    audit_row = _audit_line(audit, ctx)
    if audit_row:
        rows.append(audit_row)
    for key in ("note", "error"):
        if backend.get(key):
            rows.append([f"sessions {key}", str(backend[key])])
    rows += [["config problem", problem] for problem in report["config_problems"]]
    rows += _sandbox_rows(report["sandbox"], ctx)
    for remote in report["remotes"]:
        state = f"ok ({remote.get('skills', 0)} skills)" if remote["ok"] else remote["error"]
        rows.append(
            [f"remote {remote['label']}", ctx.paint(state, "green" if remote["ok"] else "red")]
        )
    for line in table(rows):
        ctx.echo(line)
    return 0 if healthy else 1


def _sandbox_rows(sandbox: dict[str, Any], ctx: CliContext) -> list[list[str]]:
    """The ``sandbox`` row, what its level does not stop, and ignored allowlist lines."""
    level = sandbox["level"]
    shown = ctx.paint(level, "green") if level == "bwrap" else ctx.paint(level, "yellow")
    if not sandbox["ok"]:
        shown = ctx.paint(f"{level} (require_sandbox is on: runs are refused)", "red")
    rows = [["sandbox", shown]]
    rows += [["sandbox note", note] for note in sandbox["notes"]]
    rows += [
        ["allowlist", f"{notice} ('skilldeck allow SKILL SCRIPT' writes one)"]
        for notice in sandbox["allowlist_notices"]
    ]
    return rows
