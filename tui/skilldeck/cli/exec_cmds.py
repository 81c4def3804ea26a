"""``skilldeck config`` (every effective setting and where it came from) and
``skilldeck run SKILL SCRIPT [ARG...]`` (run an allowed script of a skill)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill

FORMATS = ("text", "json")


def register(sub: Any) -> None:
    """Register ``config`` and ``run``."""
    p = sub.add_parser(
        "config",
        help="print every effective setting and where it came from",
        description="Print each setting with its value and source: default, the config "
        "file, or the environment variable that set it (feature flags skills_v1 and "
        "skills_exec included).",
    )
    p.set_defaults(func=cmd_config)
    p = sub.add_parser(
        "run",
        help="run an allowed script of a skill (needs skills_exec)",
        description="Run SCRIPT (a path inside the skill folder) with ARGs: no shell, a "
        "scrubbed environment, a timeout, capped output and no network where unshare "
        "works. Allowed only when skills_exec is on and the script is in an ALLOWLIST.txt "
        "or approved for --session (approvals name the script's hash).",
    )
    p.add_argument("skill", help="skill name")
    p.add_argument("script", help="path of the script inside the skill folder")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.add_argument(
        "--session",
        metavar="ID",
        default=None,
        help="session whose approvals apply (give it before SKILL: what follows SCRIPT "
        "goes to the script)",
    )
    p.set_defaults(func=cmd_run)


def cmd_config(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck config``."""
    from skilldeck.core.config import config_path, effective_settings

    fmt = ctx.output_format(FORMATS)
    rows = effective_settings(ctx.settings)
    problems = [d.message for d in ctx.settings.diagnostics]
    if fmt == "json":
        ctx.emit_json(
            {
                "config": str(config_path()),
                "settings": {name: {"value": v, "source": src} for name, v, src in rows},
                "problems": problems,
            }
        )
        return 0
    ctx.echo(f"config file: {config_path()}")
    lines = [[name, json.dumps(value, ensure_ascii=False), src] for name, value, src in rows]
    for line in table(lines):
        ctx.echo(line)
    for problem in problems:
        ctx.warn(problem)
    return 0


def find_skill(ctx: CliContext, name: str) -> Skill:
    """The workspace's skill called ``name``; NOT_FOUND otherwise."""
    skill = ctx.workspace().by_name(name)
    if skill is None:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"no skill named {name!r}")
    return skill


def cmd_run(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck run SKILL SCRIPT [ARG...]``: exit code 0 when the script exited 0, 1
    when it failed or timed out, 2 when the run was refused."""
    from skilldeck.core.execution import execute
    from skilldeck.core.sessions import SessionStore

    fmt = ctx.output_format(FORMATS)
    skill = find_skill(ctx, args.skill)
    script_args = list(args.args)
    if script_args[:1] == ["--"]:
        script_args = script_args[1:]
    with SessionStore(settings=ctx.settings) as store:
        result = execute(
            ctx.settings,
            skill,
            args.script,
            script_args,
            store=store,
            session_id=args.session,
            actor="operator",
        )
    code = 0 if result["exit_code"] == 0 and not result["timed_out"] else 1
    if fmt == "json":
        ctx.emit_json(result)
        return code
    ctx.out.write(result["stdout"])
    ctx.out.flush()
    if result["stderr"]:
        ctx.warn(result["stderr"].rstrip("\n"))
    for note in _notes(result):
        ctx.warn(note)
    return code


def _notes(result: dict[str, Any]) -> list[str]:
    notes = list(result["warnings"])
    if result["truncated"]:
        notes.append("output was cut at 1 MB")
    if result["timed_out"]:
        notes.append(f"timed out after {result['duration_ms']} ms; the script was killed")
    elif result["exit_code"] != 0:
        notes.append(f"script exited with {result['exit_code']}")
    return notes
