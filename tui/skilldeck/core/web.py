"""The one way the core reads a URL: a bounded GET.

Only ``https`` (and ``http`` to this machine, for local servers and tests); at most ``cap``
bytes (more is an error, never a silent cut); one wall-clock deadline for the whole fetch
(name lookup, connect, headers, body and redirects: a server that trickles a byte a second
is cut at the deadline, reason ``deadline``); redirects followed only while ``allowed`` says
yes to the new address. Nothing here runs unless a user asked for that URL or configured
its host.

Where a fetch may go is decided on the address a name resolves to, never on how the URL
spells it (``127.1``, ``0x7f000001`` or ``[::ffff:127.0.0.1]`` are this machine too), and
the connection is made to that very address (no second lookup that a rebinding DNS could
answer differently). An *internal* address (:func:`internal_address`: this machine or a
private network) takes plain ``http`` only when it is loopback; ``public_only`` refuses it
outright; and a fetch that reached a public address may not be redirected to one (reason
``internal_address``). Proxies from the environment are not used: the address checked must
be the address connected to.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPMessage
from typing import IO, Any

from skilldeck import __version__
from skilldeck.core.errors import ErrorCode, SkilldeckError

USER_AGENT = f"skilldeck/{__version__}"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class Answer:
    """What a GET brought back.

    Attributes:
        url: The address finally answered (after redirects).
        data: The body.
        content_type: The media type without parameters ('' when not sent).
        internal: The answer came from an internal address (this machine or a private
            network, :func:`internal_address`), every hop of it.
    """

    url: str
    data: bytes
    content_type: str
    internal: bool = False


def fetchable(url: str) -> bool:
    """True for an ``https`` URL, or ``http`` to a loopback host."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return False
    if not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and is_loopback(parts.hostname)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` (and names under ``.localhost``) and loopback IP addresses
    written plainly (for a host to listen on; where a fetch goes is checked on the
    resolved address)."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def internal_address(ip: IPAddress) -> bool:
    """True for an address of this machine or of a private network: loopback, link-local,
    private, unspecified, reserved, multicast or not globally routable, an IPv4 address
    written as IPv6 (``::ffff:127.0.0.1``) judged as the IPv4 address it is."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_loopback
        or ip.is_link_local
        or ip.is_private
        or ip.is_unspecified
        or ip.is_reserved
        or ip.is_multicast
        or not ip.is_global
    )


def names_internal(host: str) -> bool:
    """True when ``host`` as written names this machine or a private network: a
    ``localhost`` name or an internal IP address in any spelling the resolver accepts
    (``127.1``, ``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``).
    No lookup: a name that resolves to such an address is caught when connecting."""
    name = host.lower().rstrip(".").strip("[]")
    if is_loopback(name):
        return True
    try:
        ip: IPAddress = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return False
    return internal_address(ip)


class _Blocked(OSError):
    """A connection refused by the address rule."""


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


@dataclass(slots=True)
class _Fetch:
    """One fetch: its deadline, its address rule and the sockets it opened."""

    limit: float
    public_only: bool
    deadline: float = 0.0
    reached_public: bool = False
    internal: bool = False
    late: bool = False
    sockets: list[socket.socket] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def left(self) -> float:
        """Seconds left before the deadline (TimeoutError when none)."""
        left = self.deadline - time.monotonic()
        if left <= 0 or self.late:
            raise TimeoutError("the deadline passed")
        return left

    def cut(self) -> None:
        """At the deadline: shut every socket, which ends any read blocked on it."""
        with self.lock:
            self.late = True
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def refusal(self, ip: IPAddress, scheme: str) -> str | None:
        """Why this fetch may not connect to ``ip`` (None: it may)."""
        internal = internal_address(ip)
        if scheme != "https" and not (ip.is_loopback or _mapped_loopback(ip)):
            return f"plain http goes only to this machine, not to {ip}"
        if internal and self.public_only:
            return f"{ip} is on this machine or a private network"
        if internal and self.reached_public:
            return f"a public address redirected to {ip}, on this machine or a private network"
        return None

    def connect(self, host: str, port: int, scheme: str) -> socket.socket:
        """A socket connected to an address of ``host`` this fetch may reach."""
        problem: OSError = _Blocked(f"{host} has no address")
        for family, kind, proto, _, addr in _resolve(host, port, self.left()):
            ip = ipaddress.ip_address(str(addr[0]).split("%", 1)[0])
            refused = self.refusal(ip, scheme)
            if refused is not None:
                problem = _Blocked(refused)
                continue
            sock = socket.socket(family, kind, proto)
            with self.lock:
                self.sockets.append(sock)
            try:
                sock.settimeout(self.left())
                sock.connect(addr)
            except OSError as exc:
                sock.close()
                problem = exc
                continue
            self.internal = internal_address(ip)
            self.reached_public = self.reached_public or not self.internal
            return sock
        raise problem


def _mapped_loopback(ip: IPAddress) -> bool:
    return isinstance(ip, ipaddress.IPv6Address) and bool(
        ip.ipv4_mapped and ip.ipv4_mapped.is_loopback
    )


def _resolve(host: str, port: int, wait: float) -> list[Any]:
    """``getaddrinfo`` for ``host``, given up after ``wait`` seconds (the lookup goes on
    in a daemon thread: a resolver cannot be interrupted)."""
    found: list[Any] = []

    def look() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            found.append(exc)

    thread = threading.Thread(target=look, name="skilldeck-resolve", daemon=True)
    thread.start()
    thread.join(wait)
    if not found:
        raise TimeoutError(f"looking up {host} took too long")
    if isinstance(found[0], OSError):
        raise found[0]
    return list(found[0])


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host: str, fetch: _Fetch, timeout: float) -> None:
        super().__init__(host, timeout=timeout)
        self.fetch = fetch

    def connect(self) -> None:
        self.sock = self.fetch.connect(self.host, self.port, "http")


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, fetch: _Fetch, timeout: float) -> None:
        super().__init__(host, timeout=timeout, context=_tls())
        self.fetch = fetch

    def connect(self) -> None:
        sock = self.fetch.connect(self.host, self.port, "https")
        self.sock = _tls().wrap_socket(sock, server_hostname=self.host)


class _Connections(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    """Opens http and https through connections pinned to the checked address."""

    def __init__(self, fetch: _Fetch) -> None:
        urllib.request.HTTPHandler.__init__(self)
        self.fetch = fetch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        """Open an http request."""
        return self.do_open(self._plain_connection, req)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        """Open an https request."""
        return self.do_open(self._tls_connection, req)

    def _plain_connection(self, host: str, timeout: float = 0.0, **_kw: Any) -> _PinnedHTTP:
        return _PinnedHTTP(host, self.fetch, timeout or self.fetch.left())

    def _tls_connection(self, host: str, timeout: float = 0.0, **_kw: Any) -> _PinnedHTTPS:
        return _PinnedHTTPS(host, self.fetch, timeout or self.fetch.left())


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a fetchable address ``allowed`` accepts."""

    def __init__(self, allowed: Callable[[str], bool]) -> None:
        self.allowed = allowed

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        """The redirected request, refused when ``newurl`` is not allowed."""
        if not (fetchable(newurl) and self.allowed(newurl)):
            raise urllib.error.URLError(f"redirected to an address not allowed: {newurl}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def get(
    url: str,
    *,
    cap: int,
    timeout: float = 60.0,
    allowed: Callable[[str], bool] | None = None,
    public_only: bool = False,
) -> Answer:
    """GET ``url`` and return its body (at most ``cap`` bytes).

    Args:
        url: An https URL (or http to a loopback host).
        cap: Largest body accepted, in bytes.
        timeout: Seconds for the whole fetch, wall clock: lookup, connect, headers, body
            and redirects.
        allowed: Which redirect targets to follow (default: any fetchable address).
        public_only: Refuse every internal address (:func:`internal_address`), at every
            hop: for a URL a remote document named.

    Raises:
        SkilldeckError: INVALID_PARAM for a URL that may not be fetched, a body over
            ``cap`` (reason ``too_large``) or an address refused (reason
            ``internal_address``); NOT_FOUND for a 404; EXECUTION_ERROR when it cannot be
            fetched, or (reason ``deadline``) not within ``timeout``.
    """
    if not fetchable(url):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{url}: only https URLs are fetched (http only from this machine)",
            url=url,
            reason="not_fetchable",
        )
    fetch = _Fetch(timeout, public_only, time.monotonic() + timeout)
    watchdog = threading.Timer(timeout, fetch.cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        answer = _exchange(url, cap, fetch, allowed or (lambda _u: True))
    finally:
        watchdog.cancel()
        with fetch.lock:
            for sock in fetch.sockets:
                sock.close()
    if len(answer.data) > cap:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{url}: the answer is over {cap} bytes",
            url=url,
            reason="too_large",
        )
    return answer


def _exchange(url: str, cap: int, fetch: _Fetch, allowed: Callable[[str], bool]) -> Answer:
    """The request and its answer, every failure worded as a SkilldeckError."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), _Connections(fetch), _Redirects(allowed)
    )
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with opener.open(request, timeout=fetch.left()) as answer:
            data: bytes = answer.read(cap + 1)
            final = str(answer.geturl())
            kind = str(answer.headers.get_content_type() if answer.headers else "")
        fetch.left()
    except urllib.error.HTTPError as exc:
        code = ErrorCode.NOT_FOUND if exc.code == 404 else ErrorCode.EXECUTION_ERROR
        raise SkilldeckError(code, f"{url}: HTTP {exc.code} {exc.reason}", url=url) from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise _failure(url, fetch, exc) from exc
    return Answer(final, data, kind, fetch.internal)


def _failure(url: str, fetch: _Fetch, exc: Exception) -> SkilldeckError:
    """How a fetch that failed with ``exc`` is reported."""
    reason = getattr(exc, "reason", None) or exc
    if fetch.late or time.monotonic() >= fetch.deadline:
        return SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"{url}: no complete answer within {fetch.limit:g}s (the deadline of one fetch); "
            "given up",
            url=url,
            reason="deadline",
        )
    if isinstance(reason, _Blocked):
        return SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{url}: not fetched: {reason}",
            url=url,
            reason="internal_address",
        )
    return SkilldeckError(ErrorCode.EXECUTION_ERROR, f"{url}: cannot fetch ({reason})", url=url)
