"""Install commands: add, check, update, remove, sync (skills from git, pinned and reviewed).

Exit codes: 0 when everything asked for was done (``check``: every skill ``ok``), 1 when
something was refused, declined or is not ``ok``, 2 for usage and I/O errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.install import Candidate, Finding, Lockfile, SkillReview, UpdatePlan
    from skilldeck.core.tools import ToolRegistry

_STATE_COLOR = {"ok": "green", "modified": "yellow", "missing": "red", "outdated": "cyan"}
_SEV_COLOR = {"error": "red", "warning": "yellow", "info": "blue"}


def register(sub: Any) -> None:
    """Register the install commands."""
    p = sub.add_parser("add", help="install skills from a git repository or folder")
    p.add_argument("source", help="git URL (https, ssh, file://), local repository or folder")
    p.add_argument("--skill", action="append", default=[], metavar="NAME", help="only this one")
    p.add_argument("--ref", default="", help="branch, tag or commit (default: the remote HEAD)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="replace a same-named skill installed from another source (shown as an update)",
    )
    _common(p, yes=True)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("check", help="verify installed skills against skills-lock.toml")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these skills")
    p.add_argument("--remote", action="store_true", help="also ask the sources for new commits")
    p.add_argument("--to", default=None, help="user, project or a skills folder")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("update", help="fetch, review and apply updates of installed skills")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these skills")
    _common(p, yes=True)
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("remove", help="uninstall a skill and drop it from the lockfile")
    p.add_argument("names", nargs="+", metavar="NAME")
    _common(p, yes=False)
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("sync", help="place installed skills in the folders agents read")
    p.add_argument("--agent", action="append", default=[], help="claude, codex, gemini, opencode")
    p.add_argument("--dest", action="append", default=[], type=Path, help="or any folder")
    p.add_argument("--mode", choices=("copy", "symlink"), default="copy")
    _common(p, yes=False)
    p.set_defaults(func=cmd_sync)


def _common(p: argparse.ArgumentParser, *, yes: bool) -> None:
    p.add_argument("--to", default=None, help="user, project or a skills folder")
    p.add_argument("--force", action="store_true", help="override error findings and edits")
    if yes:
        p.add_argument("--yes", "-y", action="store_true", help="apply without asking")


def _lock(ctx: CliContext, to: str | None, *, must_exist: bool) -> Lockfile:
    from skilldeck.core.install import read_lock, target_root

    lock = read_lock(target_root(to))
    if must_exist and not lock.path.is_file():
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"no lockfile at {lock.path} (install with skilldeck add)"
        )
    return lock


def _registry(ctx: CliContext) -> ToolRegistry | None:
    try:
        from skilldeck.core.tools import ToolRegistry

        return ToolRegistry.load(ctx.settings)
    except (SkilldeckError, OSError):
        return None


def _confirm(question: str) -> bool:
    """Ask on the terminal; False when there is none."""
    if not sys.stdin.isatty():
        return False
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------------------- printing


def _finding_line(ctx: CliContext, f: Finding, sign: str = "") -> str:
    where = f.file + (f":{f.line}" if f.line else "") if f.file else ""
    sev = ctx.paint(f.severity, _SEV_COLOR.get(f.severity, "dim"))
    return f"    {sign}{ctx.paint(f.code, 'bold')} {sev} {where + ': ' if where else ''}{f.message}"


def _show_review(ctx: CliContext, review: SkillReview, subpath: str) -> None:
    ctx.echo(ctx.paint(review.name, "bold") + ctx.paint(f"  ({subpath})", "dim"))
    for reason in review.refused:
        ctx.echo("    " + ctx.paint("refused", "red") + f": {reason}")
    for f in review.findings:
        ctx.echo(_finding_line(ctx, f))
    if not review.findings and not review.refused:
        ctx.echo("    " + ctx.paint("no findings", "green"))
    if review.tools:
        ctx.echo("    tools: " + ", ".join(f"{n} ({s})" for n, s in review.tools))
    ctx.echo("    scripts: " + (", ".join(review.scripts) or "none"))


def _show_diff(ctx: CliContext, text: str) -> None:
    for line in text.rstrip("\n").split("\n"):
        color = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        color = "bold" if line.startswith(("+++", "---")) else color
        color = "cyan" if line.startswith("@@") else color
        ctx.echo("    " + (ctx.paint(line, color) if color else line))


# ---------------------------------------------------------------------------- add


def cmd_add(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck add SOURCE``."""
    from skilldeck.core.install import candidates, fetched
    from skilldeck.core.install.git import is_url, parse_shorthand

    fmt = ctx.output_format(("text", "json"))
    lock = _lock(ctx, args.to, must_exist=False)
    short = parse_shorthand(args.source)
    if short is not None:
        ctx.warn(f"{args.source}: GitHub shorthand for {short.url}")
        args.source, args.ref = short.url, args.ref or short.ref
    elif not is_url(args.source) and not args.source.startswith("-"):
        args.source = str(Path(args.source).expanduser().resolve())  # lock an absolute path
    inside = short.subpath if short is not None else ""
    with fetched(args.source, args.ref) as fetch:
        found = candidates(fetch, lock, profile=ctx.profile, registry=_registry(ctx))
        found = [c for c in found if not inside or f"{c.subpath}/".startswith(f"{inside}/")]
        chosen = _select(found, args.skill, args.source)
        if fmt == "text":
            ctx.echo(
                f"{args.source} @ {(fetch.commit or 'local folder')[:12]}: "
                f"{len(found)} skill(s); installing into {lock.root}"
            )
            for c in chosen:
                _show_review(ctx, c.review, c.subpath)
        results = [_add_one(ctx, args, lock, c, fetch.commit or "", fmt) for c in chosen]
    if fmt == "json":
        ctx.emit_json({"target": str(lock.root), "lockfile": str(lock.path), "skills": results})
    return 0 if all(r["action"] == "installed" for r in results) else 1


def _select(found: list[Candidate], names: list[str], source: str) -> list[Candidate]:
    if not found:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{source}: no SKILL.md found")
    if not names:
        return found
    by_name = {c.review.name: c for c in found}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SkilldeckError(
            ErrorCode.NOT_FOUND,
            f"{source} has no skill {', '.join(unknown)} (it has {', '.join(sorted(by_name))})",
            available=sorted(by_name),
        )
    return [by_name[n] for n in dict.fromkeys(names)]


def _add_one(
    ctx: CliContext, args: argparse.Namespace, lock: Lockfile, c: Candidate, commit: str, fmt: str
) -> dict[str, Any]:
    from skilldeck.core.install import blockers, install, source_switch

    record: dict[str, Any] = {**c.review.to_dict(), "subpath": c.subpath, "reasons": []}
    reasons = blockers(c, lock, force=args.force, source=args.source, replace=args.replace)
    switch = source_switch(lock, c, args.source, commit) if not reasons else None
    if switch is not None:
        record["replaces"] = switch.to_dict()
        if fmt == "text":
            ctx.echo(
                ctx.paint(f"{c.review.name} replaces the copy from {switch.entry.source}:", "bold")
            )
            _show_plan(ctx, switch)
    if reasons:
        record.update(action="refused", reasons=reasons)
        for reason in reasons:
            ctx.warn(f"{c.review.name}: not installed: {reason}")
        return record
    if not args.yes and (fmt == "json" or not _confirm(f"Install {c.review.name}?")):
        record["action"] = "declined"
        ctx.warn(f"{c.review.name}: not installed (confirm, or pass --yes)")
        return record
    entry = install(lock, c, args.source, args.ref, commit)
    record.update(action="installed", sha256=entry.sha256, commit=entry.commit)
    if fmt == "text":
        ctx.echo(ctx.paint(f"installed {entry.name}", "green") + f" -> {lock.root / entry.name}")
    return record


# ---------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck check``: exit 0 when every locked skill is ``ok``."""
    from skilldeck.core.install import check

    fmt = ctx.output_format(("text", "json"))
    lock = _lock(ctx, args.to, must_exist=True)
    statuses = check(lock, remote=args.remote, names=args.names or None)
    all_ok = all(s.state == "ok" for s in statuses)
    if fmt == "json":
        ctx.emit_json(
            {
                "lockfile": str(lock.path),
                "root": str(lock.root),
                "ok": all_ok,
                "skills": [s.to_dict() for s in statuses],
            }
        )
        return 0 if all_ok else 1
    rows = [
        [ctx.paint(s.entry.name, "bold"), ctx.paint(s.state, _STATE_COLOR[s.state]), s.detail]
        for s in statuses
    ]
    for line in table(rows):
        ctx.echo(line)
    counts = {state: sum(s.state == state for s in statuses) for state in _STATE_COLOR}
    summary = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
    ctx.echo(
        ctx.paint(f"{len(statuses)} skill(s): {summary or 'none locked'} ({lock.path})", "dim")
    )
    return 0 if all_ok else 1


# ---------------------------------------------------------------------------- update


def cmd_update(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck update [NAME...]``: show each change, apply what is confirmed."""
    from skilldeck.core.install import prepared_updates

    fmt = ctx.output_format(("text", "json"))
    lock = _lock(ctx, args.to, must_exist=True)
    results: list[dict[str, Any]] = []
    with prepared_updates(
        lock, args.names or None, profile=ctx.profile, registry=_registry(ctx)
    ) as plans:
        for plan in plans:
            if fmt == "text":
                _show_plan(ctx, plan)
            results.append(_update_one(ctx, args, lock, plan, fmt))
    if fmt == "json":
        ctx.emit_json({"lockfile": str(lock.path), "skills": results})
    done = ("updated", "up-to-date")
    return 0 if all(r["action"] in done for r in results) else 1


def _show_plan(ctx: CliContext, plan: UpdatePlan) -> None:
    entry = plan.entry
    head = f"{entry.name}: {entry.commit[:12] or 'local'} -> {plan.commit[:12] or 'local'}"
    ctx.echo(ctx.paint(head, "bold") + (f"  [{plan.state}]" if plan.state != "ok" else ""))
    if not plan.has_changes:
        ctx.echo("    " + ctx.paint("up to date", "green"))
        return
    for change in plan.changes:
        ctx.echo(f"  {change.status}: {change.path}")
        if change.diff:
            _show_diff(ctx, change.diff)
    for f in plan.added:
        ctx.echo(_finding_line(ctx, f, "new "))
    for f in plan.removed:
        ctx.echo(_finding_line(ctx, f, "gone "))
    if plan.candidate is not None:
        review = plan.candidate.review
        if review.tools:
            ctx.echo("    tools: " + ", ".join(f"{n} ({s})" for n, s in review.tools))
        ctx.echo("    scripts: " + (", ".join(review.scripts) or "none"))


def _update_one(
    ctx: CliContext, args: argparse.Namespace, lock: Lockfile, plan: UpdatePlan, fmt: str
) -> dict[str, Any]:
    from skilldeck.core.install import apply_update, update_blockers

    record = {**plan.to_dict(), "reasons": []}
    name = plan.entry.name
    if not plan.has_changes and plan.state == "ok":
        record["action"] = "up-to-date"
        return record
    reasons = update_blockers(plan, force=args.force)
    if reasons:
        record.update(action="refused", reasons=reasons)
        for reason in reasons:
            ctx.warn(f"{name}: not updated: {reason}")
        return record
    if not args.yes and (fmt == "json" or not _confirm(f"Apply the update of {name}?")):
        record["action"] = "declined"
        ctx.warn(f"{name}: not updated (confirm, or pass --yes)")
        return record
    entry = apply_update(lock, plan)
    record.update(action="updated", sha256=entry.sha256)
    if fmt == "text":
        ctx.echo(ctx.paint(f"updated {name}", "green") + f" to {entry.commit[:12] or 'local'}")
    return record


# ---------------------------------------------------------------------------- remove / sync


def cmd_remove(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remove NAME...``: local edits are kept unless ``--force``."""
    from skilldeck.core.install import state_of
    from skilldeck.core.install.apply import remove_installed

    fmt = ctx.output_format(("text", "json"))
    lock = _lock(ctx, args.to, must_exist=True)
    results = []
    for name in args.names:
        entry = lock.entries.get(name)
        if entry is None:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is not in {lock.path}")
        if state_of(lock, entry) == "modified" and not args.force:
            ctx.warn(f"{name}: not removed: it has local edits (use --force to remove anyway)")
            results.append({"name": name, "action": "refused"})
            continue
        remove_installed(lock, name)
        results.append({"name": name, "action": "removed"})
        if fmt == "text":
            ctx.echo(f"removed {name}")
    if fmt == "json":
        ctx.emit_json({"lockfile": str(lock.path), "skills": results})
    return 0 if all(r["action"] == "removed" for r in results) else 1


def cmd_sync(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck sync --agent NAME``: copy or link installed skills for agents."""
    from skilldeck.core.install.sync import agent_dir, sync_to

    fmt = ctx.output_format(("text", "json"))
    if not args.agent and not args.dest:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "name at least one --agent or --dest")
    lock = _lock(ctx, args.to, must_exist=True)
    project = lock.root.parent.name == ".agents" and lock.root != _user_root()
    base = lock.root.parent.parent if project else Path.home()
    dests = [agent_dir(a, base) for a in args.agent] + [d.expanduser() for d in args.dest]
    results = [r for d in dests for r in sync_to(lock, d, mode=args.mode, force=args.force)]
    if fmt == "json":
        ctx.emit_json({"mode": args.mode, "results": [r.to_dict() for r in results]})
    else:
        for r in results:
            color = "yellow" if r.action == "skipped" else "green"
            tail = f": {r.reason}" if r.reason else ""
            ctx.echo(f"{ctx.paint(r.action, color)} {r.name} -> {r.dest}{tail}")
    return 0 if all(r.action != "skipped" for r in results) else 1


def _user_root() -> Path:
    return Path.home() / ".agents" / "skills"
