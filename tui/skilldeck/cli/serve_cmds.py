"""``skilldeck serve``: run the MCP server (stdio by default, or streamable HTTP).

The MCP SDK is imported only when the command runs, so other commands stay fast.
"""

from __future__ import annotations

import argparse
import ipaddress
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.core.errors import ErrorCode, SkilldeckError

MODES = ("strict", "approval", "permissive")


def register(sub: Any) -> None:
    """Register ``serve``."""
    parser = sub.add_parser(
        "serve",
        help="run the MCP server (stdio, or streamable HTTP on loopback)",
        description="Serve skills to MCP clients: search_skills, list_skills, load_skill, "
        "read_skill_resource and check_tool, plus skill:// resources. Each client gets a "
        "session in the shared store (see 'skilldeck session list').",
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
        "--mode",
        choices=MODES,
        help="policy mode of the sessions created (default: config session_mode)",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="join this existing session instead of creating one per client",
    )
    parser.set_defaults(func=run_serve)


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); loopback hosts only."""
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


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    from skilldeck.mcp.transport import run

    return run(service, http, auth=not args.no_auth)
