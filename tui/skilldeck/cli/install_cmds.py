"""Install commands: add, check, update, remove, sync, install, verify (skills from git
or a well-known skills index, pinned and reviewed; ``install`` and ``verify`` also follow a
``skills-lock.json``), and publish (write a well-known index for a folder of skills).

Exit codes: 0 when everything asked for was done (``check``: every skill ``ok``; ``update``:
also when the user answered no and kept the installed version), 1 when something was
refused, could not be confirmed (no terminal, no ``--yes``) or is not ``ok``, 2 for usage
and I/O errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core import install, tools
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install import Reason

if TYPE_CHECKING:
    from skilldeck.core.install import (
        Candidate,
        Finding,
        IndexEntry,
        Lockfile,
        SkillReview,
        SyncResult,
        UpdatePlan,
    )
    from skilldeck.core.tools import ToolRegistry

_STATE_COLOR = {"ok": "green", "modified": "yellow", "missing": "red", "outdated": "cyan"}
_SEV_COLOR = {"error": "red", "warning": "yellow", "info": "blue"}


_ADVICE = {
    "error_findings": "use --force to {verb} anyway",
    "local_edits": "use --force to replace them",
    "other_source": "use --replace to switch sources: the diff and new findings are shown first",
    "unsafe_source": "nothing overrides this: a local source must be a folder of regular "
    "files within the size caps",
}


def advised(reason: Reason, verb: str) -> str:
    """A refusal reason with the CLI's advice for its code (``verb``: install, apply)."""
    advice = _ADVICE.get(reason.code)
    return f"{reason.text} ({advice.format(verb=verb)})" if advice else reason.text


def register(sub: Any) -> None:
    """Register the install commands."""
    p = sub.add_parser(
        "add", help="install skills from a git repository, a folder or a well-known index"
    )
    p.add_argument(
        "source",
        help="git URL (https, ssh, file://), local repository or folder; or https://HOST "
        "(reads HOST/.well-known/agent-skills/index.json) or an index.json URL",
    )
    p.add_argument("--skill", action="append", default=[], metavar="NAME", help="only this one")
    p.add_argument("--ref", default="", help="branch, tag or commit (default: the remote HEAD)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="replace a same-named skill installed from another source (shown as an update)",
    )
    _common(p, yes=True)
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("check", help="check installed skills against skills-lock.toml or .json")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these skills")
    p.add_argument("--remote", action="store_true", help="also ask the sources for new commits")
    p.add_argument("--lock", type=Path, default=None, help="the lockfile (default: found)")
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

    _register_locks(sub)


def _register_locks(sub: Any) -> None:
    """Register the commands that follow a lock as it travels: install, verify, publish,
    sync."""
    p = sub.add_parser(
        "install", help="install the skills a lockfile names (skills-lock.toml or .json)"
    )
    p.add_argument(
        "--frozen",
        action="store_true",
        help="install exactly what the lock says; fail on any drift, changing nothing",
    )
    p.add_argument("--lock", type=Path, default=None, help="the lockfile (default: found)")
    _common(p, yes=False)
    p.set_defaults(func=cmd_install)

    p = sub.add_parser("verify", help="compare every installed file with the lock's digests")
    p.add_argument("--lock", type=Path, default=None, help="the lockfile (default: found)")
    p.add_argument("--to", default=None, help="user, project or a skills folder")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("publish", help="write a well-known skills index for a folder of skills")
    p.add_argument("folder", type=Path, help="a skill folder, or a folder of skill folders")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        help="the site folder: SITE/.well-known/agent-skills/ is (re)written",
    )
    p.set_defaults(func=cmd_publish)

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
    lock = install.read_lock(install.target_root(to))
    if must_exist and not lock.path.is_file():
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"no lockfile at {lock.path} (install with skilldeck add)"
        )
    return lock


def _registry(ctx: CliContext) -> ToolRegistry | None:
    try:
        return tools.ToolRegistry.load(ctx.settings)
    except (SkilldeckError, OSError):
        return None


def _confirm(question: str) -> bool | None:
    """Ask on the terminal: True for yes, False for no, None when there is no terminal."""
    if not sys.stdin.isatty():
        return None
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return None
    return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------------------- printing


def _step(ctx: CliContext, text: str) -> None:
    """Tell the progress line (drawn on a terminal only) what long step runs now."""
    if ctx.progress is not None:
        ctx.progress(text)


_TALLY = {
    "installed": "installed",
    "updated": "updated",
    "up-to-date": "up to date",
    "unchanged": "up to date",
    "refused": "refused",
    "declined": "skipped",
    "kept": "skipped",
}
_SKIPPED_WHY = {
    "declined": "not confirmed (answer on a terminal, or pass --yes)",
    "kept": "kept as installed (answered no)",
}


def _summary(ctx: CliContext, verb: str, results: list[dict[str, Any]]) -> None:
    """End a review with what became of each skill: a count per outcome, then one line
    per refusal (with why) and per kind of skip (with the names), so that one refusal
    among hundreds of reviewed skills is not lost above them."""
    if ctx.quiet:
        return
    first = "installed" if verb == "add" else "updated"
    counts = dict.fromkeys([first, *(["up to date"] if verb == "update" else [])], 0)
    counts.update(refused=0, skipped=0)
    for r in results:
        label = _TALLY.get(r["action"], "skipped")
        counts[label] = counts.get(label, 0) + 1
    ctx.echo(ctx.paint(f"{verb}: " + ", ".join(f"{n} {k}" for k, n in counts.items()), "bold"))
    for r in results:
        if r["action"] == "refused":
            why = "; ".join(r.get("reasons") or []) or "refused"
            ctx.echo(f"  {ctx.paint('refused', 'red')} {r['name']}: {why}")
    for action, why in _SKIPPED_WHY.items():
        names = [r["name"] for r in results if r["action"] == action]
        if names:
            ctx.echo(f"  {ctx.paint('skipped', 'yellow')} {', '.join(names)}: {why}")


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
    fmt = ctx.output_format()
    lock = _lock(ctx, args.to, must_exist=False)
    index = install.index_url(args.source)
    if index is not None:
        return _add_from_index(ctx, args, lock, index, fmt)
    short = install.parse_shorthand(args.source)
    if short is not None:
        ctx.warn(f"{args.source}: GitHub shorthand for {short.url}")
        args.source, args.ref = short.url, args.ref or short.ref
    elif not install.is_url(args.source) and not args.source.startswith("-"):
        args.source = str(Path(args.source).expanduser().resolve())  # lock an absolute path
    inside = short.subpath if short is not None else ""
    _step(ctx, f"fetching {args.source}")
    with install.fetched(args.source, args.ref) as fetch:
        found = install.candidates(
            fetch, lock, profile=ctx.profile, registry=_registry(ctx), progress=ctx.progress
        )
        _step(ctx, "")
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
    else:
        _summary(ctx, "add", results)
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
    ctx: CliContext,
    args: argparse.Namespace,
    lock: Lockfile,
    c: Candidate,
    commit: str,
    fmt: str,
    listed: tuple[IndexEntry, str] | None = None,
) -> dict[str, Any]:
    """Install one candidate; ``listed``: its index entry and the index URL that answered
    (a skill from a well-known index)."""
    record: dict[str, Any] = {**c.review.to_dict(), "subpath": c.subpath, "reasons": []}
    reasons = install.blockers(c, lock, force=args.force, source=args.source, replace=args.replace)
    if listed is not None and c.review.name != listed[0].name:
        text = f"its SKILL.md names it {c.review.name!r}, the index {listed[0].name!r}"
        reasons.append(Reason("name_mismatch", text))
    switch = install.source_switch(lock, c, args.source, commit) if not reasons else None
    if switch is not None:
        record["replaces"] = switch.to_dict()
        if fmt == "text":
            ctx.echo(
                ctx.paint(f"{c.review.name} replaces the copy from {switch.entry.source}:", "bold")
            )
            _show_plan(ctx, switch)
    if reasons:
        said = [advised(reason, "install") for reason in reasons]
        record.update(action="refused", reasons=said, reason_codes=[r.code for r in reasons])
        for text in said:
            ctx.warn(f"{c.review.name}: not installed: {text}")
        return record
    if not args.yes and (fmt == "json" or not _confirm(f"Install {c.review.name}?")):
        record["action"] = "declined"
        ctx.warn(f"{c.review.name}: not installed (confirm, or pass --yes)")
        return record
    if listed is not None:
        entry = install.install(
            lock, c, args.source, "", "", digest=listed[0].digest, resolved_index=listed[1]
        )
        record.update(digest=entry.digest, version=entry.version, resolvedIndex=listed[1])
    else:
        entry = install.install(lock, c, args.source, args.ref, commit)
    record.update(action="installed", sha256=entry.sha256, commit=entry.commit)
    if fmt == "text":
        ctx.echo(ctx.paint(f"installed {entry.name}", "green") + f" -> {lock.root / entry.name}")
    return record


def _add_from_index(
    ctx: CliContext, args: argparse.Namespace, lock: Lockfile, url: str, fmt: str
) -> int:
    """``skilldeck add https://HOST``: the skills a well-known index lists, each artifact
    verified against its digest, then reviewed and installed as from git."""
    if args.ref:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "--ref does not apply to a skills index")
    index = install.read_index(url)
    args.source = url
    for warning in index.warnings:
        ctx.warn(f"{url}: {warning}")
    chosen = _select_listed(index.entries, args.skill, url)
    if fmt == "text":
        ctx.echo(
            f"{url}: {len(index.entries)} skill(s) listed; installing "
            f"{len(chosen)} into {lock.root}"
        )
        rows = [[ctx.paint(e.name, "bold"), e.type, e.description] for e in index.entries.values()]
        for line in table(rows):
            ctx.echo("  " + line)
    results: list[dict[str, Any]] = []
    _step(ctx, f"fetching {len(chosen)} skill(s) from {url}")
    with install.fetched_index(chosen) as (fetch, problems):
        for name, problem in problems.items():
            ctx.warn(f"{name}: not installed: {problem}")
            results.append({"name": name, "action": "refused", "reasons": [problem]})
        found = install.candidates(
            fetch, lock, profile=ctx.profile, registry=_registry(ctx), progress=ctx.progress
        )
        _step(ctx, "")
        for c in found:
            if fmt == "text":
                _show_review(ctx, c.review, index.entries[c.subpath].url)
            listed = (index.entries[c.subpath], index.resolved)
            results.append(_add_one(ctx, args, lock, c, "", fmt, listed))
    if fmt == "json":
        ctx.emit_json(
            {
                "target": str(lock.root),
                "lockfile": str(lock.path),
                "index": url,
                "resolvedIndex": index.resolved,
                "listed": [e.to_dict() for e in index.entries.values()],
                "warnings": index.warnings,
                "skills": results,
            }
        )
    else:
        _summary(ctx, "add", results)
    return 0 if results and all(r["action"] == "installed" for r in results) else 1


def _select_listed(listed: dict[str, IndexEntry], names: list[str], url: str) -> list[IndexEntry]:
    if not listed:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{url}: the index lists no usable skill")
    unknown = [n for n in names if n not in listed]
    if unknown:
        raise SkilldeckError(
            ErrorCode.NOT_FOUND,
            f"{url} lists no skill {', '.join(unknown)} (it lists {', '.join(sorted(listed))})",
            available=sorted(listed),
        )
    return [listed[n] for n in dict.fromkeys(names)] if names else list(listed.values())


# ---------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck check``: exit 0 when every locked skill is ``ok``."""
    fmt = ctx.output_format()
    lock = _travel_lock(args)
    statuses = install.check(lock, remote=args.remote, names=args.names or None)
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
        ctx.paint(
            f"{len(statuses)} skill(s): {summary or 'none locked'} "
            f"({lock.path}; installed in {lock.root})",
            "dim",
        )
    )
    return 0 if all_ok else 1


# ---------------------------------------------------------------------------- update


def cmd_update(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck update [NAME...]``: show each change, apply what is confirmed."""
    fmt = ctx.output_format()
    lock = _lock(ctx, args.to, must_exist=True)
    results: list[dict[str, Any]] = []
    with install.prepared_updates(
        lock,
        args.names or None,
        profile=ctx.profile,
        registry=_registry(ctx),
        progress=ctx.progress,
    ) as plans:
        _step(ctx, "")
        for plan in plans:
            if fmt == "text":
                _show_plan(ctx, plan)
            results.append(_update_one(ctx, args, lock, plan, fmt))
    if fmt == "json":
        ctx.emit_json({"lockfile": str(lock.path), "skills": results})
    else:
        _summary(ctx, "update", results)
    done = ("updated", "up-to-date", "unchanged", "kept")
    return 0 if all(r["action"] in done for r in results) else 1


def _show_plan(ctx: CliContext, plan: UpdatePlan) -> None:
    entry = plan.entry
    head = f"{entry.name}: {entry.commit[:12] or 'local'} -> {plan.commit[:12] or 'local'}"
    if entry.indexed:
        head = f"{entry.name}: {entry.digest[:19]} -> {plan.digest[:19] or 'not listed'}"
    ctx.echo(ctx.paint(head, "bold") + (f"  [{plan.state}]" if plan.state != "ok" else ""))
    if plan.unchanged:
        ctx.echo("    " + ctx.paint("unchanged: this skill's files did not change", "green"))
        return
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

    record = {**plan.to_dict(), "reasons": []}
    name = plan.entry.name
    if not plan.has_changes and plan.state == "ok":
        record["action"] = "unchanged" if plan.unchanged else "up-to-date"
        if plan.unchanged and plan.entry.indexed:
            install.refresh_pin(lock, plan)  # same files, new artifact: the lock takes its digest
        return record
    reasons = install.update_blockers(plan, force=args.force)
    if reasons:
        said = [advised(reason, "apply") for reason in reasons]
        record.update(action="refused", reasons=said, reason_codes=[r.code for r in reasons])
        for reason in said:
            ctx.warn(f"{name}: not updated: {reason}")
        return record
    answer = (
        True if args.yes else None if fmt == "json" else _confirm(f"Apply the update of {name}?")
    )
    if answer is False:
        record["action"] = "kept"
        if fmt == "text":
            ctx.echo(f"kept {name} at {plan.entry.commit[:12] or 'local'}")
        return record
    if answer is None:
        record["action"] = "declined"
        ctx.warn(f"{name}: not updated (confirm on a terminal, or pass --yes)")
        return record
    entry = install.apply_update(lock, plan)
    record.update(action="updated", sha256=entry.sha256)
    if fmt == "text":
        ctx.echo(ctx.paint(f"updated {name}", "green") + f" to {entry.commit[:12] or 'local'}")
    return record


# ---------------------------------------------------------------------------- remove / sync


def cmd_remove(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remove NAME...``: local edits are kept unless ``--force``."""
    fmt = ctx.output_format()
    lock = _lock(ctx, args.to, must_exist=True)
    results = []
    for name in args.names:
        entry = lock.entries.get(name)
        if entry is None:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is not in {lock.path}")
        if install.state_of(lock, entry) == "modified" and not args.force:
            ctx.warn(f"{name}: not removed: it has local edits (use --force to remove anyway)")
            results.append({"name": name, "action": "refused"})
            continue
        install.remove_installed(lock, name)
        results.append({"name": name, "action": "removed"})
        if fmt == "text":
            ctx.echo(f"removed {name}")
            _hint_sync(ctx, lock, name)
    if fmt == "json":
        ctx.emit_json({"lockfile": str(lock.path), "skills": results})
    return 0 if all(r["action"] == "removed" for r in results) else 1


def _hint_sync(ctx: CliContext, lock: Lockfile, name: str) -> None:
    """Say where sync placed ``name``: the next ``skilldeck sync`` prunes it there."""
    places = [dest for dest, names in sorted(install.read_record(lock).items()) if name in names]
    if places:
        where = ", ".join(places)
        ctx.echo(ctx.paint(f"  still in {where}: `skilldeck sync` there prunes it", "dim"))


def cmd_sync(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck sync --agent NAME``: copy or link installed skills for agents."""
    fmt = ctx.output_format()
    if not args.agent and not args.dest:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "name at least one --agent or --dest")
    lock = _lock(ctx, args.to, must_exist=True)
    project = lock.root.parent.name == ".agents" and lock.root != _user_root()
    base = lock.root.parent.parent if project else Path.home()
    dests = [install.agent_dir(a, base) for a in args.agent] + [d.expanduser() for d in args.dest]
    results = [r for d in dests for r in install.sync_to(lock, d, mode=args.mode, force=args.force)]
    if fmt == "json":
        ctx.emit_json({"mode": args.mode, "results": [r.to_dict() for r in results]})
    else:
        _show_sync(ctx, results)
    return 0 if all(r.action not in ("skipped", "kept") for r in results) else 1


def _show_sync(ctx: CliContext, results: list[SyncResult]) -> None:
    """One line per skill that changed or was left alone, then the counts."""
    colors = {"skipped": "yellow", "kept": "yellow", "pruned": "cyan", "unchanged": "dim"}
    for r in results:
        tail = f": {r.reason}" if r.reason else ""
        arrow = "from" if r.action in ("pruned", "kept") else "->"
        ctx.echo(
            f"{ctx.paint(r.action, colors.get(r.action, 'green'))} {r.name} {arrow} {r.dest}{tail}"
        )
    counts: dict[str, int] = {}
    for r in results:
        counts[r.action] = counts.get(r.action, 0) + 1
    order = ("placed", "updated", "pruned", "unchanged", "kept", "skipped")
    summary = ", ".join(f"{counts[a]} {a}" for a in order if counts.get(a))
    ctx.echo(ctx.paint(f"sync: {summary or 'nothing to do'}", "dim"))


def _user_root() -> Path:
    return Path.home() / ".agents" / "skills"


# ---------------------------------------------------------------------------- install / verify


def _travel_lock(args: argparse.Namespace) -> Lockfile:
    lock_file = args.lock.expanduser().resolve() if args.lock is not None else None
    return install.find_lock(args.to, lock_file)


def cmd_install(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck install [--frozen]``: what the lock names, checked against its digests."""
    fmt = ctx.output_format()
    lock = _travel_lock(args)
    with install.frozen_plan(
        lock, force=args.force, profile=ctx.profile, registry=_registry(ctx), progress=ctx.progress
    ) as plan:
        _step(ctx, "")
        placed = [] if (args.frozen and plan.drift) else install.apply_frozen(plan)
    record = {
        "lockfile": str(lock.path),
        "root": str(lock.root),
        "frozen": args.frozen,
        "installed": [p.name for p in placed],
        "present": plan.present,
        "drift": [d.to_dict() for d in plan.drift],
    }
    if fmt == "json":
        ctx.emit_json(record)
        return 1 if plan.drift else 0
    for path in placed:
        ctx.echo(ctx.paint(f"installed {path.name}", "green") + f" -> {path}")
    for name in plan.present:
        ctx.echo(f"{ctx.paint('ok', 'dim')} {name}")
    for drift in plan.drift:
        said = advised(Reason(drift.code, drift.problem), "install") if drift.code else ""
        ctx.warn(f"drift: {drift.name}: {said or drift.problem}")
    if args.frozen and plan.drift:
        ctx.warn(f"nothing was installed: {len(plan.drift)} skill(s) drifted from {lock.path}")
    skipped = len(plan.ready) - len(placed)
    ctx.echo(
        ctx.paint(
            f"install: {len(placed)} installed, {len(plan.present)} already in place, "
            f"{len(plan.drift)} refused (drift), {skipped} skipped ({lock.path})",
            "bold",
        )
    )
    for drift in plan.drift:
        ctx.echo(f"  {ctx.paint('refused', 'red')} {drift.name}: {drift.problem}")
    return 1 if plan.drift else 0


def cmd_verify(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck verify``: exit 1 when an installed file differs from the lock."""
    fmt = ctx.output_format()
    lock = _travel_lock(args)
    drifts = install.verify(lock)
    if fmt == "json":
        ctx.emit_json(
            {
                "lockfile": str(lock.path),
                "root": str(lock.root),
                "ok": not drifts,
                "checked": sorted(lock.entries),
                "drift": [d.to_dict() for d in drifts],
            }
        )
        return 1 if drifts else 0
    for drift in drifts:
        ctx.echo(f"{ctx.paint('drift', 'red')} {drift.name}: {drift.problem}")
    verdict = f"{len(drifts)} of {len(lock.entries)} skill(s) drifted" if drifts else "all match"
    ctx.echo(ctx.paint(f"verify: {verdict} ({lock.path}; installed in {lock.root})", "dim"))
    return 1 if drifts else 0


# ---------------------------------------------------------------------------- publish


def cmd_publish(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck publish DIR --out SITE``: exit 1 (writing nothing) when a skill is
    invalid."""
    fmt = ctx.output_format()
    done = install.publish_index(
        args.folder.expanduser().resolve(), args.out.expanduser().resolve()
    )
    if fmt == "json":
        ctx.emit_json(
            {
                "index": str(done.index) if done.index else None,
                "skills": [p.to_dict() for p in done.skills],
                "refused": [{"folder": str(f), "reason": r} for f, r in done.refused],
            }
        )
        return 1 if done.refused else 0
    for folder, reason in done.refused:
        ctx.warn(f"{folder}: refused: {reason}")
    if done.refused:
        ctx.warn("nothing was published: fix the skills above (skilldeck validate shows more)")
        return 1
    for p in done.skills:
        ctx.echo(f"{ctx.paint(p.name, 'bold')}  {p.type}  {p.digest[:19]}  {p.path}")
    ctx.echo(ctx.paint(f"published {len(done.skills)} skill(s): {done.index}", "dim"))
    return 0
