"""Remote catalogs (federation): ``skilldeck remote list|show|approve``.

``remote list`` asks every configured remote (``[remotes.LABEL]`` in config.toml) for its
skills and shows each with its review state (exit 1 when a remote is unavailable or a
table is unusable). ``remote show LABEL:NAME`` asks for one skill's current entry, fetches
its SKILL.md (verified against its digest) and prints its manifest, what changed since it
was approved, and the SKILL.md, and remembers the digest it printed. ``remote approve
LABEL:NAME [--digest HEX]`` records the operator's approval of exactly the manifest they were
shown (every file's URI and digest, nothing downloaded): the entry fetched to approve must
have the digest ``remote show`` printed last (or ``--digest``), else nothing is approved. A
later change to any file needs a new approval.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, safe, table
from skilldeck.core import remote
from skilldeck.core.errors import SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.remote import Listing
    from skilldeck.core.workspace import RemoteSource


def register(sub: Any) -> None:
    """Register ``remote``."""
    p = sub.add_parser(
        "remote",
        help="remote skill catalogs: list them, show and approve their skills",
        description="Remote catalogs are MCP servers with the Skills extension named in "
        "config.toml ([remotes.LABEL] url/token_file or command). Their skills are named "
        "LABEL:NAME; agents may load one only once approved as it is now.",
    )
    actions = p.add_subparsers(dest="remote_action", metavar="ACTION")
    actions.required = True
    q = actions.add_parser("list", help="every remote and its skills with review states")
    q.add_argument("--refresh", action="store_true", help="ignore the cached listing")
    q.set_defaults(func=cmd_list)
    q = actions.add_parser("show", help="fetch one remote skill, verify it, print it")
    q.add_argument("name", help="LABEL:NAME")
    q.set_defaults(func=cmd_show)
    q = actions.add_parser(
        "approve", help="approve one remote skill as it was shown (by remote show or --digest)"
    )
    q.add_argument("name", help="LABEL:NAME")
    q.add_argument(
        "--digest",
        metavar="HEX",
        default=None,
        help="the remote-sha256 you reviewed (12+ hex digits); default: the one remote show "
        "printed last. Refused when the remote now serves another",
    )
    q.set_defaults(func=cmd_approve)


def remotes_of(ctx: CliContext) -> RemoteSource:
    """The remote catalogs of this run's workspace (nothing is discovered or asked yet)."""
    return ctx.open_workspace(ctx.roots).remotes


def remote_listing(ctx: CliContext) -> Listing | None:
    """The remotes' listing for ``doctor`` (None when none is configured)."""
    return remotes_of(ctx).listing()


def cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remote list``; exit 1 when a remote is unavailable or misconfigured."""
    fmt = ctx.output_format()
    listing = remotes_of(ctx).listing(refresh=args.refresh) or remote.Listing()
    approvals = remote.read_approvals()
    skills = [
        {
            "name": e.qualified,
            "remote": e.label,
            "uri": e.uri,
            "description": e.description,
            "digest": f"remote-sha256:{e.digest}",
            "review": remote.review_of(e, approvals).state,
        }
        for e in listing.entries
    ]
    healthy = all(s.ok for s in listing.statuses) and not listing.problems
    if fmt == "json":
        ctx.emit_json(
            {
                "remotes": [s.to_dict() for s in listing.statuses],
                "problems": list(listing.problems),
                "skills": skills,
                "ok": healthy,
            }
        )
        return 0 if healthy else 1
    for status in listing.statuses:
        state = ctx.paint("ok", "green") if status.ok else ctx.paint("UNAVAILABLE", "red")
        ctx.echo(f"{status.label}  {safe(status.where)}  {state}  {status.skills} skill(s)")
    rows = [[ctx.paint(h, "dim") for h in ("NAME", "REVIEW", "DESCRIPTION")]]
    for item in skills:
        color = {"approved": "green", "changed": "red"}.get(item["review"], "yellow")
        rows.append(
            [
                ctx.paint(safe(item["name"]), "bold"),
                ctx.paint(item["review"], color),
                safe(item["description"][:100]),
            ]
        )
    for line in table(rows if skills else []):
        ctx.echo(line)
    for note in listing.notes:
        ctx.echo(ctx.paint(safe(note), "red"))
    if not listing.statuses and not listing.problems and not ctx.quiet:
        ctx.echo(ctx.paint("no remotes configured ([remotes.LABEL] in config.toml)", "dim"))
    return 0 if healthy else 1


def _review_lines(review: Any) -> list[str]:
    lines = [f"review: {review.state}"]
    lines += [f"  {change} {safe(path)}" for change, path in review.changes]
    return lines


def cmd_show(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remote show LABEL:NAME``: its current entry and its SKILL.md (verified
    against its digest and its frontmatter against the entry's)."""
    fmt = ctx.output_format()
    loaded = remotes_of(ctx).show(args.name)  # remembers the digest shown
    entry = loaded.entry
    text = loaded.data.decode("utf-8", "replace")
    if fmt == "json":
        ctx.emit_json(
            {
                "name": entry.qualified,
                "uri": entry.uri,
                "digest": f"remote-sha256:{entry.digest}",
                "review": loaded.review.state,
                "changes": [list(c) for c in loaded.review.changes],
                "manifest": entry.manifest,
                "frontmatter": entry.frontmatter,
                "skill_md": text,
            }
        )
        return 0
    ctx.echo(f"{safe(entry.qualified)}  {safe(entry.uri)}")
    ctx.echo(f"digest: remote-sha256:{entry.digest} (SKILL.md verified)")
    for line in _review_lines(loaded.review):
        ctx.echo(line)
    ctx.echo("manifest:")
    for line in entry.manifest.splitlines():
        ctx.echo(f"  {safe(line)}")
    ctx.echo("")
    ctx.echo(safe(text, multiline=True))
    return 0


def cmd_approve(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remote approve LABEL:NAME``: approve its entry (every file's URI and
    digest) when it is the one shown (``--digest``, else what ``remote show`` printed
    last); nothing is downloaded."""
    fmt = ctx.output_format()
    try:
        approval = remotes_of(ctx).approve(args.name, args.digest)
    except SkilldeckError as exc:
        if exc.details.get("reason") != "not_shown":
            raise
        raise SkilldeckError(
            exc.code,
            f"{safe(args.name)} was never shown here: review it with skilldeck remote show "
            f"{safe(args.name)} (it prints the digest), then approve it, or pass --digest",
            **exc.details,
        ) from None
    entry, before, line, added = approval.entry, approval.before, approval.line, approval.added
    tools = entry.frontmatter.get("allowed-tools")
    if fmt == "json":
        ctx.emit_json(
            {
                "name": entry.qualified,
                "line": line,
                "added": added,
                "previous": before.state,
                "changes": [list(c) for c in before.changes],
                "files": [f.rel for f in entry.files],
                "allowed_tools": tools,
            }
        )
        return 0
    for text in _review_lines(before):
        ctx.echo(text)
    ctx.echo(f"files: {len(entry.files)}; allowed-tools granted: {safe(str(tools or '-'))}")
    verb = "approved" if added else "already approved"
    ctx.echo(f"{verb}: {safe(line)}")
    return 0
