"""Who may talk to the HTTP server: a bearer token, and a Host and Origin that name the
address the server is bound to.

A loopback port is reachable by every local user and, through DNS rebinding, by web pages.
So every request must carry ``Authorization: Bearer TOKEN`` (the token lives in
``SKILLDECK_HOME/mcp-token``, mode 0600, made on first use; ``serve --http … --no-auth``
turns this off with a warning), compared in constant time; and its ``Host`` (and
``Origin``, when sent) must name the bound address in any spelling of it (``127.0.0.1``,
``localhost``, ``[::1]``, ``[0:0:0:0:0:0:0:1]``, any case) with the bound port. Anything
else gets 401, 403 or 421 before the MCP layer sees it.

A token also says who the client is: the server's own token is the client ``default``, and
``skilldeck token add NAME`` makes a token of its own for each further client
(``SKILLDECK_HOME/mcp-clients/NAME``, 0600; read again whenever that folder changes, so
adding or revoking needs no restart). The name is put in the request scope under
:data:`CLIENT_SCOPE_KEY`: clients without a connection of their own (2026-era HTTP, one
request per exchange) get one session per token, never one per self-declared name; a
connection session (``Mcp-Session-Id``) answers only the token that opened it.

A refusal never reads the request body and closes the connection after answering.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import secrets
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from skilldeck.core.config import home_dir

TOKEN_FILE = "mcp-token"
CLIENTS_DIR = "mcp-clients"
DEFAULT_CLIENT = "default"
CLIENT_SCOPE_KEY = "skilldeck.client"
"""Scope key naming the authenticated client of a request (absent with ``--no-auth``)."""
_CLIENT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_path() -> Path:
    """``SKILLDECK_HOME/mcp-token``."""
    return home_dir() / TOKEN_FILE


def load_token() -> tuple[str, bool]:
    """The server's bearer token and whether it was made just now (then it is shown once).

    A new token is written with mode 0600, never over an existing file.
    """
    path = token_path()
    try:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token, False
    except FileNotFoundError:
        pass
    path.unlink(missing_ok=True)  # an empty file: made again
    return _write_token(path), True


def _write_token(path: Path) -> str:
    """A new random token written to ``path`` (mode 0600, never over an existing file)."""
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def clients_dir() -> Path:
    """``SKILLDECK_HOME/mcp-clients``: one token file per named client."""
    return home_dir() / CLIENTS_DIR


def check_client_name(name: str) -> str:
    """``name`` when it is a valid client name (lower-case letters, digits, ``-``).

    Raises:
        ValueError: The name is not valid, or is the reserved ``default``.
    """
    if not _CLIENT_NAME.match(name) or name == DEFAULT_CLIENT:
        raise ValueError(
            f"client name {name!r}: use 1-64 lower-case letters, digits and '-' "
            f"(not {DEFAULT_CLIENT!r}, the server's own token)"
        )
    return name


def add_client(name: str) -> str:
    """Make the token of a new named client and return it.

    Raises:
        ValueError: A bad name.
        FileExistsError: The client has a token already.
    """
    return _write_token(clients_dir() / check_client_name(name))


def revoke_client(name: str) -> bool:
    """Delete a named client's token; False when there was none."""
    path = clients_dir() / check_client_name(name)
    if not path.is_file():
        return False
    path.unlink()
    return True


def client_tokens() -> dict[str, str]:
    """Every named client's token by name (files with bad names or no token are skipped)."""
    found: dict[str, str] = {}
    try:
        entries = sorted(clients_dir().iterdir())
    except OSError:
        return found
    for entry in entries:
        if not _CLIENT_NAME.match(entry.name) or entry.name == DEFAULT_CLIENT:
            continue
        try:
            token = entry.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if token:
            found[entry.name] = token
    return found


def _same_host(name: str, bound: str) -> bool:
    """True when ``name`` (a Host or Origin host, brackets removed) spells ``bound``."""
    name, bound = name.lower().rstrip("."), bound.lower()
    if name == bound:
        return True
    loopback = {"127.0.0.1", "::1", "localhost"}
    if name == "localhost":
        return bound in loopback
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if bound == "localhost":
        return address in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
    try:
        return address == ipaddress.ip_address(bound)
    except ValueError:
        return False


def host_allowed(value: str, bound: str, port: int) -> bool:
    """True when the ``host[:port]`` text ``value`` names ``bound`` at ``port``."""
    parsed = urllib.parse.urlsplit(f"//{value}")
    try:
        given = parsed.port
    except ValueError:
        return False
    return parsed.hostname is not None and given == port and _same_host(parsed.hostname, bound)


class HttpGuard:
    """ASGI middleware in front of the MCP app (see the module docstring).

    Args:
        app: The MCP Starlette app.
        bound: The host the server listens on, as given to ``--http``.
        token: The server's bearer token (client ``default``), or None for ``--no-auth``.
    """

    def __init__(self, app: App, bound: str, token: str | None) -> None:
        self.app = app
        self.bound = bound
        self.token = token
        self._clients: dict[str, str] = {}
        self._clients_seen: float | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(scope)
            if refusal is not None:
                await _reply(send, *refusal)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and reason a request is refused with, or None to let it through."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        port = int((scope.get("server") or ("", 0))[1] or 0)
        if not host_allowed(headers.get("host", ""), self.bound, port):
            return 421, "the Host header does not name this server"
        origin = headers.get("origin")
        if origin is not None and origin != "null":
            parts = urllib.parse.urlsplit(origin)
            if parts.scheme != "http" or not host_allowed(parts.netloc, self.bound, port):
                return 403, "requests from other origins are refused"
        if self.token is not None:
            client = self.client_of(headers.get("authorization", ""))
            if client is None:
                return 401, f"a bearer token is required (see {token_path()})"
            scope[CLIENT_SCOPE_KEY] = client
            scope["user"] = _principal(client, headers["authorization"])
        return None

    def client_of(self, authorization: str) -> str | None:
        """The client whose token ``authorization`` carries, or None.

        Every known token is compared, each in constant time, so the time taken does not
        say which one (or how much of one) matched.
        """
        given = authorization.encode("latin-1", "replace")
        tokens = {DEFAULT_CLIENT: self.token or "", **self._named_clients()}
        found = None
        for name, token in tokens.items():
            if token and hmac.compare_digest(given, f"Bearer {token}".encode()):
                found = name
        return found

    def _named_clients(self) -> dict[str, str]:
        """The named clients' tokens, read again when their folder changed."""
        try:
            seen: float | None = clients_dir().stat().st_mtime
        except OSError:
            seen = None
        if seen != self._clients_seen:
            self._clients = client_tokens() if seen is not None else {}
            self._clients_seen = seen
        return self._clients


def _principal(client: str, authorization: str) -> Any:
    """The SDK's authenticated user for ``client`` holding the token in ``authorization``.

    The SDK's session manager records the user that opened a connection session
    (``Mcp-Session-Id``) and answers 404, as for an unknown session, when a request (POST,
    the GET event stream, DELETE) on it comes with another: a session is bound to the
    token that opened it. The subject is a digest of the token, never the token itself.
    """
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    subject = hashlib.sha256(authorization.encode("latin-1", "replace")).hexdigest()
    return AuthenticatedUser(AccessToken(token="", client_id=client, scopes=[], subject=subject))


async def _reply(send: Send, status: int, reason: str) -> None:
    """Refuse with ``status``; the body is never read and the connection is closed after
    the answer (a refused client that trickles a long body cannot keep it open)."""
    body = (reason + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
