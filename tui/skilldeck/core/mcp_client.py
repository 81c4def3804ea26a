"""Skilldeck's one MCP client: JSON-RPC 2.0 to a stdio or streamable-HTTP server.

Tool discovery (:mod:`skilldeck.core.tools`) and federation (:mod:`skilldeck.core.remote`)
need a few requests each, and the core never imports the ``mcp`` SDK (a test enforces it),
so this speaks the protocol by hand, synchronously:

* **Revision**: 2026-07-28 first: ``server/discover``, then every request carries the
  ``_meta`` envelope (``io.modelcontextprotocol/protocolVersion``, ``…/clientInfo``,
  ``…/clientCapabilities``). A server that answers ``server/discover`` with an error, or
  does not list 2026-07-28, gets the 2025-11-25 handshake on the same connection
  (``initialize``, then ``notifications/initialized``), as the SDK's own client does.
* **stdio**: one message per line on a child's stdin/stdout. The child runs in its own
  process group and is always stopped afterwards (killed at once when time is up).
* **HTTP**: one POST per message, https or http to a loopback address, no redirects; the
  routing headers of 2026-07-28 (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) or
  the handshake's ``Mcp-Session-Id``; the answer as JSON or an SSE stream.
* **One deadline per conversation**, wall clock across start, writes, reads and parsing:
  a peer trickling one byte at a time is cut when it is reached (a watchdog shuts the HTTP
  socket; the stdio reader is left behind and the child killed), never per read.

Failures raise :class:`McpError`.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import itertools
import json
import os
import queue
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skilldeck import __version__
from skilldeck.core.safe_text import for_terminal
from skilldeck.core.web import fetchable

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
CLIENT_INFO = {"name": "skilldeck", "version": __version__}
MAX_MESSAGE = 32 * 1024 * 1024
"""Largest message read (a skill file is at most 16 MiB, base64 adds a third)."""
MAX_PAGES = 100
STDERR_LINES = 20
"""Lines of a stdio server's stderr kept for error messages (each cut at 2,000 chars)."""
_META = "io.modelcontextprotocol/"


class McpError(Exception):
    """A server could not be asked.

    Attributes:
        kind: ``config`` (unusable recipe: URL, token), ``start`` (the command could not
            run), ``offline`` (cannot connect; the server exited or hung up), ``timeout``,
            ``protocol`` (an answer that is not a valid message) or ``refused`` (an error
            answer: a JSON-RPC error, or an HTTP error status).
        message: One sentence for a person.
        code: The JSON-RPC error code of a ``refused`` answer, when it had one.
        stderr: The last lines a stdio server wrote to stderr.
    """

    def __init__(self, kind: str, message: str, code: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code
        self.stderr = stderr


@dataclass(slots=True)
class ServerSpec:
    """How to start one stdio server (an ``mcpServers`` entry, or a stdio remote)."""

    name: str
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def fingerprint(self) -> str:
        """Identity of the launch recipe (a changed recipe invalidates cached answers)."""
        return json.dumps([self.command, self.args, sorted(self.env.items())])


@dataclass(frozen=True, slots=True)
class HttpServer:
    """A streamable-HTTP endpoint and the bearer token sent to it (None: none)."""

    url: str
    token: str | None = None


class _Transport(Protocol):
    def call(self, message: dict[str, Any], version: str, deadline: float) -> dict[str, Any]:
        """Send a request; the response carrying its id."""
        ...

    def notify(self, message: dict[str, Any], version: str, deadline: float) -> None:
        """Send a notification."""
        ...

    def close(self, deadline: float) -> None:
        """End the conversation."""
        ...


@contextlib.contextmanager
def connect(
    server: ServerSpec | HttpServer, timeout: float, capabilities: dict[str, Any] | None = None
) -> Iterator[Client]:
    """An opened conversation with ``server``, ended (a stdio child stopped) afterwards.

    Args:
        server: What to start or where to post.
        timeout: Seconds for everything, from start to the last answer.
        capabilities: The client capabilities declared (default: none).

    Raises:
        McpError: The server could not be started, reached or understood in time.
    """
    deadline = time.monotonic() + timeout
    transport: _Transport = _Http(server) if isinstance(server, HttpServer) else _Stdio(server)
    try:
        client = Client(transport, deadline, capabilities or {})
        client.open()
        yield client
    finally:
        transport.close(deadline)


class Client:
    """One conversation (see :func:`connect`).

    Attributes:
        version: The revision spoken: :data:`MODERN`, or what ``initialize`` agreed.
        capabilities: The server's capabilities.
    """

    def __init__(
        self, transport: _Transport, deadline: float, capabilities: dict[str, Any]
    ) -> None:
        self.transport = transport
        self.deadline = deadline
        self.own = capabilities
        self.version = MODERN
        self.capabilities: dict[str, Any] = {}
        self.ids = itertools.count(1)

    def open(self) -> None:
        """``server/discover``; the handshake when the server does not speak 2026-07-28."""
        why = "server/discover did not list 2026-07-28"
        try:
            found = self.request("server/discover", {})
            versions = found.get("supportedVersions")
            if isinstance(versions, list) and MODERN in versions:
                self.capabilities = _object(found.get("capabilities"))
                return
        except McpError as exc:
            if exc.kind not in ("refused", "protocol"):
                raise
            why = exc.message
        self.version = HANDSHAKE
        hello = {"protocolVersion": HANDSHAKE, "capabilities": self.own, "clientInfo": CLIENT_INFO}
        try:
            result = self.request("initialize", hello)
        except McpError as exc:
            message = f"{exc.message} (after {why})"
            raise McpError(exc.kind, message, exc.code, exc.stderr) from exc
        agreed = result.get("protocolVersion")
        self.version = agreed if isinstance(agreed, str) and agreed else HANDSHAKE
        self.capabilities = _object(result.get("capabilities"))
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.transport.notify(initialized, self.version, self.deadline)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request; its result object.

        Raises:
            McpError: ``refused`` for an error answer (with its code), ``protocol`` for a
                result that is not a complete result object, or any transport failure.
        """
        if time.monotonic() >= self.deadline:
            raise McpError("timeout", f"no time left for {method}")
        if self.version == MODERN:
            meta = {
                f"{_META}protocolVersion": MODERN,
                f"{_META}clientInfo": CLIENT_INFO,
                f"{_META}clientCapabilities": self.own,
            }
            params = {**params, "_meta": meta}
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        answer = self.transport.call(message, self.version, self.deadline)
        error = answer.get("error")
        if error is not None:
            error = _object(error)
            code = error.get("code")
            text = for_terminal(str(error.get("message", "error"))[:500])
            raise McpError("refused", f"{method}: {text}", code if isinstance(code, int) else None)
        result = answer.get("result")
        if not isinstance(result, dict):
            raise McpError("protocol", f"{method}: the result is not an object")
        if result.get("resultType", "complete") != "complete":
            raise McpError("protocol", f"{method}: a result Skilldeck cannot complete")
        return result

    def pages(self, method: str, key: str, cap: int) -> list[Any]:
        """Every item of a paginated list (``cursor``/``nextCursor``), at most ``cap``."""
        items: list[Any] = []
        cursor: object = None
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor else {})
            page = result.get(key)
            if not isinstance(page, list):
                raise McpError("protocol", f"{method}: {key!r} is not a list")
            items.extend(page)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or len(items) >= cap:
                break
        return items[:cap]

    def declares(self, extension: str) -> bool:
        """Whether the server's capabilities declare ``extension``."""
        return extension in _object(self.capabilities.get("extensions"))


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decode(raw: bytes) -> dict[str, Any] | None:
    """One JSON-RPC message, or None for anything else (a 100,000-deep array included)."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


# ---------------------------------------------------------------------- stdio


class _Stdio:
    """A child's stdin/stdout; a thread reads its lines, another keeps its stderr tail."""

    def __init__(self, spec: ServerSpec) -> None:
        env = {**os.environ, **spec.env}
        try:
            self.proc = subprocess.Popen(
                [spec.command, *spec.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=str(spec.cwd) if spec.cwd else None,
                start_new_session=sys.platform != "win32",
            )
        except (OSError, ValueError) as exc:
            raise McpError("start", f"cannot start {spec.command!r}: {exc}") from exc
        # Two lines ahead at most: a flooding server waits for us instead of filling memory.
        self.lines: queue.Queue[bytes | None] = queue.Queue(maxsize=2)
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.closed = threading.Event()
        threading.Thread(target=self._pump_out, daemon=True).start()
        self.err_pump = threading.Thread(target=self._pump_err, daemon=True)
        self.err_pump.start()

    def _pump_out(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in iter(lambda: stdout.readline(MAX_MESSAGE), b""):
                if not self._put(raw):
                    return
        self._put(None)

    def _put(self, item: bytes | None) -> bool:
        while not self.closed.is_set():
            with contextlib.suppress(queue.Full):
                self.lines.put(item, timeout=0.1)
                return True
        return False

    def _pump_err(self) -> None:
        stderr = self.proc.stderr
        assert stderr is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in iter(lambda: stderr.readline(2000), b""):
                self.stderr.append(for_terminal(raw.decode("utf-8", "replace").rstrip()))

    def _fail(self, kind: str, message: str) -> McpError:
        return McpError(kind, message, stderr="\n".join(self.stderr))

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            stdin.flush()
        except (OSError, ValueError) as exc:
            self._last_words(deadline)
            raise self._fail("offline", f"the server closed its input ({exc})") from exc

    def _last_words(self, deadline: float) -> None:
        """Let a server that is exiting finish its stderr, for the error message."""
        grace = max(0.0, min(0.5, deadline - time.monotonic()))
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        self.err_pump.join(timeout=grace)

    def notify(self, message: dict[str, Any], version: str, deadline: float) -> None:
        """Write one notification."""
        self._send(message, deadline)

    def call(self, message: dict[str, Any], version: str, deadline: float) -> dict[str, Any]:
        """Write one request, read lines until its response (answering a ``ping``)."""
        method = message["method"]
        self._send(message, deadline)
        while True:
            try:
                raw = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty as exc:
                raise self._fail("timeout", f"no answer to {method} in time") from exc
            if raw is None:
                self._last_words(deadline)
                code = self.proc.poll()
                raise self._fail("offline", f"the server exited (code {code}) before {method}")
            answer = _decode(raw)
            if answer is None:
                continue  # stray output on stdout: not ours to judge
            if "method" in answer and "id" in answer:
                self._answer(answer, deadline)
            elif answer.get("id") == message["id"]:
                return answer

    def _answer(self, request: dict[str, Any], deadline: float) -> None:
        if request.get("method") == "ping":
            self._send({"jsonrpc": "2.0", "id": request["id"], "result": {}}, deadline)
        else:
            error = {"code": -32601, "message": "Method not found"}
            self._send({"jsonrpc": "2.0", "id": request["id"], "error": error}, deadline)

    def close(self, deadline: float) -> None:
        """Stop the child: close its stdin, then terminate, then kill its process group;
        straight to the kill when the deadline has passed."""
        self.closed.set()
        proc = self.proc
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin:
                proc.stdin.close()
        kill = getattr(signal, "SIGKILL", signal.SIGTERM)
        steps = [(None, 0.3), (signal.SIGTERM, 1.0), (kill, 1.0)]
        for sig, wait in steps[2:] if time.monotonic() >= deadline else steps:
            if sig is not None:
                with contextlib.suppress(OSError):
                    if sys.platform != "win32":
                        os.killpg(proc.pid, sig)
                    else:
                        proc.kill()
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        for stream in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream:
                    stream.close()


# ---------------------------------------------------------------------- HTTP


class _Http:
    """POSTs to one endpoint, each under a watchdog that shuts its socket at the deadline."""

    def __init__(self, server: HttpServer) -> None:
        if not fetchable(server.url):
            raise McpError("config", f"{server.url}: only https, or http on loopback")
        self.parts = urllib.parse.urlsplit(server.url)
        self.url = server.url
        self.token = server.token
        self.session: str | None = None

    def _headers(self, message: dict[str, Any], version: str) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "User-Agent": f"skilldeck/{__version__}",
        }
        method = str(message.get("method", ""))
        if method != "initialize":
            headers["MCP-Protocol-Version"] = version
        if version == MODERN:
            headers["Mcp-Method"] = method
            if method == "resources/read":
                headers["Mcp-Name"] = _header_value(str(message["params"].get("uri", "")))
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def call(self, message: dict[str, Any], version: str, deadline: float) -> dict[str, Any]:
        """POST one request; the response to it (from JSON or an SSE stream)."""
        status, reason, answer = self._post(message, version, deadline)
        if answer is not None:
            return answer
        if 200 <= status < 300:
            raise McpError("protocol", f"{message['method']}: the answer is no JSON-RPC response")
        kind = "refused" if status < 500 else "offline"
        raise McpError(kind, f"{message['method']}: HTTP {status} {reason}")

    def notify(self, message: dict[str, Any], version: str, deadline: float) -> None:
        """POST one notification (answered with 202 Accepted)."""
        status, reason, _answer = self._post(message, version, deadline)
        if not 200 <= status < 300:
            raise McpError("refused", f"{message['method']}: HTTP {status} {reason}")

    def close(self, deadline: float) -> None:
        """End a handshake session (``DELETE``), best effort within a second."""
        if self.session:
            with contextlib.suppress(McpError):
                self._post(None, HANDSHAKE, min(deadline, time.monotonic() + 1.0))

    def _post(
        self, message: dict[str, Any] | None, version: str, deadline: float
    ) -> tuple[int, str, dict[str, Any] | None]:
        """One exchange (a DELETE when ``message`` is None): status, reason, response."""
        remaining = deadline - time.monotonic()
        what = message["method"] if message else "DELETE"
        if remaining <= 0:
            raise McpError("timeout", f"no time left for {what}")
        secure = self.parts.scheme == "https"
        host, port = self.parts.hostname or "", self.parts.port
        conn = (
            http.client.HTTPSConnection(host, port, timeout=remaining, context=_TLS)
            if secure
            else http.client.HTTPConnection(host, port, timeout=remaining)
        )
        cut = threading.Event()
        watchdog = threading.Timer(remaining, _shut, (conn, cut))
        watchdog.daemon = True
        watchdog.start()
        path = self.parts.path or "/"
        path += f"?{self.parts.query}" if self.parts.query else ""
        try:
            if message is None:
                conn.request("DELETE", path, headers=self._headers({}, version))
                return conn.getresponse().status, "", None
            body = json.dumps(message, separators=(",", ":")).encode("utf-8")
            conn.request("POST", path, body, self._headers(message, version))
            response = conn.getresponse()
            session = response.getheader("Mcp-Session-Id")
            if session and message.get("method") == "initialize":
                self.session = session.strip()
            answer = _response(response, message.get("id"))
            if cut.is_set():  # what was read before the cut is not the answer
                raise TimeoutError
            return response.status, response.reason, answer
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if cut.is_set() or isinstance(exc, TimeoutError):
                raise McpError("timeout", f"no answer to {what} in time") from exc
            raise McpError("offline", f"cannot reach {self.url} ({exc})") from exc
        finally:
            watchdog.cancel()
            conn.close()


_TLS = ssl.create_default_context()


def _shut(conn: http.client.HTTPConnection, cut: threading.Event) -> None:
    """The watchdog: end every read and write on ``conn`` now (a TLS socket's own
    ``shutdown`` is bypassed so its state is not torn down under the reader)."""
    cut.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _response(answer: http.client.HTTPResponse, ident: object) -> dict[str, Any] | None:
    """The JSON-RPC response to ``ident`` in a JSON body or an SSE stream (read until it
    arrives, not to the stream's end), None when there is none.

    Raises:
        McpError: ``protocol`` for an answer over :data:`MAX_MESSAGE` bytes.
    """
    if ident is None:
        return None
    if answer.headers.get_content_type() != "text/event-stream":
        raw = answer.read(MAX_MESSAGE + 1)
        if len(raw) > MAX_MESSAGE:
            raise McpError("protocol", f"an answer over {MAX_MESSAGE} bytes")
        found = _decode(raw)
        return found if found is not None and found.get("id") in (ident, None) else None
    data: list[bytes] = []
    size = 0
    for line in iter(lambda: answer.readline(MAX_MESSAGE + 1), b""):
        size += len(line)
        if size > MAX_MESSAGE:
            raise McpError("protocol", f"an event stream over {MAX_MESSAGE} bytes")
        line = line.rstrip(b"\r\n")
        if line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
        elif not line and data:
            found = _decode(b"\n".join(data))
            data = []
            if found is not None and found.get("id") == ident:
                return found
    return None


def _header_value(value: str) -> str:
    """``value`` as an HTTP field, base64-wrapped (``=?base64?…?=``) unless plain ASCII."""
    plain = all(" " <= c <= "~" for c in value)
    if plain and value == value.strip() and not value.startswith("=?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="
