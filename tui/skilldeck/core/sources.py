"""Where skills come from, as one typed extension point: :class:`SkillSource`.

The FrontMCP registry design lets other stores (a vector database, a catalog table) serve
skills next to the local ones. In Skilldeck a source is anything that can say which skills
it offers now (tier 1: each a :class:`~skilldeck.core.model.Skill` parsed from its
frontmatter) and hand over one of them ready to load (tier 2: a skill whose SKILL.md is on
local disk, so the loader, the confinement rule and the sessions treat it like any other).
The local roots (:class:`LocalSource`, over a :class:`~skilldeck.core.workspace.Workspace`)
and the remote catalogs (the workspace's own
:class:`~skilldeck.core.workspace.RemoteSource`, ``Workspace.remotes``) satisfy it; a
provider outside the core (e.g. :mod:`skilldeck.providers.sqlite_catalog`) implements the
same two methods. A source only reads: nothing in the protocol writes to the store it reads
from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from skilldeck.core.model import Skill

if TYPE_CHECKING:
    from skilldeck.core.workspace import Workspace


@runtime_checkable
class SkillSource(Protocol):
    """A catalog of skills: what it offers, and one skill ready to load."""

    def skills(self) -> Sequence[Skill]:
        """The skills offered now, by name (their frontmatter only: nothing is loaded)."""
        ...

    def fetch(self, name: str) -> Skill:
        """The skill ``name`` with its SKILL.md on local disk, for
        :func:`~skilldeck.core.loader.load_skill`.

        Raises:
            SkilldeckError: NOT_FOUND for a name the source does not offer; whatever
                refusal the source makes (PERMISSION_DENIED with a ``reason``).
        """
        ...


class LocalSource:
    """The local roots of a workspace as a :class:`SkillSource` (what a model may see)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def skills(self) -> Sequence[Skill]:
        """The skills visible to models."""
        return self.workspace.visible_to_models()

    def fetch(self, name: str) -> Skill:
        """The skill a model asking for ``name`` gets (:meth:`Workspace.resolve`)."""
        return self.workspace.resolve(name, for_model=True)
