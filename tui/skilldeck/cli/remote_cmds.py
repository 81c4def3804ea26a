"""Remote catalogs (federation): ``skilldeck remote list|show|approve``.

``remote list`` asks every configured remote (``[remotes.LABEL]`` in config.toml) for its
skills and shows each with its review state (exit 1 when a remote is unavailable or a
table is unusable). ``remote show LABEL:NAME`` asks for one skill's current entry, fetches
its SKILL.md (verified against its digest) and prints its manifest, what changed since it
was approved, and the SKILL.md. ``remote approve LABEL:NAME`` records the operator's
approval of exactly the current manifest (every file's URI and digest, nothing downloaded):
a later change to any file needs a new one.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, safe, table
from skilldeck.core import remote
from skilldeck.core.limits import AGENT_LIMIT, HUMAN_LIMIT

if TYPE_CHECKING:
    from collections.abc import Callable

    from skilldeck.core.remote import Listing
    from skilldeck.core.search import SearchResponse
    from skilldeck.core.workspace import Scope, Workspace


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
    q = actions.add_parser("approve", help="approve one remote skill as it is now")
    q.add_argument("name", help="LABEL:NAME")
    q.set_defaults(func=cmd_approve)


def remote_listing(ctx: CliContext) -> Listing | None:
    """The remotes' listing for ``list`` and ``doctor`` (None when none is configured)."""
    if not ctx.settings.remotes:
        return None  # nothing to ask: the federation code is not even loaded
    federation = remote.Federation(ctx.settings)
    return federation.listing() if federation.configured else None


def remote_search(
    ctx: CliContext,
    workspace: Workspace,
    scope: Scope,
    args: argparse.Namespace,
    tools: set[str] | None,
) -> Callable[[str], SearchResponse] | None:
    """For ``skilldeck search``: a search over local and remote skills when remotes are
    configured and listed some (skipped ones are reported on stderr), else None."""
    listing = remote_listing(ctx)
    if listing is None:
        return None
    for note in listing.notes:
        ctx.warn(note)
    if not listing.documents:
        return None

    if not workspace.generation:
        workspace.discover()
    combined = remote.CombinedSearch(workspace, scope)
    limit = args.limit or (AGENT_LIMIT if args.agent else HUMAN_LIMIT)

    def run(query: str) -> SearchResponse:
        return combined.search(
            listing.documents,
            query,
            limit,
            tools=tools,
            agent=args.agent,
            explain=args.explain,
        )

    return run


def cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck remote list``; exit 1 when a remote is unavailable or misconfigured."""
    fmt = ctx.output_format()
    federation = remote.Federation(ctx.settings)
    listing = federation.listing(refresh=args.refresh)
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
    if not federation.configured and not ctx.quiet:
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
    loaded = remote.Federation(ctx.settings).load(args.name, agent=False)
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
    """``skilldeck remote approve LABEL:NAME``: approve its current entry (every file's URI
    and digest); nothing is downloaded (``remote show`` prints it first)."""
    fmt = ctx.output_format()
    entry = remote.Federation(ctx.settings).current(args.name)
    before = remote.review_of(entry)
    line, added = remote.approve(entry)
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
