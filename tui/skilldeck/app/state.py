"""What the terminal UI knows about the skills: the catalog and everything derived from it.

Plain Python (no Textual): built in a thread worker by the app, read by screens and widgets.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.core.config import Settings
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source

if TYPE_CHECKING:
    from skilldeck.core.lint import LintConfig
    from skilldeck.core.search import SearchIndex, SearchResponse
    from skilldeck.core.tools import ToolAvailability, ToolRegistry

SOURCE_BADGE = {
    Source.BUNDLED: "bundled",
    Source.USER: "user",
    Source.PROJECT: "project",
    Source.EXPLICIT: "explicit",
}


def sort_key(skill: Skill) -> tuple[str, int, str]:
    """Name order; for equal names the winner (highest source) first."""
    return (skill.name.lower(), -skill.source.rank, str(skill.path))


def short_path(path: Path) -> str:
    """``path`` with ``SKILLDECK_HOME`` or the home folder written as a variable or ``~``."""
    text = str(path)
    state_home = os.environ.get("SKILLDECK_HOME")
    if state_home and text.startswith(state_home.rstrip(os.sep) + os.sep):
        return "$SKILLDECK_HOME" + text[len(state_home.rstrip(os.sep)) :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return text


@dataclass(slots=True)
class Hit:
    """One row of the results list.

    Attributes:
        skill: The skill.
        score: Search score (0-1), None for the unranked listing.
    """

    skill: Skill
    score: float | None = None


@dataclass(slots=True)
class Ranked:
    """A ranked answer for one query.

    Attributes:
        query: The query it answers.
        hits: Shown rows, best first (capped).
        total: How many skills matched in all.
        elapsed_ms: Search time.
        ranked: False when the search index was not ready and a plain filter was used.
        semantic: The embedding signal took part.
    """

    query: str
    hits: list[Hit]
    total: int
    elapsed_ms: float
    ranked: bool = True
    semantic: bool = False


@dataclass(slots=True)
class DeckState:
    """The catalog plus lint findings, the search index and tool availability.

    Attributes:
        settings: Loaded settings.
        profile: Validation profile.
        roots: Explicit roots (None: the default discovery roots).
        catalog: Every discovered skill.
        lint: Lint findings keyed by SKILL.md path.
        lint_config: The lint configuration used.
        index: The search index, once built.
        tools: The tool registry, once loaded.
        availability: Tool availability keyed by SKILL.md path.
        tool_findings: Tool diagnostics (ST codes) keyed by SKILL.md path.
    """

    settings: Settings
    profile: str = "default"
    roots: list[Path] | None = None
    catalog: Catalog = field(default_factory=Catalog)
    lint: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    lint_config: LintConfig | None = None
    index: SearchIndex | None = None
    tools: ToolRegistry | None = None
    availability: dict[Path, ToolAvailability] = field(default_factory=dict)
    tool_findings: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    _sorted: list[Skill] | None = None
    _by_path: dict[Path, Skill] | None = None

    # ---------------------------------------------------------------- building

    def discover(self, progress: Callable[[int], None] | None = None) -> None:
        """Scan the roots and parse every SKILL.md (blocking: call from a thread)."""
        from skilldeck.core.discovery import Root, default_roots, discover

        if self.roots:
            roots = [Root(p.expanduser().resolve(), Source.EXPLICIT) for p in self.roots]
        else:
            roots = default_roots(self.settings)
        self.catalog = discover(roots, self.settings, profile=self.profile, progress=progress)
        self._changed()

    def _changed(self) -> None:
        self._sorted = None
        self._by_path = None

    def run_lint(self) -> None:
        """Lint every skill, with the cross-skill rules (blocking)."""
        from skilldeck.core.lint import lint_catalog, load_lint_config

        start = self.roots[0] if self.roots else Path.cwd()
        self.lint_config = load_lint_config(start)
        self.lint = lint_catalog(self.catalog.skills, self.catalog, self.lint_config)

    def build_index(self) -> None:
        """Build the search index (blocking)."""
        from skilldeck.core.search import SearchIndex

        self.index = SearchIndex.build(
            list(self.catalog.skills), settings=self.settings, semantic=False
        )

    def enable_semantic(self) -> bool:
        """Add the optional embedding signal to the index (slow: call from a thread)."""
        if self.index is None:
            return False
        return bool(self.index.enable_semantic())

    @property
    def semantic(self) -> bool:
        """Whether the index has the embedding signal."""
        return self.index is not None and bool(self.index.semantic)

    def load_tools(self) -> None:
        """Load the tool registry and compute availability for every skill (blocking)."""
        from skilldeck.core.tools import ToolRegistry

        self.tools = ToolRegistry.load(self.settings)
        availability: dict[Path, ToolAvailability] = {}
        findings: dict[Path, list[Diagnostic]] = {}
        for skill in self.catalog.skills:
            availability[skill.path], findings[skill.path] = self._check_tools(skill)
        self.availability, self.tool_findings = availability, findings

    def _check_tools(self, skill: Skill) -> tuple[ToolAvailability, list[Diagnostic]]:
        from skilldeck.core.tools import check_skill_tools

        assert self.tools is not None
        return check_skill_tools(skill, self.tools)

    def refresh(self, path: Path) -> Skill | None:
        """Re-read one SKILL.md that changed, appeared or vanished (blocking).

        Returns:
            The skill now at ``path``, or None when it is gone.
        """
        from skilldeck.core.discovery import refresh_skill
        from skilldeck.core.lint import lint_catalog, lint_skill

        old = self.catalog.by_path(path)
        self.catalog = refresh_skill(self.catalog, path, self.settings, self.profile)
        self._changed()
        new = self.skill_at(path)
        if self.index is not None:
            if old is not None:
                self.index.remove(old.path)
            if new is not None:
                self.index.update(new)
        self.lint.pop(path, None)
        if new is not None:
            self.lint[path] = lint_skill(new, self.catalog, self.lint_config)
            if self.tools is not None:
                self.availability[path], self.tool_findings[path] = self._check_tools(new)
        else:
            self.availability.pop(path, None)
            self.tool_findings.pop(path, None)
        # Cross-skill rules (shadowing, overlap) may change for the others: cheap enough.
        if len(self.catalog.skills) <= 2000:
            self.lint = lint_catalog(self.catalog.skills, self.catalog, self.lint_config)
        return new

    # ---------------------------------------------------------------- reading

    def all_sorted(self) -> list[Skill]:
        """Every skill (shadowed ones too), sorted by name."""
        if self._sorted is None:
            self._sorted = sorted(self.catalog.skills, key=sort_key)
        return self._sorted

    def skill_at(self, path: Path) -> Skill | None:
        """The catalog's skill whose SKILL.md is ``path``."""
        if self._by_path is None:
            self._by_path = {s.path: s for s in self.catalog.skills}
        return self._by_path.get(path)

    def diagnostics_for(self, skill: Skill) -> list[Diagnostic]:
        """Parse, validation, tool and lint findings of one skill, by line then severity."""
        seen: set[tuple[str, str, int | None]] = set()
        merged: list[Diagnostic] = []
        for diag in [
            *skill.diagnostics,
            *self.tool_findings.get(skill.path, []),
            *self.lint.get(skill.path, []),
        ]:
            key = (diag.code, diag.message, diag.line)
            if key not in seen:
                seen.add(key)
                merged.append(diag)
        merged.sort(key=lambda d: (d.line or 0, d.severity.rank, d.code))
        return merged

    def counts(self, skill: Skill) -> tuple[int, int]:
        """Number of errors and warnings of one skill (lint included)."""
        diags = self.diagnostics_for(skill)
        errors = sum(1 for d in diags if d.severity is Severity.ERROR)
        warnings = sum(1 for d in diags if d.severity is Severity.WARNING)
        return errors, warnings

    def tools_complete(self, skill: Skill) -> bool | None:
        """Whether all required tools are available (None: not known yet)."""
        availability = self.availability.get(skill.path)
        return None if availability is None else bool(availability.complete)

    def findings(self) -> list[tuple[Skill, Diagnostic]]:
        """Every finding of every skill."""
        return [(s, d) for s in self.all_sorted() for d in self.diagnostics_for(s)]

    def rank(self, query: str, limit: int, semantic: bool = False) -> Ranked:
        """Answer one query: ranked by the index, or name-sorted for an empty query.

        The embedding signal (hundreds of ms per query) is used only when ``semantic``.

        Before the index is built, a plain case-insensitive filter on name and
        description stands in (``ranked`` is then False).
        """
        import time

        started = time.perf_counter()
        text = query.strip()
        if not text:
            skills = self.all_sorted()
            hits = [Hit(s) for s in skills[:limit]]
            return Ranked(query, hits, len(skills), _ms(started))
        if self.index is None:
            needle = text.lower()
            found = [
                s
                for s in self.all_sorted()
                if needle in s.name.lower() or needle in s.description.lower()
            ]
            return Ranked(
                query, [Hit(s) for s in found[:limit]], len(found), _ms(started), ranked=False
            )
        use_semantic = semantic and self.semantic
        response = self.index.search(text, limit=limit, semantic=use_semantic)
        hits = [Hit(self.skill_at(r.skill.path) or r.skill, r.score) for r in response.results]
        return Ranked(
            query, hits, max(response.total, len(hits)), _ms(started), semantic=use_semantic
        )

    def explain(self, query: str, skill: Skill, limit: int = 200) -> SearchResponse | None:
        """The search explanation for ``query`` (None before the index is ready)."""
        if self.index is None or not query.strip():
            return None
        return self.index.search(query.strip(), limit=limit, explain=True)


def _ms(started: float) -> float:
    import time

    return (time.perf_counter() - started) * 1000
