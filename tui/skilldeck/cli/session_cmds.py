"""Session commands.

``skilldeck session new|list|show|load|approve|deny|revoke|mode|check|pending|end|prune|verify``
(``tools`` and ``telemetry`` are in :mod:`skilldeck.cli.tools_cmds`).
Unknown session ids exit 2 (NOT_FOUND); ``verify`` exits 1 when the audit chain is broken.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core import execution, sessions
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import MODES, iso
from skilldeck.core.workspace import SessionRef

if TYPE_CHECKING:
    from skilldeck.core.sessions import AuditVerification, Session
    from skilldeck.core.workspace import Actions


def register(sub: Any) -> None:
    """Register ``session``."""
    session = sub.add_parser(
        "session",
        help="govern agent sessions: approvals, denials, audit",
        description="Sessions shared by the TUI, the CLI and MCP servers (SQLite under "
        "SKILLDECK_HOME, or the PostgreSQL database of SKILLDECK_SESSIONS_URL for a fleet; "
        "see skilldeck doctor). Modes: strict (only tools allowed by active skills or approved), "
        "approval (other tools wait for an operator), permissive (allowed, logged). A denial "
        "wins over an approval, which wins over a skill's allowed-tools. Patterns such as "
        "Bash(git log:*) match the tool Bash; a call Bash(cmd) must also match the pattern.",
    )
    ssub = session.add_subparsers(dest="session_command", metavar="SUBCOMMAND")
    ssub.required = True
    _register_session_reads(ssub)
    _register_session_changes(ssub)


def _register_session_reads(ssub: Any) -> None:
    """``session new``, ``list``, ``show``, ``check``, ``pending``."""
    p = ssub.add_parser("new", help="start a session; prints its id")
    p.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="policy mode (default: session_mode setting, 'approval')",
    )
    p.add_argument("--label", default="", help="free text shown with the session")
    p.set_defaults(func=cmd_new)

    p = ssub.add_parser("list", help="list sessions")
    p.add_argument("--all", action="store_true", help="include ended sessions")
    p.set_defaults(func=cmd_list)

    p = ssub.add_parser("show", help="one session with its audit log")
    p.add_argument("id")
    p.set_defaults(func=cmd_show)

    p = ssub.add_parser(
        "check", help="may the session use this tool? exit 0 allowed, 1 not (queues approval)"
    )
    p.add_argument("id")
    p.add_argument("tool")
    p.add_argument("--actor", default="agent", help="who asks (default: agent)")
    p.set_defaults(func=cmd_check)

    p = ssub.add_parser("pending", help="tools waiting for approval")
    p.add_argument("id")
    p.set_defaults(func=cmd_pending)

    p = ssub.add_parser(
        "verify",
        help="check the audit log's hash chain; exit 0 intact, 1 broken",
        description="Check that no audit row was deleted, edited or reordered, and that the "
        "head kept outside the rows names the newest one. Prints the head hash: record it "
        "elsewhere and check later with --head that it is still in the chain (anyone who "
        "can write the database could rewrite the whole chain; a recorded head catches that).",
    )
    p.add_argument(
        "--head",
        metavar="HASH",
        default=None,
        help="a head hash printed by an earlier verify: it must still be in the chain",
    )
    p.set_defaults(func=cmd_verify)


def _register_session_changes(ssub: Any) -> None:
    """``session load``, ``approve``, ``deny``, ``revoke``, ``mode``, ``end``, ``prune``."""
    p = ssub.add_parser("load", help="force-load a skill into a session (actor: operator)")
    p.add_argument("id")
    p.add_argument("skill", help="skill name")
    p.add_argument("arguments", nargs=argparse.REMAINDER, help="arguments for $ARGUMENTS")
    p.set_defaults(func=cmd_load)

    for name, verb in (
        ("approve", "approve"),
        ("deny", "deny"),
        ("revoke", "forget an approval or denial of"),
    ):
        p = ssub.add_parser(name, help=f"{verb} a tool (or a skill's script) for a session")
        p.add_argument("id")
        p.add_argument("tool", nargs="?", help="tool name, e.g. Bash or Bash(git log:*)")
        p.add_argument(
            "--script",
            metavar="SKILL/PATH",
            default=None,
            help="a skill's script instead of a tool; pinned to the digest of the pending "
            "request (refused when the skill changed since)",
        )
        p.add_argument(
            "--toolset",
            metavar="SKILL/PATH",
            default=None,
            help="a skill's toolset module (my-skill/toolsets/index.py); pinned as --script",
        )
        p.add_argument(
            "--digest",
            metavar="HEX",
            default=None,
            help="with --script/--toolset: the skill-sha256 you reviewed (12+ hex digits); "
            "nothing is decided unless it names one request (or the skill on disk)",
        )
        p.set_defaults(func=cmd_tool_state, action=name)

    p = ssub.add_parser("mode", help="change a session's policy mode")
    p.add_argument("id")
    p.add_argument("mode", choices=MODES)
    p.set_defaults(func=cmd_mode)

    p = ssub.add_parser("end", help="end a session")
    p.add_argument("id")
    p.set_defaults(func=cmd_end)

    p = ssub.add_parser(
        "prune",
        help="delete ended sessions (their audit log stays until audit_retention_days)",
        description="Delete sessions ended more than DAYS ago, and the oldest audit rows past "
        "audit_retention_days (config, default 365) that belong to no open session. A "
        "checkpoint row keeps the audit chain verifiable (skilldeck session verify).",
    )
    p.add_argument(
        "--older-than",
        type=float,
        default=30.0,
        metavar="DAYS",
        help="ended more than DAYS ago (default 30; at least 1)",
    )
    p.set_defaults(func=cmd_prune)


# ------------------------------------------------------------------------------ helpers


def _store(ctx: CliContext) -> Any:
    return sessions.SessionStore(settings=ctx.settings)


def _door(ctx: CliContext) -> Actions:
    """The write door; a session change needs no discovery, so none is run for it."""
    return ctx.open_workspace(ctx.roots).actions


def _session_lines(ctx: CliContext, session: Session) -> list[str]:
    state = "ended " + str(iso(session.ended)) if session.ended else "open"
    rows = [
        ["id", ctx.paint(session.id, "bold")],
        ["mode", session.mode],
        ["state", state],
        ["created", str(iso(session.created))],
    ]
    if session.label:
        rows.append(["label", session.label])
    rows.append(["skills", ", ".join(session.active_skills) or "-"])
    rows.append(["allowed", ", ".join(session.allowed_tools) or "-"])
    rows.append(
        ["approved", ctx.paint(", ".join(session.approved), "green") if session.approved else "-"]
    )
    rows.append(["denied", ctx.paint(", ".join(session.denied), "red") if session.denied else "-"])
    rows.append(
        ["pending", ctx.paint(", ".join(session.pending), "yellow") if session.pending else "-"]
    )
    return table(rows)


def _print_session(ctx: CliContext, session: Session) -> None:
    for line in _session_lines(ctx, session):
        ctx.echo(line)


def _respond(ctx: CliContext, session: Session) -> int:
    fmt = ctx.output_format()
    if fmt == "json":
        ctx.emit_json(session.to_dict())
    else:
        _print_session(ctx, session)
    return 0


# ----------------------------------------------------------------------------- sessions


def cmd_new(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session new``."""
    fmt = ctx.output_format()
    door = _door(ctx)
    with _store(ctx) as store:
        session = door.create(store, actor="operator", mode=args.mode, label=args.label)
    if fmt == "json":
        ctx.emit_json({"id": session.id, **session.to_dict()})
    else:
        ctx.echo(session.id)
    return 0


def cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session list``."""
    fmt = ctx.output_format()
    with _store(ctx) as store:
        listed = store.list(include_ended=args.all)
    if fmt == "json":
        ctx.emit_json({"sessions": [s.to_dict() for s in listed]})
        return 0
    if not listed:
        ctx.echo("no sessions" + ("" if args.all else " open (--all shows ended ones)"))
        return 0
    rows = [["ID", "MODE", "STATE", "CREATED", "SKILLS", "PENDING", "LABEL"]]
    for s in listed:
        rows.append(
            [
                s.id,
                s.mode,
                "ended" if s.ended else "open",
                str(iso(s.created))[:19].replace("T", " "),
                str(len(s.skills)),
                str(len(s.pending)),
                s.label,
            ]
        )
    for line in table(rows):
        ctx.echo(line)
    return 0


def cmd_show(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session show ID``: the session and its audit log."""
    fmt = ctx.output_format()
    with _store(ctx) as store:
        data = store.show(args.id)
        session = store.get(args.id)
    drift = _changed_since(ctx, session.approved + session.pending)
    if fmt == "json":
        ctx.emit_json({**data, "changed_since": drift})
        return 0
    _print_session(ctx, session)
    for entry, changes in drift.items():
        ctx.echo(ctx.paint(f"changed since {entry}:", "red"))
        for change in changes:
            ctx.echo(f"  {change['change']:<8} {change['path']}")
    ctx.echo()
    ctx.echo(ctx.paint("audit", "bold"))
    rows = [
        [
            str(e["id"]),
            str(e["time"])[:23].replace("T", " "),
            e["actor"],
            e["action"],
            e["subject"],
            sessions.run_outcome(e["detail"])[0] if e["action"] == "script_exit" else "",
        ]
        for e in data["audit"]
    ]
    for line in table(rows):
        ctx.echo("  " + line)
    return 0


def _changed_since(ctx: CliContext, entries: list[str]) -> dict[str, list[dict[str, str]]]:
    """For each script or toolset entry whose skill no longer has the pinned digest, the
    files that changed since, file by file (``[]`` when that list is unknown here)."""
    drift: dict[str, list[dict[str, str]]] = {}
    for entry in entries:
        request = execution.parse_file_request(entry)
        if request is None:
            continue
        review = execution.review_file_request(request, ctx.workspace().by_name(request.skill))
        if review.error is None and not review.matches:
            changes = review.changes or ()
            drift[entry] = [{"change": c, "path": p} for c, p in changes]
    return drift


def cmd_load(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session load ID SKILL [ARGS]``: operator force-load."""
    fmt = ctx.output_format()
    door = ctx.workspace().actions
    arguments = " ".join(a for a in args.arguments if a != "--")
    with _store(ctx) as store:
        loaded, session = door.force_load(
            args.skill, arguments, store=store, session=args.id, source="cli"
        )
    if fmt == "json":
        ctx.emit_json({"session": session.to_dict(), "load": loaded.result.to_dict()})
    else:
        ctx.echo(loaded.result.text)
    return 0


def cmd_tool_state(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session approve|deny|revoke ID TOOL``; a file (``--script``,
    ``--toolset``) is decided at the digest of its pending request (or ``--digest``), and an
    approval only while the skill on disk still has it."""
    ctx.output_format()
    with _store(ctx) as store:
        tool = _tool_or_script(args, ctx, store.get(args.id))
        door, here = _door(ctx), SessionRef(store, args.id)
        change = {"approve": door.approve, "deny": door.deny, "revoke": door.revoke}
        session = change[args.action](tool, actor="operator", session=here)
    return _respond(ctx, session)


def _tool_or_script(args: argparse.Namespace, ctx: CliContext, session: Session) -> str:
    """The entry to change: TOOL, or ``Script(SKILL/PATH@skill-sha256:HEX)`` for
    ``--script`` (``Toolset(…)`` for ``--toolset``) at the digest the operator was shown
    (:func:`~skilldeck.core.execution.bind_approval`)."""
    toolset = getattr(args, "toolset", None)
    given = [v for v in (args.tool, args.script, toolset) if v is not None]
    if len(given) != 1:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, "give one of TOOL, --script SKILL/PATH or --toolset SKILL/PATH"
        )
    if args.tool is not None:
        if args.digest is not None:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, "--digest goes with --script or --toolset"
            )
        return str(args.tool)

    name, _, path = str(args.script or toolset).partition("/")
    skill = ctx.workspace().resolve(name)
    if toolset is not None:
        now = execution.toolset_approval_for(skill, path)
    else:
        request = execution.resolve_script(skill, path)
        execution.remember_manifest(request.snapshot)
        now = execution.approval_key(request.ref, request.digest)
    entries = session.approved + session.denied if args.action == "revoke" else session.pending
    return execution.bind_approval(now, entries, args.digest, on_disk=args.action == "approve")


def cmd_mode(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session mode ID MODE``."""
    ctx.output_format()
    door = _door(ctx)
    with _store(ctx) as store:
        session = door.set_mode(args.mode, actor="operator", session=SessionRef(store, args.id))
    return _respond(ctx, session)


def cmd_check(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session check ID TOOL``: exit 0 when the tool is allowed, 1 when it is
    not (denied, or waiting for approval), like a finding."""
    fmt = ctx.output_format()
    door = _door(ctx)
    with _store(ctx) as store:
        store.get(args.id)
        decision = door.check(args.tool, actor=args.actor, session=SessionRef(store, args.id))
    code = 0 if decision.allowed else 1
    if fmt == "json":
        ctx.emit_json(decision.to_dict())
        return code
    color = {"allowed": "green", "requires_approval": "yellow"}.get(decision.decision, "red")
    ctx.echo(
        f"{ctx.paint(decision.decision, color)} ({decision.reason}"
        + (f": {decision.matched}" if decision.matched else "")
        + ")"
    )
    return code


def cmd_pending(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session pending ID``."""
    fmt = ctx.output_format()
    with _store(ctx) as store:
        pending = store.pending(args.id)
    if fmt == "json":
        ctx.emit_json({"id": args.id, "pending": pending})
    elif not pending:
        ctx.echo(f"nothing waiting for approval in session {args.id}")
    else:
        for tool in pending:
            ctx.echo(tool)
    return 0


def cmd_end(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session end ID``."""
    ctx.output_format()
    door = _door(ctx)
    with _store(ctx) as store:
        session = door.end(actor="operator", session=SessionRef(store, args.id))
    return _respond(ctx, session)


def cmd_prune(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session prune [--older-than DAYS]``."""
    fmt = ctx.output_format()
    if not args.older_than >= 1:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"--older-than must be at least 1 (day), got {args.older_than:g}: sessions ended "
            "less than a day ago are kept",
        )
    door = _door(ctx)
    with _store(ctx) as store:
        result = door.prune(store, args.older_than, actor="operator")
    if fmt == "json":
        ctx.emit_json(result.to_dict())
    else:
        ctx.echo(
            f"pruned {result.sessions} session(s) and {result.audit} audit row(s) past retention"
        )
    return 0


def cmd_verify(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck session verify [--head HASH]``: exit 0 when the audit chain holds, 1
    when it does not."""
    fmt = ctx.output_format()
    with _store(ctx) as store:
        found = store.verify_audit(args.head)
    if fmt == "json":
        ctx.emit_json(found.to_dict())
    else:
        for line in verify_lines(ctx, found):
            ctx.echo(line)
    return 0 if found.ok else 1


def verify_lines(ctx: CliContext, found: AuditVerification) -> list[str]:
    """The text report of an audit verification (``session verify``)."""
    head = f"head id {found.head_id} sha256 {found.head_hash}" if found.head_hash else "no head"
    if found.ok:
        lines = [f"{ctx.paint('audit chain intact', 'green')}: {found.rows} row(s), {head}"]
        if found.anchor is not None:
            lines.append(f"recorded head {found.anchor} is in the chain (id {found.anchor_id})")
        else:
            lines.append("record the head hash elsewhere; later: skilldeck session verify --head")
        return lines
    count = len(found.problems)
    lines = [f"{ctx.paint('audit chain BROKEN', 'red')}: {count} problem(s) in {found.rows} row(s)"]
    rows = [[f"id {p.id}", p.kind, p.message] for p in found.problems]
    lines += ["  " + line for line in table(rows)]
    lines.append(head)
    return lines
