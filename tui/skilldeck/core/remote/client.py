"""A small MCP client for the Skills extension's requests, over streamable HTTP or stdio.

The core may not import the ``mcp`` SDK (a test enforces it) and federation runs in every
face, the CLI's ``list`` and ``doctor`` included, so this speaks the protocol directly and
synchronously:

* **HTTP**: the 2026-07-28 single-exchange POST (no handshake, no session): one JSON-RPC
  request per POST with the ``_meta`` envelope (``io.modelcontextprotocol/protocolVersion``,
  ``…/clientInfo``, ``…/clientCapabilities``) and the routing headers the server checks
  (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` for ``resources/read``), a bearer
  token when configured; the answer is JSON or an SSE stream carrying it. urllib, like
  :mod:`skilldeck.core.web`: https, or http to a loopback address only.
* **stdio**: the hand-written client of :mod:`skilldeck.core.tools.stdio_client` (its
  handshake, deadlines and process-group cleanup), asking other methods.

Every exchange has a deadline; failures raise :class:`RemoteError`.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, Protocol

from skilldeck import __version__
from skilldeck.core.remote.spec import RemoteSpec
from skilldeck.core.web import fetchable

MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "skilldeck-federation", "version": __version__}
MAX_ANSWER = 32 * 1024 * 1024
"""Largest HTTP answer read (a resource is at most 16 MiB, base64 adds a third)."""
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")


class RemoteError(Exception):
    """A remote could not be asked.

    Attributes:
        kind: ``config`` (token unreadable…), ``offline`` (cannot connect, exited),
            ``timeout``, ``protocol`` (bad answer) or ``refused`` (a JSON-RPC error).
        message: One sentence for a person.
        code: The JSON-RPC error code of a ``refused`` answer.
    """

    def __init__(self, kind: str, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code


class Session(Protocol):
    """One open conversation with a remote."""

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result object."""
        ...


@contextlib.contextmanager
def connect(spec: RemoteSpec, timeout: float | None = None) -> Iterator[Session]:
    """A session with ``spec``'s server, closed (and a stdio child stopped) afterwards.

    Args:
        spec: The remote.
        timeout: Seconds for everything done in the session (default ``spec.timeout_s``).
    """
    deadline = time.monotonic() + (spec.timeout_s if timeout is None else timeout)
    if spec.url:
        yield HttpSession(spec, deadline)
        return
    session = StdioSession(spec, deadline)
    try:
        yield session
    finally:
        session.close()


class HttpSession:
    """Single-exchange POSTs to a streamable-HTTP endpoint."""

    def __init__(self, spec: RemoteSpec, deadline: float) -> None:
        if not fetchable(spec.url):
            raise RemoteError("config", f"{spec.url}: only https, or http on loopback")
        try:
            self.token = spec.token()
        except (OSError, UnicodeDecodeError) as exc:
            raise RemoteError("config", f"cannot read token_file {spec.token_file}: {exc}") from exc
        self.url = spec.url
        self.deadline = deadline
        self.ids = itertools.count(1)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """POST one request; its result (RemoteError on an error answer)."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise RemoteError("timeout", f"no time left for {method}")
        ident = next(self.ids)
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {
            "jsonrpc": "2.0",
            "id": ident,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN_VERSION,
            "Mcp-Method": method,
            "User-Agent": f"skilldeck/{__version__}",
        }
        if method == "resources/read":
            headers["Mcp-Name"] = _header_value(str(params.get("uri", "")))
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        opener = urllib.request.build_opener(_NoRedirects())
        try:
            with opener.open(request, timeout=remaining) as answer:
                raw: bytes = answer.read(MAX_ANSWER + 1)
                kind = str(answer.headers.get_content_type())
        except urllib.error.HTTPError as exc:
            raw = exc.read(MAX_ANSWER + 1) if exc.fp is not None else b""
            message = _message_of(raw, ident)
            if message is None:
                raise RemoteError(
                    "refused" if exc.code < 500 else "offline", f"HTTP {exc.code} {exc.reason}"
                ) from exc
            return _result(message, method)
        except TimeoutError as exc:
            raise RemoteError("timeout", f"no answer to {method} in time") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, TimeoutError):
                raise RemoteError("timeout", f"no answer to {method} in time") from exc
            raise RemoteError("offline", f"cannot reach {self.url} ({reason})") from exc
        if len(raw) > MAX_ANSWER:
            raise RemoteError("protocol", f"{method}: the answer is over {MAX_ANSWER} bytes")
        message = (
            _sse_message(raw, ident) if kind == "text/event-stream" else _message_of(raw, ident)
        )
        if message is None:
            raise RemoteError("protocol", f"{method}: the answer is not a JSON-RPC response")
        return _result(message, method)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A remote answers where it is configured; a redirect is an error."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _header_value(value: str) -> str:
    """``value`` as an HTTP field, base64-wrapped (``=?base64?…?=``) unless plain ASCII."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not value.startswith("=?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def _message_of(raw: bytes, ident: int) -> dict[str, Any] | None:
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, dict) and message.get("id") in (ident, None):
        return message
    return None


def _sse_message(raw: bytes, ident: int) -> dict[str, Any] | None:
    """The response to ``ident`` among the ``data:`` events of an SSE body."""
    for block in raw.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")
        )
        if data:
            message = _message_of(data.encode("utf-8"), ident)
            if message is not None and ("result" in message or "error" in message):
                return message
    return None


def _result(message: dict[str, Any], method: str) -> dict[str, Any]:
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        text = str(error.get("message", "error"))[:500]
        raise RemoteError("refused", f"{method}: {text}", code if isinstance(code, int) else None)
    result = message.get("result")
    if not isinstance(result, dict):
        raise RemoteError("protocol", f"{method}: the result is not an object")
    return result


class StdioSession:
    """A stdio server started for this session (handshake-era ``initialize`` first)."""

    def __init__(self, spec: RemoteSpec, deadline: float) -> None:
        from skilldeck.core.tools.stdio_client import McpQueryError, ServerSpec, _Channel, _start

        self.deadline = deadline
        server = ServerSpec(spec.label, spec.command[0], list(spec.command[1:]), dict(spec.env))
        try:
            self.proc = _start(server)
        except McpQueryError as exc:
            raise RemoteError("offline", exc.message) from exc
        self.channel = _Channel(self.proc)
        try:
            self.request(
                "initialize",
                {
                    "protocolVersion": HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": CLIENT_INFO,
                },
            )
            self.channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except (RemoteError, McpQueryError) as exc:
            self.close()
            if isinstance(exc, RemoteError):
                raise
            raise RemoteError("offline", exc.message) from exc

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request on the child's stdin; its result."""
        from skilldeck.core.tools.stdio_client import McpQueryError

        try:
            return self.channel.request(method, params, self.deadline)
        except McpQueryError as exc:
            kinds = {"timeout": "timeout", "protocol": "refused"}
            raise RemoteError(kinds.get(exc.kind, "offline"), exc.message) from exc

    def close(self) -> None:
        """Stop the child and its process group."""
        from skilldeck.core.tools.stdio_client import _stop

        self.channel.closed.set()
        _stop(self.proc)
