"""Federation: remote catalogs (MCP servers speaking the Skills extension) as skill sources.

A remote's skills are:

* **listed** with ``skills/list`` (every page, all within the remote's ``timeout_s``) and kept in
  memory per process for the remote's ``ttl_s``; a remote that cannot be reached or
  answers badly is reported (:class:`RemoteStatus`) and skipped, never in the way of local
  skills; nothing is fetched at import time;
* **named** ``label:<skill-path>`` (``team:pdf-processing``): the label is the host's, so
  a remote skill never shadows, and is never shadowed by, a local one (``:`` is in no
  valid skill name);
* **searched** like local ones: each entry becomes a :class:`~skilldeck.core.model.Skill`
  parsed from its frontmatter (:func:`document`), indexed with name and description;
* **loaded** lazily, as the extension asks: ``skills/get`` (the current entry, never the
  cached listing), the review gate, then ``resources/read`` of SKILL.md only; a supporting
  file is fetched when it is read, and only if the current entry lists it. Every file is
  checked against the entry's ``sha256:`` digest and size (a mismatch: not used) and the
  SKILL.md frontmatter against the entry's, field by field. Verified files are cached under
  ``cache/remote/<label>/<skill-path>/<manifest digest>`` (outside every discovery root)
  and re-hashed on every use;
* **reviewed**: an operator's approval (``skilldeck remote approve team:name``) is a line
  ``team:name skill://name/SKILL.md remote-sha256:HEX`` in
  ``SKILLDECK_HOME/remote-approvals.txt``, HEX the SHA-256 of the entry's manifest in the
  shape local approvals pin (``sha256  path`` lines sorted by path,
  :mod:`skilldeck.core.execution.snapshot`). Any changed file changes HEX, so a changed
  remote skill is ``changed`` and needs review again; with ``review = true`` (the default)
  agents may load only ``approved`` skills. A remote skill's ``allowed-tools`` are granted
  only while it is approved as it is now, and its scripts never run here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.discovery.frontmatter import SKILL_FILE
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.mcp_client import Client, HttpServer, McpError, ServerSpec, connect
from skilldeck.core.model import Skill
from skilldeck.core.remote.entries import EXTENSION_ID, RemoteEntry, document, parse_entry
from skilldeck.core.remote.fetch import (
    RemoteSkill,
    _refused,
    _unavailable,
    cache_folder,
    check_frontmatter,
    fetch_file,
    get_entry,
)
from skilldeck.core.remote.review import Review, review_of
from skilldeck.core.remote.spec import RemoteSpec, remote_specs

MAX_SKILLS = 5000
"""Most entries taken from one remote."""
FAILURE_TTL_S = 10.0
"""A failed listing is tried again after at most this many seconds."""


# ---------------------------------------------------------------------- listing


@dataclass(frozen=True, slots=True)
class RemoteStatus:
    """How one remote answered.

    Attributes:
        label: Its label.
        where: Its URL or command.
        ok: It was listed.
        skills: Entries taken.
        error: Why it was skipped ('' when ok).
        skipped: Entries left out, each with why.
    """

    label: str
    where: str
    ok: bool
    skills: int = 0
    error: str = ""
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "label": self.label,
            "where": self.where,
            "ok": self.ok,
            "skills": self.skills,
            "error": self.error,
            "skipped": list(self.skipped),
        }

    @property
    def note(self) -> str:
        """One line for a person (empty when ok with nothing skipped)."""
        if not self.ok:
            return f"remote {self.label} ({self.where}) skipped: {self.error}"
        if self.skipped:
            return f"remote {self.label}: {len(self.skipped)} entries left out ({self.skipped[0]})"
        return ""


@dataclass(frozen=True, slots=True)
class Listing:
    """Every remote's entries and how each answered.

    Attributes:
        entries: Entries of the remotes that answered, by qualified name.
        statuses: One per configured remote, by label.
        problems: Config tables that could not be used.
    """

    entries: tuple[RemoteEntry, ...] = ()
    statuses: tuple[RemoteStatus, ...] = ()
    problems: tuple[str, ...] = ()
    documents: tuple[Skill, ...] = field(default=(), compare=False)

    @property
    def notes(self) -> list[str]:
        """What a person (or agent) should know: config problems and skipped remotes."""
        return [*self.problems, *(s.note for s in self.statuses if s.note)]

    def entry(self, qualified: str) -> RemoteEntry | None:
        """The entry named ``qualified``, or None."""
        return next((e for e in self.entries if e.qualified == qualified), None)


def list_remote(spec: RemoteSpec) -> tuple[list[RemoteEntry], RemoteStatus]:
    """Ask one remote for every entry (``skills/list`` page by page, all within the
    remote's ``timeout_s``); never raises."""
    entries: list[RemoteEntry] = []
    skipped: list[str] = []
    try:
        with session(spec) as client:
            items = client.pages("skills/list", "skills", MAX_SKILLS)
    except McpError as exc:
        status = RemoteStatus(spec.label, spec.where, False, error=f"{exc.kind}: {exc.message}")
        return [], status
    for item in items:
        try:
            entries.append(parse_entry(spec.label, item))
        except ValueError as exc:
            skipped.append(str(exc)[:200])
    unique = {e.qualified: e for e in entries}
    status = RemoteStatus(spec.label, spec.where, True, len(unique), skipped=tuple(skipped))
    return sorted(unique.values(), key=lambda e: e.qualified), status


@contextlib.contextmanager
def session(spec: RemoteSpec, timeout: float | None = None) -> Iterator[Client]:
    """A conversation with ``spec``'s server (:func:`~skilldeck.core.mcp_client.connect`)
    within ``timeout`` seconds (default ``spec.timeout_s``), which must declare the Skills
    extension.

    Raises:
        McpError: ``config`` for an unreadable token file; see :func:`connect`.
    """
    server: ServerSpec | HttpServer
    if spec.url:
        try:
            server = HttpServer(spec.url, spec.token())
        except (OSError, UnicodeDecodeError) as exc:
            raise McpError("config", f"cannot read token_file {spec.token_file}: {exc}") from exc
    else:
        server = ServerSpec(spec.label, spec.command[0], list(spec.command[1:]), dict(spec.env))
    with connect(server, spec.timeout_s if timeout is None else timeout, _SKILLS) as client:
        if not client.declares(EXTENSION_ID):
            raise McpError("protocol", f"the server does not declare {EXTENSION_ID}")
        yield client


_SKILLS: dict[str, Any] = {"extensions": {EXTENSION_ID: {}}}
"""The client capabilities declared to a remote: the Skills extension."""


_CACHE: dict[str, tuple[float, list[RemoteEntry], RemoteStatus]] = {}
"""Listings per remote recipe: ``(monotonic time, entries, status)`` (this process only)."""
_CACHE_LOCK = threading.Lock()
_ASKING: dict[str, threading.Lock] = {}
"""One lock per remote recipe, held while it is asked: concurrent callers share one
request to a slow remote instead of each opening their own."""
_ROUNDS: dict[str, int] = {}
"""How many listings of each remote recipe were fetched."""
_DOCS: dict[tuple[str, str, str], Skill] = {}
"""Search documents by ``(label, skill path, digest)``."""


def clear_cache() -> None:
    """Forget every cached listing (tests, ``--refresh``)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _ROUNDS.clear()


# ---------------------------------------------------------------------- the facade


class Federation:
    """The remotes of one set of settings: listing (cached), lookup, review and loading.

    Args:
        settings: Where ``remotes`` come from.
        clock: Monotonic clock (tests).
    """

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.specs, self.problems = remote_specs(settings)
        self.clock = clock

    @property
    def configured(self) -> bool:
        """Whether any remote is configured (usable or not)."""
        return bool(self.specs or self.problems)

    def spec(self, label: str) -> RemoteSpec | None:
        """The remote labelled ``label``, or None."""
        return next((s for s in self.specs if s.label == label), None)

    def listing(self, *, refresh: bool = False) -> Listing:
        """Every remote's entries: cached per remote for its ``ttl_s`` (a failure for at
        most :data:`FAILURE_TTL_S`); the remotes whose listing is older (or all, with
        ``refresh``) are asked at the same time, each within its own timeout; a caller
        that finds a remote being asked waits for that answer instead of asking again."""
        held: dict[str, tuple[float, list[RemoteEntry], RemoteStatus]] = {}
        stale: list[RemoteSpec] = []
        for spec in self.specs:
            with _CACHE_LOCK:
                found = _CACHE.get(spec.fingerprint())
            if found is not None and not refresh:
                ttl = spec.ttl_s if found[2].ok else min(spec.ttl_s, FAILURE_TTL_S)
                if self.clock() - found[0] < ttl:
                    held[spec.label] = found
                    continue
            stale.append(spec)
        if len(stale) == 1:
            fetched = [self._ask(stale[0])]
        elif stale:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(8, len(stale))) as pool:
                fetched = list(pool.map(self._ask, stale))
        else:
            fetched = []
        for spec, found in zip(stale, fetched, strict=True):
            held[spec.label] = found
        entries = [e for spec in self.specs for e in held[spec.label][1]]
        statuses = [held[spec.label][2] for spec in self.specs]
        documents = tuple(self._document(e) for e in entries)
        return Listing(tuple(entries), tuple(statuses), tuple(self.problems), documents)

    def _ask(self, spec: RemoteSpec) -> tuple[float, list[RemoteEntry], RemoteStatus]:
        """``spec``'s listing asked now (and cached), or the one another caller fetched
        while this one waited for it (each wait is bounded by that remote's timeout)."""
        key = spec.fingerprint()
        with _CACHE_LOCK:
            asking = _ASKING.setdefault(key, threading.Lock())
            seen = _ROUNDS.get(key, 0)
        with asking:
            with _CACHE_LOCK:
                if _ROUNDS.get(key, 0) != seen and key in _CACHE:
                    return _CACHE[key]
            found_entries, status = list_remote(spec)
            held = (self.clock(), found_entries, status)
            with _CACHE_LOCK:
                _CACHE[key] = held
                _ROUNDS[key] = _ROUNDS.get(key, 0) + 1
            return held

    @staticmethod
    def _document(entry: RemoteEntry) -> Skill:
        key = (entry.label, entry.skill_path, entry.digest)
        with _CACHE_LOCK:
            found = _DOCS.get(key)
        if found is None:
            found = document(entry)
            with _CACHE_LOCK:
                if len(_DOCS) > 20_000:
                    _DOCS.clear()
                _DOCS[key] = found
        return found

    def split(self, qualified: str) -> tuple[RemoteSpec, str]:
        """The remote and skill path of ``label:<skill-path>``.

        Raises:
            SkilldeckError: NOT_FOUND when no remote has that label.
        """
        label, sep, skill_path = qualified.partition(":")
        spec = self.spec(label) if sep else None
        if spec is None or not skill_path:
            known = ", ".join(s.label for s in self.specs) or "none configured"
            raise SkilldeckError(
                ErrorCode.NOT_FOUND,
                f"no remote skill {qualified!r} (remotes: {known})",
            )
        return spec, skill_path

    def entry(self, qualified: str) -> RemoteEntry:
        """The listed entry named ``qualified`` (NOT_FOUND with suggestions; EXECUTION_ERROR
        when its remote is unavailable)."""
        spec, _path = self.split(qualified)
        listing = self.listing()
        found = listing.entry(qualified)
        if found is not None:
            return found
        status = next((s for s in listing.statuses if s.label == spec.label), None)
        if status is not None and not status.ok:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR,
                status.note,
                remote=spec.label,
                reason="remote_unavailable",
            )
        from skilldeck.core.loader import unknown_skill

        raise unknown_skill(qualified, [e.qualified for e in listing.entries])

    def current(self, qualified: str) -> RemoteEntry:
        """The current entry of ``qualified`` (``skills/get``: never the cached listing).

        Raises:
            SkilldeckError: NOT_FOUND (no such remote or skill), EXECUTION_ERROR (remote
                unavailable), PERMISSION_DENIED (a bad entry).
        """
        spec, skill_path = self.split(qualified)
        try:
            with session(spec) as client:
                return get_entry(client, spec, skill_path)
        except McpError as exc:
            raise _unavailable(spec, skill_path, exc) from exc

    def _gate(self, spec: RemoteSpec, entry: RemoteEntry, agent: bool) -> Review:
        """The entry's review state; for an agent, with the remote's ``review`` on, an error
        unless an operator approved it as it is now."""
        review = review_of(entry)
        if not agent or not spec.review or review.state == "approved":
            return review
        qualified = entry.qualified
        if review.state == "changed":
            shown = ", ".join(f"{c} {p}" for c, p in review.changes[:5]) or "files changed"
            message = (
                f"remote skill {qualified!r} changed since it was approved ({shown}): "
                "an operator must review it again"
            )
        else:
            message = f"remote skill {qualified!r} has not been approved by an operator"
        reason = "changed_since_review" if review.state == "changed" else "review_required"
        raise _refused(
            reason,
            message,
            name=qualified,
            digest=entry.digest,
            changes=[list(c) for c in review.changes],
        )

    def load(self, qualified: str, *, agent: bool = True) -> RemoteSkill:
        """Load ``qualified`` as it is now: its current entry (``skills/get``), the review
        gate, then its SKILL.md only (other files are fetched when read), verified against
        the entry's digest and size and its frontmatter against the entry's.

        Args:
            qualified: ``label:<skill-path>``.
            agent: For a model: with the remote's ``review`` on, refuse unless approved.

        Raises:
            SkilldeckError: see :meth:`current` and :func:`fetch_file`; PERMISSION_DENIED
                with reason ``review_required`` (never approved), ``changed_since_review``
                or ``frontmatter_mismatch``.
        """
        from skilldeck.core.discovery.frontmatter import parse_bytes

        spec, skill_path = self.split(qualified)
        try:
            with session(spec, spec.timeout_s * 2) as client:
                entry = get_entry(client, spec, skill_path)
                review = self._gate(spec, entry, agent)
                item = entry.file(SKILL_FILE)
                assert item is not None  # parse_entry requires it
                data = fetch_file(client, entry, item)
                parsed = parse_bytes(data, cache_folder(entry) / SKILL_FILE)
                check_frontmatter(entry, parsed)
                if parsed.instructions is not None and parsed.instructions[0] == "file":
                    named = entry.file(parsed.instructions[1].replace("\\", "/").removeprefix("./"))
                    if named is not None:  # the instructions replacing the body: needed now
                        fetch_file(client, entry, named)
        except McpError as exc:
            raise _unavailable(spec, skill_path, exc) from exc
        granted = parsed.allowed_tools if review.state == "approved" else ()
        skill = dataclasses.replace(
            parsed,
            name=qualified,
            resources=tuple(f.rel for f in entry.files if f.rel != SKILL_FILE),
            allowed_tools=granted,
        )
        return RemoteSkill(entry, skill, data, review)

    def read(
        self, qualified: str, rel: str, *, agent: bool = True
    ) -> tuple[RemoteEntry, Review, bytes]:
        """One file of ``qualified``, fetched when needed and verified against the current
        entry (which must still pass the review gate); a file the entry does not list is
        refused.

        Raises:
            SkilldeckError: as :meth:`load`; NOT_FOUND for a file the entry does not list.
        """
        spec, skill_path = self.split(qualified)
        try:
            with session(spec, spec.timeout_s * 2) as client:
                entry = get_entry(client, spec, skill_path)
                review = self._gate(spec, entry, agent)
                item = entry.file(rel)
                if item is None:
                    from skilldeck.core.loader import suggestions

                    raise SkilldeckError(
                        ErrorCode.NOT_FOUND,
                        f"remote skill {qualified!r} lists no file {rel!r} in its manifest",
                        suggestions=suggestions.suggest_names(rel, [f.rel for f in entry.files]),
                    )
                data = fetch_file(client, entry, item)
        except McpError as exc:
            raise _unavailable(spec, skill_path, exc) from exc
        return entry, review, data
