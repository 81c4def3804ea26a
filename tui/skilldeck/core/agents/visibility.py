"""Which catalog skills each agent sees, from which folder, and which it does not.

For every agent of :data:`~.table.AGENTS`, its documented folders are listed in precedence
order (the project folders from the working folder up to the repository root, nearest
first, and the user folders under the home folder); every ``<folder>/<skill>/SKILL.md`` is
an entry. The first entry of a name wins; later ones are ``shadowed``. A winner that the
Skilldeck registry disables is ``disabled``. The listing budget is modelled as the agent's
documentation describes it: entries in name order, each costing its name, its
description (cut to the agent's description cap, which marks it ``truncated``) and
:data:`ENTRY_OVERHEAD`; past the budget an agent that shortens descriptions first marks
every entry ``truncated``, and the entries that still do not fit are ``cut``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.agents.table import AGENTS, AgentSpec
from skilldeck.core.model import Skill

ENTRY_OVERHEAD = 40
"""Characters of markup around one listing entry (tags, path, separators)."""


@dataclass(slots=True)
class AgentSkill:
    """A skill folder one agent reads, and what becomes of it."""

    name: str
    folder: Path
    scope: str
    entry: Path
    status: str = "seen"
    reason: str = ""
    truncated: bool = False
    in_catalog: bool = True
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "folder": str(self.folder),
            "path": str(self.entry / "SKILL.md"),
            "scope": self.scope,
            "status": self.status,
            "reason": self.reason,
            "truncated": self.truncated,
            "in_catalog": self.in_catalog,
        }


@dataclass(slots=True)
class AgentView:
    """What one agent sees of this machine's skills."""

    spec: AgentSpec
    folders: list[tuple[Path, str]] = field(default_factory=list)
    skills: list[AgentSkill] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)
    listing_chars: int = 0

    def installed(self, home: Path) -> bool:
        """Whether the agent looks installed: one of its marks (a home folder such as
        ``~/.claude``, or a command on ``PATH``) exists."""
        return any((home / m).is_dir() or shutil.which(m) for m in self.spec.marks)

    def seen(self) -> list[AgentSkill]:
        """The entries the agent lists (truncated ones too), by name."""
        return sorted((s for s in self.skills if s.status == "seen"), key=lambda s: s.name)

    def to_dict(self, home: Path) -> dict[str, Any]:
        """JSON-ready form (``home``: where to look for the agent's marks)."""
        spec = self.spec
        return {
            "id": spec.id,
            "name": spec.name,
            "installed": self.installed(home),
            "folders": [
                {"path": str(p), "scope": scope, "exists": p.is_dir()} for p, scope in self.folders
            ],
            "precedence": spec.precedence,
            "listing": {
                "budget_chars": spec.budget_chars,
                "description_cap": spec.description_cap,
                "chars": self.listing_chars,
            },
            "docs": list(spec.docs),
            "skills": [s.to_dict() for s in self.skills],
            "not_seen": list(self.missing),
        }


def project_chain(cwd: Path) -> list[Path]:
    """``cwd`` and its parents up to the repository root (the nearest with ``.git``),
    nearest first; just ``cwd`` outside a repository."""
    here = Path(os.path.abspath(cwd))
    chain: list[Path] = []
    for folder in (here, *here.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            return chain
    return [here]


def agent_folders(spec: AgentSpec, home: Path, cwd: Path) -> list[tuple[Path, str]]:
    """The agent's folders in precedence order (highest first), each with its scope."""
    project = [(folder / rel, "project") for folder in project_chain(cwd) for rel in spec.project]
    user = [(home / rel, "user") for rel in spec.user]
    ordered = project + user if spec.project_first else user + project
    seen: set[Path] = set()
    out: list[tuple[Path, str]] = []
    for path, scope in ordered:
        key = Path(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.append((key, scope))
    return out


def _entries(folder: Path) -> list[Path]:
    """The skill folders directly under ``folder`` (those holding a SKILL.md), by name."""
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if not e.name.startswith(".") and e.is_dir())
    except OSError:
        return []
    return [folder / n for n in names if (folder / n / "SKILL.md").is_file()]


def agent_view(
    spec: AgentSpec, skills: Iterable[Skill], home: Path, cwd: Path, owners: dict[Path, str]
) -> AgentView:
    """What ``spec``'s agent sees (see the module docstring).

    Args:
        spec: The agent.
        skills: Every catalog skill (shadowed ones too).
        home: The home folder.
        cwd: The working folder (project folders are looked up from it).
        owners: Skill folder -> names of the agents that read it (for ``not_seen``).
    """
    by_dir = {Path(os.path.abspath(s.base_dir)): s for s in skills}
    view = AgentView(spec, agent_folders(spec, home, cwd))
    winners: dict[str, AgentSkill] = {}
    for folder, scope in view.folders:
        for entry in _entries(folder):
            known = by_dir.get(entry)
            item = AgentSkill(
                known.name if known else entry.name,
                folder,
                scope,
                entry,
                in_catalog=known is not None,
                description=known.description if known else "",
            )
            view.skills.append(item)
            first = winners.setdefault(item.name, item)
            if first is not item:
                item.status, item.reason = "shadowed", f"shadowed by {first.folder}"
            elif known is not None and not known.enabled:
                item.status, item.reason = "disabled", "disabled in the Skilldeck registry"
    _budget(view)
    _missing(view, skills, owners)
    return view


def _budget(view: AgentView) -> None:
    """Mark the entries the agent's listing budget truncates or cuts."""
    spec = view.spec
    entries = view.seen()
    cap = spec.description_cap
    for item in entries:
        if cap is not None and len(item.description) > cap:
            item.truncated = True
    full = [len(s.name) + min(len(s.description), cap or 10**9) + ENTRY_OVERHEAD for s in entries]
    view.listing_chars = sum(full)
    budget = spec.budget_chars
    if budget is None or view.listing_chars <= budget:
        return
    costs = full
    if spec.shortens_first:
        for item in entries:
            item.truncated = True
        costs = [len(s.name) + ENTRY_OVERHEAD for s in entries]
    used = 0
    for item, cost in zip(entries, costs, strict=True):
        used += cost
        if used > budget:
            item.status = "cut"
            item.reason = f"past the {budget}-character listing budget"


def _missing(view: AgentView, skills: Iterable[Skill], owners: dict[Path, str]) -> None:
    """The catalog's skills (those that count) the agent does not read, and why."""
    names = {s.name for s in view.skills}
    for skill in skills:
        if skill.name in names or skill.shadowed or not skill.enabled:
            continue
        folder = Path(os.path.abspath(skill.base_dir)).parent
        others = owners.get(folder)
        where = f"in {folder}" + (f" ({others})" if others else "")
        view.missing.append(
            {"name": skill.name, "folder": str(folder), "reason": f"{where}: not read"}
        )


def seen_paths(view: AgentView) -> frozenset[Path]:
    """The SKILL.md files the agent lists (absolute), to filter a list of skills by."""
    return frozenset(Path(os.path.abspath(s.entry / "SKILL.md")) for s in view.seen())


def agent_views(skills: Iterable[Skill], home: Path, cwd: Path) -> list[AgentView]:
    """Every agent's view of the catalog ``skills``."""
    catalog = list(skills)
    owners: dict[Path, list[str]] = {}
    for spec in AGENTS:
        for folder, _ in agent_folders(spec, home, cwd):
            owners.setdefault(folder, []).append(spec.name)
    named = {folder: ", ".join(agents) for folder, agents in owners.items()}
    return [agent_view(spec, catalog, home, cwd, named) for spec in AGENTS]
