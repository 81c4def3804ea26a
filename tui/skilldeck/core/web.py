"""The one way the core reads a URL: a bounded GET.

Only ``https`` (and ``http`` to a loopback address, for local servers and tests); at most
``cap`` bytes (more is an error, never a silent cut); a timeout on connect and on each
read; redirects followed only while ``allowed`` says yes to the new address. Nothing here
runs unless a user asked for that URL or configured its host.
"""

from __future__ import annotations

import ipaddress
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.client import HTTPMessage
from typing import IO

from skilldeck import __version__
from skilldeck.core.errors import ErrorCode, SkilldeckError

USER_AGENT = f"skilldeck/{__version__}"


@dataclass(frozen=True, slots=True)
class Answer:
    """What a GET brought back.

    Attributes:
        url: The address finally answered (after redirects).
        data: The body.
        content_type: The media type without parameters ('' when not sent).
    """

    url: str
    data: bytes
    content_type: str


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
    """True for ``localhost`` (and names under ``.localhost``) and loopback IP addresses."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    timeout: float = 20.0,
    allowed: Callable[[str], bool] | None = None,
) -> Answer:
    """GET ``url`` and return its body (at most ``cap`` bytes).

    Args:
        url: An https URL (or http to a loopback host).
        cap: Largest body accepted, in bytes.
        timeout: Seconds for the connection and for each read.
        allowed: Which redirect targets to follow (default: any fetchable address).

    Raises:
        SkilldeckError: INVALID_PARAM for a URL that may not be fetched or a body over
            ``cap``; NOT_FOUND for a 404; EXECUTION_ERROR when it cannot be fetched.
    """
    if not fetchable(url):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{url}: only https URLs are fetched (http only from this machine)",
            url=url,
            reason="not_fetchable",
        )
    opener = urllib.request.build_opener(_Redirects(allowed or (lambda _u: True)))
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with opener.open(request, timeout=timeout) as answer:
            data: bytes = answer.read(cap + 1)
            final = str(answer.geturl())
            kind = str(answer.headers.get_content_type() if answer.headers else "")
    except urllib.error.HTTPError as exc:
        code = ErrorCode.NOT_FOUND if exc.code == 404 else ErrorCode.EXECUTION_ERROR
        raise SkilldeckError(code, f"{url}: HTTP {exc.code} {exc.reason}", url=url) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"{url}: cannot fetch ({reason})", url=url
        ) from exc
    if len(data) > cap:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{url}: the answer is over {cap} bytes",
            url=url,
            reason="too_large",
        )
    return Answer(final, data, kind)
