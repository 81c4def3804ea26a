"""Remote catalogs as a source of the workspace, beside its local roots (federation).

:class:`RemoteSource` is what a :class:`~skilldeck.core.workspace.Workspace` knows of the
``remotes`` of its settings (:mod:`skilldeck.core.remote`): their listing (cached per
remote), the names they own (``label:name``, the label a configured remote's), one search
over local and remote skills, the review gate and the operator's digest-bound approval.
Every face reaches remote skills here, so ``team:refunds`` is found, loaded, read and
refused the same way by the CLI, the terminal UI and the MCP server: a remote skill not
approved as it is now is refused with ``review_required`` or ``changed_since_review``
(unless its remote has ``review = false``); its scripts never run here. It is a
:class:`~skilldeck.core.sources.SkillSource` (:meth:`RemoteSource.skills`,
:meth:`RemoteSource.fetch`) like the local roots.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.remote import Federation, Listing, RemoteEntry
    from skilldeck.core.remote.fetch import RemoteSkill
    from skilldeck.core.remote.review import Review
    from skilldeck.core.search import SearchResponse
    from skilldeck.core.workspace.workspace import Scope, Workspace

__all__ = ["Approval", "RemoteSource", "facts"]


@dataclass(frozen=True, slots=True)
class Approval:
    """An operator's approval of a remote skill.

    Attributes:
        entry: The entry approved (as fetched to approve it).
        before: Its review state before.
        line: The approval line.
        added: False when it was already approved.
    """

    entry: RemoteEntry
    before: Review
    line: str
    added: bool


def facts(entry: RemoteEntry, review: str) -> dict[str, Any]:
    """What every face tells about a remote skill: its remote, URI, digest, review state
    and origin."""
    return {
        "remote": entry.label,
        "uri": entry.uri,
        "digest": f"remote-sha256:{entry.digest}",
        "review": review,
        "origin": f"remote:{entry.label}",
    }


class RemoteSource:
    """The remote catalogs of one workspace.

    Args:
        workspace: The workspace (its settings name the remotes; local skills rank with
            remote ones in :meth:`search`).
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._federation: Federation | None = None
        self._combined: dict[Scope, Any] = {}
        self._lock = threading.Lock()

    @property
    def federation(self) -> Federation:
        """The remotes of the settings (nothing is asked before a listing or a load)."""
        with self._lock:
            if self._federation is None:
                from skilldeck.core.remote import Federation

                self._federation = Federation(self.workspace.settings)
            return self._federation

    @property
    def configured(self) -> bool:
        """Whether any remote is configured (usable or not); False without loading the
        federation code when the settings name none."""
        return bool(self.workspace.settings.remotes) and self.federation.configured

    def owns(self, name: str) -> bool:
        """Whether ``name`` is ``label:name`` with the label of a configured remote."""
        label, sep, rest = name.partition(":")
        return bool(sep and rest) and self.configured and self.federation.spec(label) is not None

    def listing(self, *, refresh: bool = False) -> Listing | None:
        """Every remote's entries and how each answered (cached per remote for its
        ``ttl_s``); None when no remote is configured."""
        if not self.configured:
            return None
        return self.federation.listing(refresh=refresh)

    def skills(self) -> Sequence[Skill]:
        """Every remote's skills as last listed, by name (their frontmatter only)."""
        listing = self.listing()
        return () if listing is None else listing.documents

    def fetch(self, name: str) -> Skill:
        """The remote skill ``name`` verified and cached locally, past its review gate."""
        return self.load(name).skill

    def notes(self) -> list[str]:
        """Config problems and skipped remotes, one line each (none when unconfigured)."""
        listing = self.listing()
        return [] if listing is None else listing.notes

    def reviewed(self, *, refresh: bool = False) -> list[tuple[RemoteEntry, Review]]:
        """Every listed remote skill with its review state, by name."""
        from skilldeck.core.remote import read_approvals, review_of

        listing = self.listing(refresh=refresh)
        if listing is None:
            return []
        approvals = read_approvals()
        return [(e, review_of(e, approvals)) for e in listing.entries]

    def facts(self, name: str) -> dict[str, Any] | None:
        """:func:`facts` of the listed remote skill ``name`` (None when it is not one)."""
        from skilldeck.core.remote import review_of

        listing = self.listing() if self.owns(name) else None
        entry = listing.entry(name) if listing is not None else None
        return None if entry is None else facts(entry, review_of(entry).state)

    def search(
        self,
        query: str,
        scope: Scope,
        limit: int,
        explain: bool,
        tools: set[str] | None,
        agent: bool,
        session: str | None,
    ) -> SearchResponse | None:
        """Local (``scope``) and remote skills ranked in one index, or None when no remote
        listed a skill (the local search answers alone)."""
        listing = self.listing()
        if listing is None or not listing.documents:
            return None
        workspace = self.workspace
        if not workspace.generation:
            workspace.discover()
        with self._lock:
            combined = self._combined.get(scope)
            if combined is None:
                from skilldeck.core.remote import CombinedSearch

                combined = self._combined[scope] = CombinedSearch(workspace, scope)
        response: SearchResponse = combined.search(
            listing.documents,
            query,
            limit,
            tools=tools,
            agent=agent,
            explain=explain,
            session=session,
        )
        return response

    def load(self, name: str) -> RemoteSkill:
        """``name`` as its remote serves it now, past the review gate (see
        :meth:`~skilldeck.core.remote.Federation.load`)."""
        self._require(name)
        return self.federation.load(name, agent=True)

    def read(self, name: str, rel: str) -> tuple[RemoteEntry, Review, bytes]:
        """One file of ``name``, listed by its current entry, past the review gate."""
        self._require(name)
        return self.federation.read(name, rel, agent=True)

    def show(self, name: str) -> RemoteSkill:
        """``name`` for an operator to review (no gate: seeing it is how it gets approved);
        its digest is remembered as the one shown."""
        from skilldeck.core.remote import record_shown

        self._require(name)
        loaded = self.federation.load(name, agent=False)
        record_shown(loaded.entry)
        return loaded

    def approve(self, name: str, shown: str | None) -> Approval:
        """Approve ``name`` as it was shown: ``shown`` (the digest the operator saw), else
        the one :meth:`show` remembered; nothing is downloaded.

        Raises:
            SkilldeckError: INVALID_PARAM (reason ``not_shown``) when it was never shown;
                the refusals of :func:`~skilldeck.core.remote.approve` (reason
                ``changed_since_shown`` when the remote now serves another digest).
        """
        from skilldeck.core.remote import approve, last_shown, review_of

        self._require(name)
        digest = shown or last_shown(name)
        if digest is None:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"remote skill {name!r} was never shown here: review it first",
                reason="not_shown",
            )
        entry = self.federation.current(name)
        before = review_of(entry)
        line, added = approve(entry, digest)
        return Approval(entry, before, line, added)

    def _require(self, name: str) -> None:
        """NOT_FOUND naming the remotes when ``name`` is no configured remote's."""
        if not self.owns(name):
            self.federation.split(name)  # raises NOT_FOUND naming the configured remotes
