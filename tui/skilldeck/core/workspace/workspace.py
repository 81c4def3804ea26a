"""The workspace: roots -> catalog -> diagnostics -> search index -> tool availability.

:class:`Workspace` is the only pipeline in Skilldeck. The CLI, the terminal UI and the MCP
server each construct one and call its stages; none wires discovery, lint, the search
index or the tool registry itself (``tests/test_architecture.py`` enforces it).

Stages (each blocking; the TUI runs them in a thread worker):

* :meth:`Workspace.discover` scans the roots (unchanged skills from the local store) and
  applies ``tool-validation: strict`` (:func:`~skilldeck.core.tools.gate_strict`).
* :meth:`Workspace.lint` adds lint findings; :meth:`Workspace.index` loads (or builds) the
  search index of a scope; :meth:`Workspace.tools` checks every skill's tools.
* :meth:`Workspace.refresh` / :meth:`Workspace.refresh_if_changed` discover again and
  bring the later stages up to date for what changed.
* :meth:`Workspace.search` is the one search of every face; a command that searches and
  exits skips the stages above when the store proves the catalog unchanged
  (:mod:`~skilldeck.core.workspace.oneshot`).
* :attr:`Workspace.telemetry` is the one telemetry writer, configured by the face's
  settings and passed down to search, loading, sessions and execution.
* :attr:`Workspace.actions` is the one write door (load, read, run, toolsets, approvals;
  :mod:`~skilldeck.core.workspace.actions`); :attr:`Workspace.remotes` the remote catalogs,
  a source beside the roots (:mod:`~skilldeck.core.workspace.remotes`).

Beside it: :mod:`.lint_store`, :mod:`.watch`, :mod:`.views`; limits: :mod:`skilldeck.core.limits`.

Thread safety: a stage computes outside :attr:`Workspace.lock` and swaps its result in
under it; readers and searches take a consistent snapshot under it.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from skilldeck.core.config import Settings
from skilldeck.core.limits import AGENT_LIMIT, HUMAN_LIMIT
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source
from skilldeck.core.telemetry import Telemetry
from skilldeck.core.workspace.views import listed, listed_counts, merged_diagnostics, sort_key
from skilldeck.core.workspace.watch import baseline, config_file, roots_changed, stat
from skilldeck.core.workspace.watch import changed as watched_changed

if TYPE_CHECKING:
    from skilldeck.core.discovery import Root
    from skilldeck.core.lint import LintConfig
    from skilldeck.core.search import SearchIndex, SearchResponse
    from skilldeck.core.store import LocalStore
    from skilldeck.core.tools import ToolAvailability, ToolRegistry
    from skilldeck.core.workspace.actions import Actions
    from skilldeck.core.workspace.oneshot import Scanned
    from skilldeck.core.workspace.remotes import RemoteSource

__all__ = ["FULL_RELINT_MAX", "Scope", "Workspace"]

Scope = Literal["all", "active", "visible"]
"""Which skills an index covers: every one, the winners, or what a model may see."""

FULL_RELINT_MAX = 2000
"""Up to this many skills a refresh re-runs the cross-skill lint rules for all of them."""


def _stamp(skill: Skill) -> tuple[int, int, str, bool, Path | None]:
    return (skill.mtime_ns, skill.size, skill.content_hash, skill.enabled, skill.shadowed_by)


class Workspace:
    """The skills of a set of roots and everything derived from them.

    Args:
        settings: Loaded settings.
        roots: Explicit roots (``--root``), or None for the default discovery roots.
        profile: Validation profile.
        cwd: Working directory for project roots, the lint and tools configuration.
        store: The local store (default: :meth:`LocalStore.open` under ``SKILLDECK_HOME``).
        watch: Record what to stat for :meth:`changed_on_disk` at each discovery (faces
            that poll for changes; a one-shot command skips that cost).
        telemetry: The telemetry writer (default: one configured by ``settings``).

    Attributes:
        catalog: Every discovered skill (shadowed ones too).
        lint_findings: Lint findings keyed by SKILL.md path.
        lint_config: The lint configuration used (None before :meth:`lint`).
        availability: Tool availability keyed by SKILL.md path (after :meth:`tools`).
        tool_findings: Tool diagnostics (ST codes) keyed by SKILL.md path.
        generation: Bumped by every discovery (indexes of an older one are stale).
        fingerprint: The catalog's :func:`~skilldeck.core.discovery.fingerprint` (None
            before discovery or when a file had just changed), saved with its indexes.
        lock: Held while state is swapped in and while an index is searched.
        telemetry: The one telemetry writer of this workspace, configured by its face's
            settings; search, loading, sessions and execution all emit to it.
    """

    def __init__(
        self,
        settings: Settings,
        roots: list[Path] | None = None,
        *,
        profile: str = "default",
        cwd: Path | None = None,
        store: LocalStore | None = None,
        watch: bool = False,
        telemetry: Telemetry | None = None,
    ) -> None:
        if store is None:
            from skilldeck.core.store import LocalStore

            store = LocalStore.open()
        self.settings = settings
        self.telemetry = telemetry or Telemetry.from_settings(settings)
        self.explicit_roots = [Path(p).expanduser() for p in roots] if roots else None
        self.profile = profile
        self.cwd = cwd
        self.store = store
        self.watch = watch
        self.lock = threading.RLock()
        self.catalog = Catalog()
        self.lint_findings: dict[Path, list[Diagnostic]] = {}
        self.lint_config: LintConfig | None = None
        self.availability: dict[Path, ToolAvailability] = {}
        self.tool_findings: dict[Path, list[Diagnostic]] = {}
        self.generation = 0
        self.fingerprint: str | None = None
        self._oneshot: dict[Scope, SearchIndex] = {}
        self._roots: list[Root] | None = None
        self._registry: ToolRegistry | None = None
        self._indexes: dict[Scope, tuple[int, SearchIndex]] = {}
        self._sorted: tuple[Catalog, list[Skill]] | None = None
        """The catalog last sorted and its skills by name (a stale sort is never used)."""
        self._by_path: dict[Path, Skill] = {}
        self._by_name: dict[str, Skill] = {}
        self._visible: list[Skill] = []
        self._watch: dict[str, tuple[int, int]] = {}
        self.settings_stale = False
        """The config file changed since first seen: a restart applies :attr:`settings`."""
        self.scan_seconds = 0.0
        self.progress: Callable[[str], None] | None = None
        """Told what long step runs now (``reading skills: 1500 of 4000``), and ``""``
        when it ended: a face shows it (the CLI on a terminal's stderr); None: nobody."""
        self._refresh_lock = threading.Lock()
        self._index_lock = threading.Lock()

    @cached_property
    def actions(self) -> Actions:
        """The one write door (:class:`~skilldeck.core.workspace.actions.Actions`)."""
        from skilldeck.core.workspace.actions import Actions

        return Actions(self)

    @cached_property
    def remotes(self) -> RemoteSource:
        """The remote catalogs, a source beside the local roots (:mod:`.remotes`)."""
        from skilldeck.core.workspace.remotes import RemoteSource

        return RemoteSource(self)

    @property
    def notices(self) -> list[str]:
        """Repairs the local store made while opening (each face shows them once)."""
        return list(self.store.notices)

    # ------------------------------------------------------------------ roots and keys

    def roots(self) -> list[Root]:
        """The roots in ascending precedence (explicit ones, or the default roots)."""
        if self._roots is None:
            from skilldeck.core.discovery import Root, default_roots

            if self.explicit_roots:
                self._roots = [Root(p, Source.EXPLICIT) for p in self.explicit_roots]
            else:
                self._roots = default_roots(self.settings, self.cwd)
        return self._roots

    def key(self, purpose: str = "all") -> str:
        """A store key of this workspace: a digest of roots, sources, profile and purpose."""
        digest = hashlib.sha256()
        for root in self.roots():
            digest.update(f"{os.path.abspath(root.path)}\0{root.source.value}\n".encode())
        digest.update(f"profile={self.profile}\0purpose={purpose}".encode())
        return digest.hexdigest()[:32]

    def index_key(self, scope: Scope = "all") -> str:
        """The store key of this workspace's search index over ``scope``."""
        return self.key(scope)

    # ------------------------------------------------------------------ stages

    def discover(
        self, progress: Callable[[int], None] | None = None, *, walked: Scanned | None = None
    ) -> Catalog:
        """Scan the roots (default roots are looked up again) and parse what changed
        (blocking); returns the new catalog. ``walked``: a walk of the current roots just
        made (:func:`~skilldeck.core.workspace.oneshot.scan`), not to be made again."""
        from skilldeck.core.discovery import discover
        from skilldeck.core.workspace.oneshot import scan

        if not self.explicit_roots and walked is None:
            self._roots = None
        self.report("looking for skills")
        walked = walked or scan(self)
        if progress is None and self.progress is not None:
            total = sum(len(group.found) for group in walked.groups)
            progress = self._reading(total)
        try:
            catalog = discover(
                walked.roots,
                self.settings,
                profile=self.profile,
                store=self.store,
                progress=progress,
                scanned=walked.groups,
                scan_diagnostics=walked.diagnostics,
            )
        finally:
            self.report("")
        self._gate(catalog)
        files = [self.settings.registry_file, self.settings.tools_path]
        watch = baseline(catalog, files) if self.watch else {}
        with self.lock:
            self.catalog = catalog
            self._sorted = None
            self._by_path = {s.path: s for s in catalog.skills}
            active = catalog.active()
            self._by_name = {s.name: s for s in active}
            self._visible = [s for s in active if s.visible_to_models]
            self._watch = watch
            self.fingerprint = walked.fingerprint
            self.generation += 1
        return catalog

    def _reading(self, total: int) -> Callable[[int], None]:
        return lambda done: self.report(f"reading skills: {done} of {total}")

    def report(self, text: str) -> None:
        """Tell :attr:`progress` (when set) what long step runs now; ``""``: none."""
        if self.progress is not None:
            self.progress(text)

    def _gate(self, catalog: Catalog) -> None:
        """Apply ``tool-validation: strict`` (the registry is loaded only when some skill is
        strict): a strict skill missing a required tool becomes invalid."""
        from skilldeck.core.tools import gate_strict

        gate_strict(catalog.skills, self.registry, self.settings)

    def invalid_problem(self) -> str | None:
        """With ``fail_on_invalid_skills`` on, why this workspace must not be used (its
        invalid skills named), else None."""
        from skilldeck.core.tools import invalid_problem

        return invalid_problem(self.catalog.skills, self.settings)

    def lint(self, config: LintConfig | None = None) -> dict[Path, list[Diagnostic]]:
        """Lint every skill, cross-skill rules included (blocking; stored while unchanged).

        Args:
            config: The lint configuration (default: the one found from the first root or
                the working directory).

        Returns:
            Findings keyed by SKILL.md path (also kept in :attr:`lint_findings`).
        """
        from skilldeck.core.lint import load_lint_config
        from skilldeck.core.workspace.lint_store import lint_catalog_stored

        if config is None:
            start = self.explicit_roots[0] if self.explicit_roots else (self.cwd or Path.cwd())
            config = load_lint_config(start.absolute())
        catalog = self.catalog
        findings = lint_catalog_stored(catalog, config, self.store, self.key("lint"))
        with self.lock:
            if self.catalog is catalog:
                self.lint_config, self.lint_findings = config, findings
        return findings

    def index(self, scope: Scope = "all") -> SearchIndex:
        """The search index over ``scope`` (loaded from the store, or built), kept current.

        One thread loads at a time; the others wait for its index. Searches meanwhile use
        the previous index (:meth:`search`). An index with the embedding signal keeps it.
        """
        with self._index_lock:
            with self.lock:
                held = self._indexes.get(scope)
                if held is not None and held[0] == self.generation:
                    return held[1]
                generation, skills = self.generation, self.skills_in(scope)
                fingerprint = self.fingerprint
            semantic = held is not None and bool(held[1].semantic)
            index = self._load_index(skills, scope, semantic, fingerprint)
            with self.lock:
                if self.generation == generation:
                    self._indexes[scope] = (generation, index)
            return index

    def _load_index(
        self, skills: list[Skill], scope: Scope, semantic: bool, fingerprint: str | None
    ) -> SearchIndex:
        """The persisted index over ``skills``, updated for what changed."""
        from skilldeck.core.search.persist import load_or_build

        key = self.index_key(scope)
        self.report(f"indexing {len(skills)} skills")
        try:
            index = load_or_build(
                skills, self.store, key, self.settings, semantic=semantic, fingerprint=fingerprint
            )
        finally:
            self.report("")
        index.telemetry = self.telemetry
        return index

    def has_index(self, scope: Scope = "all") -> bool:
        """Whether :meth:`index` has run for ``scope``."""
        return scope in self._indexes

    def registry(self) -> ToolRegistry:
        """The tool registry (loaded on first use, again after the tools file changed)."""
        with self.lock:
            if self._registry is None:
                from skilldeck.core.tools import ToolRegistry

                self._registry = ToolRegistry.load(self.settings, cwd=self.cwd)
            return self._registry

    def known_tools(self) -> set[str]:
        """Names of the usable tools the registry knows (preset, tools file, cached MCP
        server answers): what agent-facing searches rank tool completeness against."""
        return self.registry().names()

    def tools(self) -> None:
        """Load the tool registry and check every skill's tools (blocking)."""
        self._check_tools(self.catalog.skills, replace=True)

    def _check_tools(self, skills: Iterable[Skill], *, replace: bool) -> None:
        from skilldeck.core.tools import check_skill_tools

        registry = self.registry()
        availability: dict[Path, ToolAvailability] = {}
        findings: dict[Path, list[Diagnostic]] = {}
        for skill in skills:
            availability[skill.path], findings[skill.path] = check_skill_tools(skill, registry)
        with self.lock:
            if replace:
                self.availability, self.tool_findings = availability, findings
            else:
                self.availability.update(availability)
                self.tool_findings.update(findings)

    def enable_semantic(self, scope: Scope = "all") -> bool:
        """Add the embedding signal to the index (slow: call from a thread), telling
        :attr:`progress` how many skills are embedded.

        Not under :attr:`lock`: searches go on (lexical) while the model embeds; the index
        switches the signal on once the embeddings are complete.
        """
        try:
            return bool(self.index(scope).enable_semantic(self.embedding))
        finally:
            self.report("")

    def embedding(self, done: int, total: int) -> None:
        """Tell :attr:`progress` how far embedding has come (``done`` of ``total`` texts)."""
        self.report(f"embedding for semantic search: {done:,} of {total:,}")

    def semantic(self, scope: Scope = "all") -> bool:
        """Whether the index of ``scope`` has the embedding signal."""
        held = self._indexes.get(scope)
        return held is not None and bool(held[1].semantic)

    # ------------------------------------------------------------------ refresh

    def refresh(self, paths: Iterable[Path] = ()) -> list[Path]:
        """Discover again (unchanged skills come from the store) and update what depends.

        Args:
            paths: SKILL.md files known to have changed (always re-checked).

        Returns:
            The SKILL.md paths whose skill changed, appeared or vanished.
        """
        with self.lock:
            before = {s.path: _stamp(s) for s in self.catalog.skills}
            linted, checked = self.lint_config is not None, self._registry is not None
        catalog = self.discover()
        after = {s.path: _stamp(s) for s in catalog.skills}
        changed = {p for p, stamp in after.items() if before.get(p) != stamp}
        changed |= {p for p in before if p not in after}
        changed |= {Path(p) for p in paths if Path(p) in after or Path(p) in before}
        if linted:
            self._relint(catalog, changed)
        if checked:
            with self.lock:
                for path in changed:
                    self.availability.pop(path, None)
                    self.tool_findings.pop(path, None)
            self._check_tools([s for s in catalog.skills if s.path in changed], replace=False)
        for scope in list(self._indexes):
            self.index(scope)
        return sorted(changed)

    def _relint(self, catalog: Catalog, changed: set[Path]) -> None:
        from skilldeck.core.lint import lint_skill

        if len(catalog.skills) <= FULL_RELINT_MAX:
            self.lint(self.lint_config)
            return
        config, skills = self.lint_config, catalog.skills
        fresh = {s.path: lint_skill(s, catalog, config) for s in skills if s.path in changed}
        with self.lock:
            for path in changed:
                self.lint_findings.pop(path, None)
            self.lint_findings.update(fresh)

    def changed_on_disk(self) -> bool:
        """True when a watched file or folder differs from the last discovery."""
        with self.lock:
            watch = self._watch
        started = time.perf_counter()
        changed = watched_changed(watch) or roots_changed(self.roots(), self.settings, self.cwd)
        self.scan_seconds = time.perf_counter() - started
        return changed

    def refresh_if_changed(self) -> bool:
        """:meth:`refresh` when something changed on disk; True when it did."""
        with self._refresh_lock:
            if not self.changed_on_disk():
                return False
            tools_files = (str(self.settings.registry_file), str(self.settings.tools_path))
            config = config_file()
            with self.lock:
                stale = any(stat(p) != self._watch.get(p) for p in tools_files)
                if config in self._watch and stat(config) != self._watch[config]:
                    self.settings_stale = True
                if stale:
                    self._registry = None
                checked = bool(self.availability)
            self.refresh()
            if stale and checked:
                self.tools()  # every skill's availability may differ with new tools
            return True

    # ------------------------------------------------------------------ reading

    def skills_in(self, scope: Scope) -> list[Skill]:
        """The skills of ``scope``: all, the winners, or the ones visible to models."""
        if scope == "visible":
            return self._visible
        if scope == "active":
            return self.catalog.active()
        return list(self.catalog.skills)

    def visible_to_models(self) -> list[Skill]:
        """The winning skills a model may see (enabled, not hidden from models)."""
        return self._visible

    def by_name(self, name: str) -> Skill | None:
        """The winning skill named ``name`` (enabled or not), or None."""
        return self._by_name.get(name)

    def resolve(self, name: str, *, for_model: bool = False) -> Skill:
        """The skill ``name`` means, for a person or (``for_model``) an agent: the one name
        lookup of every face (:func:`~skilldeck.core.workspace.resolve.resolve`)."""
        from skilldeck.core.workspace.resolve import resolve

        return resolve(self.catalog, self._by_name, self._visible, name, for_model=for_model)

    def all_sorted(self) -> list[Skill]:
        """Every skill (shadowed ones too), sorted by name."""
        catalog = self.catalog
        cached = self._sorted
        if cached is not None and cached[0] is catalog:
            return cached[1]
        sorted_ = sorted(catalog.skills, key=sort_key)
        self._sorted = (catalog, sorted_)
        return sorted_

    def listed(self) -> list[Skill]:
        """The skills that count as skills, by name: they win their name, are enabled and
        are valid (what ``skilldeck list`` lists; :func:`~.views.unlisted_reason`)."""
        return listed(self.catalog.active())

    def listed_counts(self) -> tuple[int, dict[str, int]]:
        """How many skills count (:meth:`listed`), and the others by their first reason
        (``{"disabled": 1}``)."""
        return listed_counts(self.catalog.skills)

    def skill_at(self, path: Path) -> Skill | None:
        """The skill whose SKILL.md is ``path``."""
        return self._by_path.get(path)

    def diagnostics_for(self, skill: Skill) -> list[Diagnostic]:
        """Parse, validation, tool and lint findings of one skill, by line then severity."""
        tools, lint = self.tool_findings.get(skill.path, []), self.lint_findings.get(skill.path, [])
        return merged_diagnostics([*skill.diagnostics, *tools, *lint])

    def counts(self, skill: Skill) -> tuple[int, int]:
        """Number of errors and warnings of one skill (lint included)."""
        severities = [d.severity for d in self.diagnostics_for(skill)]
        return severities.count(Severity.ERROR), severities.count(Severity.WARNING)

    def tools_complete(self, skill: Skill) -> bool | None:
        """Whether all required tools are available (None: not known yet)."""
        availability = self.availability.get(skill.path)
        return None if availability is None else bool(availability.complete)

    def findings(self) -> list[tuple[Skill, Diagnostic]]:
        """Every finding of every skill."""
        return [(s, d) for s in self.all_sorted() for d in self.diagnostics_for(s)]

    def search(
        self,
        query: str,
        *,
        scope: Scope = "all",
        limit: int | None = None,
        explain: bool = False,
        tools: set[str] | None = None,
        agent: bool = False,
        semantic: bool | None = None,
        session: str | None = None,
        remotes: bool = False,
    ) -> SearchResponse:
        """The one search every face uses: rank the skills of ``scope`` for ``query``.

        The index is picked here (:meth:`_searchable`): the saved one when this workspace
        has not discovered (a command that searches and exits: no catalog is built when
        the store proves it unchanged), else the current one (loaded or built when
        missing; while another thread loads it the previous one answers). The search runs
        under :attr:`lock`.

        Args:
            query: Free text, a few keywords, or a partial query being typed.
            scope: Which skills: all, the winners, or the ones visible to models.
            limit: Most results (default :data:`AGENT_LIMIT` with ``agent``, else
                :data:`HUMAN_LIMIT`).
            explain: Per-field scores in each result's signals.
            tools: Available tools (skills missing none win ties).
            agent: Judge confidence with the settings' threshold and emit
                ``skill_selected`` to :attr:`telemetry`.
            semantic: The embedding signal: None uses it when the index has it, True turns
                it on first (slow the first time), False skips it for this query.
            session: With ``agent``, the session the request came from (in the event).
            remotes: Rank the skills of the remote catalogs too (``label:name``) in one
                index with the local ones (:meth:`RemoteSource.search`).
        """
        from skilldeck.core.search import agent_search

        if limit is None:
            limit = AGENT_LIMIT if agent else HUMAN_LIMIT
        if remotes and self.remotes.configured:
            found = self.remotes.search(query, scope, limit, explain, tools, agent, session)
            if found is not None:
                return found
        index = self._searchable(scope, semantic=bool(semantic))
        with self.lock:
            if agent:
                return agent_search(
                    index,
                    query,
                    limit,
                    self.settings,
                    available_tools=tools,
                    telemetry=self.telemetry,
                    session=session,
                )
            return index.search(
                query, limit=limit, explain=explain, available_tools=tools, semantic=semantic
            )

    def _searchable(self, scope: Scope, *, semantic: bool) -> SearchIndex:
        """The index a search of ``scope`` reads (see :meth:`search`)."""
        if not self.generation:
            return self.quick_index(scope, semantic=semantic)
        with self.lock:
            held = self._indexes.get(scope)
        if held is not None and held[0] != self.generation and self._index_lock.locked():
            index = held[1]  # being brought up to date: the previous index answers
        else:
            index = self.index(scope)
        if semantic and not index.semantic and index.semantic_error is None:
            index.enable_semantic()
        return index

    def quick_index(self, scope: Scope = "active", *, semantic: bool = False) -> SearchIndex:
        """The index of ``scope`` for one-shot searches, kept for the next queries
        (:func:`~skilldeck.core.workspace.oneshot.quick_index`)."""
        from skilldeck.core.workspace.oneshot import quick_index

        index = self._oneshot.get(scope)
        if index is None:
            index = self._oneshot[scope] = quick_index(self, scope, semantic)
        return index
