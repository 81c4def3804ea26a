"""Instructions that replace a skill's body: ``instructions: {file: ...}`` or ``{url: ...}``.

A file is read under the one confinement rule (:func:`~skilldeck.core.confined.read_confined`).
A URL is fetched only here, when the skill is loaded (never at discovery), only from a
host listed in ``instruction_hosts``, with a size cap and a timeout; redirects must stay on
allowed hosts. Each fetch is cached in the local store with its sha256; when the URL cannot
be fetched the cached copy is served with a notice saying so (table ``instruction_cache``,
declared here: :data:`TABLES`).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skilldeck.core.confined import read_confined
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.store import LocalStore

TABLES = (
    # Instructions fetched from a URL (``instructions: {url: ...}``) with the sha256 of
    # ``body``: served again when the URL cannot be fetched.
    """CREATE TABLE IF NOT EXISTS instruction_cache (
        url TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        fetched_ns INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """A skill's instructions as read for a load.

    Attributes:
        text: The instructions.
        origin: ``body``, ``file``, ``url`` or ``cache`` (a URL served from the store).
        source: The file (relative) or URL they came from ('' for the body).
        digest: sha256 hex of a fetched or cached URL's text ('' otherwise).
        notice: A sentence for the reader (e.g. the cached copy was used), or None.
    """

    text: str
    origin: str
    source: str = ""
    digest: str = ""
    notice: str | None = None


def read_file_instructions(skill: Skill, rel: str, cap: int) -> Instructions:
    """The instructions file ``rel`` of ``skill``, read under the confinement rule.

    Raises:
        SkilldeckError: NOT_FOUND or PERMISSION_DENIED (from the confinement rule);
            INVALID_PARAM when the file is over ``cap`` bytes or not UTF-8 text.
    """
    try:
        read = read_confined(skill.base_dir / rel, skill.base_dir, cap=cap, label=repr(rel))
    except SkilldeckError as exc:
        raise SkilldeckError(
            exc.code,
            f"instructions file of skill {skill.name!r}: {exc.message}",
            path=rel,
        ) from exc
    if read.truncated:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"instructions file {rel!r} is over {cap} bytes", path=rel
        )
    return Instructions(_text(read.data, rel), "file", rel)


def fetch_url_instructions(url: str, settings: Settings, store: LocalStore) -> Instructions:
    """The instructions at ``url``: fetched when its host is allowed, cached in ``store``;
    the cached copy (with a notice) when the fetch fails.

    Raises:
        SkilldeckError: PERMISSION_DENIED when the host is not in ``instruction_hosts``;
            INVALID_PARAM when the answer is over the cap or not UTF-8 text;
            EXECUTION_ERROR when it cannot be fetched and nothing is cached.
    """
    if not host_allowed(url, settings.instruction_hosts):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"instructions URL {url!r}: its host is not in instruction_hosts (config.toml)",
            url=url,
        )
    try:
        data = _get(url, settings)
    except SkilldeckError as exc:
        if exc.code is ErrorCode.INVALID_PARAM:
            raise
        return _cached_or_fail(url, store, exc.message)
    text = _text(data, url)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _remember(store, url, digest, text)
    return Instructions(text, "url", url, digest)


def host_allowed(url: str, hosts: list[str]) -> bool:
    """True when ``url`` is http(s) and its host (or ``host:port``) is listed."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # a malformed address (bad port, unbalanced brackets)
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    allowed = {h.lower() for h in hosts}
    return host in allowed or (port is not None and f"{host}:{port}" in allowed)


def _get(url: str, settings: Settings) -> bytes:
    """The body at ``url`` through the core's one bounded GET (:func:`skilldeck.core.web.get`),
    redirects followed only to allowed hosts; over the cap: INVALID_PARAM."""
    from skilldeck.core.web import get

    hosts = settings.instruction_hosts
    try:
        answer = get(
            url,
            cap=settings.instruction_max_bytes,
            timeout=settings.instruction_timeout_s,
            allowed=lambda target: host_allowed(target, hosts),
        )
    except SkilldeckError as exc:
        if exc.details.get("reason") == "too_large":
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"instructions at {url!r} are over the {settings.instruction_max_bytes}-byte "
                "cap (instruction_max_bytes)",
                url=url,
            ) from exc
        raise
    return answer.data


def _text(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"instructions {where!r} are not UTF-8 text"
        ) from exc
    return text.removeprefix("\ufeff")


def _cached_or_fail(url: str, store: LocalStore, reason: str) -> Instructions:
    cached = _recall(store, url)
    if cached is None:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"cannot fetch instructions from {url!r} ({reason}) and no copy is cached",
            url=url,
        )
    digest, fetched_ns, text = cached
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(fetched_ns / 1e9))
    notice = f"instructions URL could not be fetched ({reason}); using the copy cached {when}"
    return Instructions(text, "cache", url, digest, notice)


def _remember(store: LocalStore, url: str, digest: str, text: str) -> None:
    """Cache a fetch (a store that cannot be written is skipped: the load goes on)."""
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO instruction_cache (url, digest, fetched_ns, body) "
                "VALUES (?, ?, ?, ?)",
                (url, digest, time.time_ns(), text),
            )
    except sqlite3.Error:
        pass


def _recall(store: LocalStore, url: str) -> tuple[str, int, str] | None:
    """The cached ``(digest, fetched_ns, text)`` of ``url`` whose digest still matches."""
    try:
        store.ensure(TABLES)
        row = (
            store.connect()
            .execute("SELECT digest, fetched_ns, body FROM instruction_cache WHERE url = ?", (url,))
            .fetchone()
        )
    except sqlite3.Error:
        return None
    if row is None or not isinstance(row[2], str):
        return None
    digest, fetched_ns, text = row
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
        return None
    return str(digest), int(fetched_ns), text
