"""``skilldeck config`` (every effective setting and where it came from),
``skilldeck run SKILL SCRIPT [ARG...]`` (run an allowed script of a skill) and
``skilldeck allow SKILL SCRIPT`` (allow it, pinned to every file of the skill)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, safe, table
from skilldeck.core import execution
from skilldeck.core.config import config_path, effective_settings

if TYPE_CHECKING:
    from skilldeck.core.execution import RunResult


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
        description="Run SCRIPT (a path inside the skill folder) with ARGs in the sandbox "
        "(bubblewrap where available; skilldeck doctor shows the level): a private copy of "
        "the skill, no shell, no network, a timeout and capped output. Allowed only when "
        "skills_exec is on and the skill as it is now is allowed by 'skilldeck allow' or "
        "approved for --session (a permission pins every file of the skill). Exit status: "
        "the script's own; 124 when it timed out; 125 when Skilldeck refused or failed to "
        "run it. Give script arguments that look like Skilldeck's global options (--format, "
        "--root, -q, ...) after '--'.",
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
    p = sub.add_parser(
        "allow",
        help="allow a script or toolset of a skill as it is now (SKILLDECK_HOME/ALLOWLIST.txt)",
        description="Pin every file of the skill (a manifest of SHA-256 digests, shown) and "
        "add the line 'SKILL/SCRIPT skill-sha256:DIGEST' to SKILLDECK_HOME/ALLOWLIST.txt, "
        "the only allowlist Skilldeck reads. Any later change to any file of the skill "
        "needs a new 'allow'.",
    )
    p.add_argument("skill", help="skill name")
    p.add_argument("script", help="path of the script or toolset module inside the skill")
    p.add_argument("--dry-run", action="store_true", help="show what would be pinned only")
    p.add_argument(
        "--digest",
        metavar="HEX",
        help="allow only if the skill still has this digest (the one --dry-run showed)",
    )
    p.set_defaults(func=cmd_allow)


def cmd_config(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck config``."""
    fmt = ctx.output_format()
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


RUN_TIMED_OUT = 124
"""Exit status of ``skilldeck run`` when the script was killed at the time limit."""


def script_exit_status(exit_code: int, timed_out: bool) -> int:
    """The exit status ``skilldeck run`` passes on for a script that ran.

    The script's own status, unchanged (0-255); :data:`RUN_TIMED_OUT` (124) when it was
    killed at the time limit; 128+N when a signal N killed it (the shell's convention).
    Skilldeck's own refusals and errors exit 125 (see ``OWN_ERROR_EXIT`` in
    :mod:`skilldeck.cli.main`), as ``env`` and ``timeout`` do.
    """
    if timed_out:
        return RUN_TIMED_OUT
    if exit_code < 0:
        return min(128 - exit_code, 255)
    return min(exit_code, 255)


def cmd_run(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck run SKILL SCRIPT [ARG...]``: the script's own exit status (see
    :func:`script_exit_status`); 125 when Skilldeck refused or failed to run it."""
    fmt = ctx.output_format()
    script_args = list(args.args)
    if script_args[:1] == ["--"]:
        script_args = script_args[1:]
    door = ctx.workspace().actions
    result = door.run(args.skill, args.script, script_args, actor="operator", session=args.session)
    run = result.run
    code = script_exit_status(run.exit_code, run.timed_out)
    if fmt == "json":
        ctx.emit_json(result.to_dict())
        return code
    ctx.out.write(safe(run.stdout, multiline=True) if ctx.out.isatty() else run.stdout)
    ctx.out.flush()
    for line in run.stderr.rstrip("\n").splitlines():
        print(f"  | {safe(line)}", file=sys.stderr)  # framed: cannot pass for a note
    for note in _notes(run) + _relative_hints(run, script_args):
        ctx.warn(note)
    return code


def _relative_hints(run: RunResult, args: list[str]) -> list[str]:
    """When a failed run was given a relative path that exists here: scripts run in the
    skill folder, so say how to pass the file."""
    if run.exit_code == 0:
        return []
    here = [a for a in args if not a.startswith(("-", "/")) and os.path.exists(a)]
    return [
        f"scripts run in their skill folder: pass {a!r} as {os.path.abspath(a)!r}" for a in here
    ]


def cmd_allow(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck allow SKILL SCRIPT``: 0 when allowed (or already), 2 when refused."""
    fmt = ctx.output_format()
    request = execution.resolve_script(ctx.workspace().resolve(args.skill), args.script)
    line = execution.allowlist_line(request.ref, request.digest)
    added = False
    if not args.dry_run:
        line, added = execution.add_to_allowlist(request, args.digest)
    files = [{"path": f.rel, "sha256": f.sha256} for f in request.snapshot.files]
    if fmt == "json":
        ctx.emit_json({"line": line, "added": added, "dry_run": args.dry_run, "files": files})
        return 0
    ctx.echo(f"{request.skill.name} at {request.skill.base_dir}: {len(files)} files pinned")
    for line_text in table([[f["sha256"][:16], f["path"]] for f in files]):
        ctx.echo(f"  {line_text}")
    verb = "would add" if args.dry_run else ("added" if added else "already in")
    ctx.echo(f"{verb} {allowlist_path_text()}: {line}")
    return 0


def allowlist_path_text() -> str:
    """Where the allowlist is, for messages."""
    return str(execution.allowlist_path())


def _notes(run: RunResult) -> list[str]:
    notes = [f"sandbox: {run.sandbox}", *run.warnings]
    if run.truncated:
        notes.append("output was cut at 1 MB")
    if run.timed_out:
        notes.append(f"timed out after {run.duration_ms} ms; the script was killed")
    elif run.exit_code != 0:
        notes.append(f"script exited with {run.exit_code}")
    return notes
