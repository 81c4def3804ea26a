"""A one-shot search that does not build the catalog: scan, fingerprint, saved index.

A command that searches once (``skilldeck search``) needs the ranking and the few skills
it returns, not every :class:`~skilldeck.core.model.Skill`. :func:`open_saved` walks the
roots (the walk :func:`~skilldeck.core.discovery.discover` makes) and takes their
:func:`~skilldeck.core.discovery.fingerprint`; when the local store holds the scope's
index saved from a catalog with that fingerprint, the index answers from its saved
columns and :class:`LazySkills` loads only the skills a response shows (through
:func:`~skilldeck.core.discovery.load_found`: the stored row, re-parsed when it is bad).
Otherwise the caller takes the full path (discover, then index, which saves the index
with the fingerprint for the next run).

Measured on the 10k synthetic catalog (/tmp/c10k), warm store, 2 shared cores: the full
path spent ~0.33 s in discovery (10k Skill objects) and 50-90 ms loading the index; this
one spends 38-51 ms walking, 6-8 ms fingerprinting, ~60 ms reading and checking the saved
index and 3-4 ms ranking and loading the 20 results shown. End to end (``skilldeck --root
R search Q``, ``tests/benchmarks/bench_oneshot.py``): 0.66 -> 0.27 s at 10k (0.33x the
plain CSafeLoader + rank-bm25 pipeline), 5.3 s / 648 MB -> 1.4 s / 339 MB at 100k.

With embeddings on, the saved index reads the skills' vectors from the store (keyed by
frontmatter hash and model id, :mod:`skilldeck.core.search.vectors`) and embeds only the
query (``tests/benchmarks/bench_semantic.py``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from skilldeck.core.model import Diagnostic, Skill

if TYPE_CHECKING:
    from skilldeck.core.discovery import Root, RootScan
    from skilldeck.core.discovery.scan import Found
    from skilldeck.core.search import SearchIndex
    from skilldeck.core.workspace import Scope, Workspace


@dataclass(slots=True)
class Scanned:
    """One walk of a workspace's roots, kept so that a fallback does not walk again.

    Attributes:
        roots: The roots walked.
        groups: What each root gave (:func:`~skilldeck.core.discovery.scan_roots`).
        diagnostics: The walk's problems.
        fingerprint: The catalog fingerprint (None: a file changed too recently).
    """

    roots: list[Root]
    groups: list[RootScan]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fingerprint: str | None = None


class LazySkills(Sequence[Skill]):
    """The documents of a saved index: a read-only sequence of skills, each loaded on
    first access (then kept), in document order.

    Ranking never reads it (it reads the index's columns), so a search loads just the
    skills it returns. Iterating over it, ``in`` and ``index()`` load every skill.
    """

    def __init__(self, count: int, load: Callable[[int], Skill]) -> None:
        self.size = count
        self.load = load
        self.loaded: dict[int, Skill] = {}
        """The skills loaded so far, by document."""

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, item: int) -> Skill: ...

    @overload
    def __getitem__(self, item: slice) -> list[Skill]: ...

    def __getitem__(self, item: int | slice) -> Skill | list[Skill]:
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(self.size))]
        doc = operator.index(item)
        if doc < 0:
            doc += self.size
        if not 0 <= doc < self.size:
            raise IndexError("document out of range")
        skill = self.loaded.get(doc)
        if skill is None:
            skill = self.loaded[doc] = self.load(doc)
        return skill


def quick_index(workspace: Workspace, scope: Scope, semantic: bool) -> SearchIndex:
    """The saved index of ``scope`` answering without the catalog when the workspace has
    not discovered yet and the store holds it for the current fingerprint; else the
    workspace discovers (reusing this walk) and indexes. With ``semantic`` the embedding
    signal is turned on: the skills' vectors come from the store, so a warm search embeds
    only its query (a skill whose vector is missing is loaded and embedded)."""
    index = None
    if not workspace.generation:
        walked = scan(workspace)
        index = open_saved(workspace, scope, walked)
        if index is None:
            workspace.discover(walked=walked)
    if index is None:
        index = workspace.index(scope)
    if semantic and not index.semantic:
        try:
            index.enable_semantic(workspace.embedding)
        finally:
            workspace.report("")
    return index


def scan(workspace: Workspace) -> Scanned:
    """Walk the workspace's roots and fingerprint the catalog they hold."""
    from skilldeck.core.discovery import fingerprint, scan_roots

    roots = workspace.roots()
    found = Scanned(roots, [])
    found.groups = scan_roots(roots, found.diagnostics)
    found.fingerprint = fingerprint(roots, found.groups, workspace.settings, workspace.profile)
    if found.fingerprint is not None:
        found.fingerprint = _with_tools(found.fingerprint, workspace)
    return found


def _with_tools(digest: str, workspace: Workspace) -> str:
    """``digest`` folded with the stats of what decides tool availability (the tools file
    and the MCP answers cache): ``tool-validation: strict`` makes a skill invalid, and so
    drops it from the visible index, when its tools are missing."""
    import hashlib
    import os

    from skilldeck.core.tools.mcp_servers import McpCache

    parts = [digest]
    for path in (workspace.settings.tools_path, McpCache().path):
        try:
            info = os.stat(path)
            parts.append(f"{path}\0{info.st_mtime_ns}\0{info.st_size}")
        except OSError:
            parts.append(f"{path}\0-")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def open_saved(workspace: Workspace, scope: Scope, walked: Scanned) -> SearchIndex | None:
    """The scope's saved index if it was made from the catalog ``walked`` shows, with
    :class:`LazySkills` documents; None when the full path must answer."""
    from skilldeck.core.search.persist import load_saved

    if walked.fingerprint is None or scope == "all":  # "all" also needs shadowing facts
        return None
    where: dict[str, tuple[RootScan, Found]] = {}
    for group in sorted(walked.groups, key=lambda g: g.level):  # the winning root last
        for item in group.found:
            where[item.md_path] = (group, item)
    missing: list[str] = []

    def documents(paths: list[str]) -> Sequence[Skill]:
        missing.extend(p for p in paths if p not in where)
        return LazySkills(len(paths), lambda doc: _load(workspace, where[paths[doc]]))

    key = workspace.index_key(scope)
    index = load_saved(workspace.store, key, walked.fingerprint, workspace.settings, documents)
    if index is None or missing:
        return None
    index.telemetry = workspace.telemetry
    return index


def _load(workspace: Workspace, pick: tuple[RootScan, Found]) -> Skill:
    from skilldeck.core.discovery import load_found

    settings, profile, store = workspace.settings, workspace.profile, workspace.store
    return load_found([pick], settings, profile=profile, store=store)[0]
