"""``skilldeck serve``: run the MCP server (stdio by default, or streamable HTTP).

The MCP SDK is imported only when the command runs, so other commands stay fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import MODES


def register(sub: Any) -> None:
    """Register ``serve``."""
    parser = sub.add_parser(
        "serve",
        help="run the MCP server (stdio, or streamable HTTP on loopback)",
        description="Serve skills to MCP clients: the tools and prompts listed below, plus "
        "skill:// resources. Each client gets a session in the shared store (see "
        "'skilldeck session list').",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio "
        "(loopback hosts only; port 0 picks a free port)",
    )
    parser.add_argument(
        "--no-auth",
        action="store_true",
        help="with --http: accept requests without the bearer token (any local user and "
        "any web page that reaches the port can then call the server)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=256,
        metavar="N",
        help="with --http: connection sessions open at once; more are refused with 503 "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--session-idle",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="with --http: close a connection session idle this long and end its "
        "store session (default: %(default)s)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --http: answer 408 and close a connection whose request body is not "
        "complete this long after its head (default: %(default)s)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="policy mode of the sessions created (default: config session_mode)",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="join this existing session instead of creating one per client",
    )
    parser.lazy_epilog = mcp_listing  # built only when --help is shown
    parser.set_defaults(func=run_serve)
    register_token(sub)


def mcp_listing() -> str:
    """Every MCP tool (from :data:`skilldeck.mcp.schemas.TOOLS`, which needs no MCP SDK) and
    the prompts, for ``serve --help``."""
    from skilldeck.mcp.schemas import TOOLS

    try:
        from skilldeck.mcp.prompts import ARGUMENT  # imports the MCP SDK's types
    except ImportError:
        ARGUMENT = "arguments"
    tools = "; ".join(f"{spec.name} ({spec.title})" for spec in TOOLS)
    return (
        f"MCP tools: {tools}. Prompts: one per enabled, model-visible skill, named after it, "
        f"with one optional argument '{ARGUMENT}' (its $ARGUMENTS)."
    )


def register_token(sub: Any) -> None:
    """Register ``token``: the bearer tokens of named HTTP clients."""
    parser = sub.add_parser(
        "token",
        help="bearer tokens of named clients of 'serve --http' (one session each)",
        description="Each named client gets a token of its own, so the HTTP server tells "
        "clients apart by what they hold, never by the name they declare. The server's own "
        "token (SKILLDECK_HOME/mcp-token) is the client 'default'. Changes apply to a "
        "running server at once.",
    )
    actions = parser.add_subparsers(dest="token_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="make a token for a new client and print it once")
    add.add_argument("name", help="client name: lower-case letters, digits and '-'")
    actions.add_parser("list", help="list the named clients (not their tokens)")
    revoke = actions.add_parser("revoke", help="delete a client's token")
    revoke.add_argument("name")
    parser.set_defaults(func=run_token)


def run_token(args: argparse.Namespace, ctx: CliContext) -> int:
    """Handler of ``skilldeck token add|list|revoke``."""
    from skilldeck.mcp import http_guard

    try:
        if args.token_action == "add":
            token = http_guard.add_client(args.name)
            ctx.warn(
                f"token of client {args.name} on stdout, shown once (save it as a remote's "
                "token_file, or send 'Authorization: Bearer <token>')"
            )
            ctx.echo(token)
            return 0
        if args.token_action == "revoke":
            if not http_guard.revoke_client(args.name):
                raise SkilldeckError(ErrorCode.NOT_FOUND, f"no client named {args.name!r}")
            ctx.echo(f"revoked the token of {args.name}")
            return 0
    except ValueError as exc:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, str(exc)) from exc
    except FileExistsError as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"client {args.name!r} has a token already; revoke it first to make a new one",
        ) from exc
    names = sorted(http_guard.client_tokens())
    if ctx.output_format() == "json":
        ctx.emit_json({"clients": names})
        return 0
    ctx.echo("\n".join(names) if names else "no named clients (only the server's own token)")
    return 0


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); loopback hosts only."""
    from skilldeck.core.web import is_loopback  # urllib: only when serving over HTTP

    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"--http {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765"
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    port = int(port_text)
    if port > 65535:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"--http {value!r}: port out of range")
    if not is_loopback(host):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"--http {value!r}: refusing to listen on non-loopback host {host!r}; "
            "use 127.0.0.1, ::1 or localhost",
        )
    return host, port


def run_serve(args: argparse.Namespace, ctx: CliContext) -> int:
    """Handler of ``skilldeck serve``."""
    http = parse_http(args.http) if args.http else None
    from skilldeck.mcp.service import SkillService

    service = SkillService(
        ctx.settings,
        ctx.roots,
        profile=ctx.profile,
        mode=args.mode,
        session_id=args.session,
    )
    from skilldeck.mcp.transport import HttpLimits, run

    timeouts = (args.session_idle, args.body_timeout)
    if args.max_sessions < 1 or not all(0 < t < float("inf") for t in timeouts):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            "--max-sessions must be at least 1, --session-idle and --body-timeout a positive "
            "number of seconds",
        )
    limits = HttpLimits(args.max_sessions, args.session_idle, args.body_timeout)
    return run(service, http, auth=not args.no_auth, limits=limits)
