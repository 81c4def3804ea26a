"""The first rows of a catalog's listing, kept in the local store for the next launch.

A face that lists every skill by name (the terminal UI) shows its first rows only once
discovery has built the whole catalog: at 10,000 skills that is most of a launch (0.5-1 s
of rebuilding skills from their store rows). So, after a discovery, the paths of the
listing's first :data:`HEAD` rows (winners by name, then shadowed copies: the order
:func:`head` gives) are stored under the workspace key with the catalog's
:func:`~skilldeck.core.discovery.fingerprint`. The next discovery walks the roots first;
when the fingerprint is the same, nothing discovery reads has changed, and just those
skills are loaded (:func:`~skilldeck.core.discovery.load_found`: their store rows,
validated, registries applied, resource listings re-checked) with the shadowing facts
stored beside them: the same skills the finished catalog will list first.

Measured on the 10k synthetic catalog (2 shared cores): loading the 200 rows takes 6-14
ms after the 50-100 ms walk, where the full discovery takes 0.4-0.5 s of CPU; in the TUI
(``tests/benchmarks/bench_felt.py --sizes 10000 --runs 3``, load average ~2) launch →
first rows went from 1.07 s to 0.65 s (CPU 0.93 s to 0.59 s).

The table is ``listing_heads``, declared here (:data:`TABLES`); a row that does not decode,
names a file the walk did not find, or a store that cannot be read or written only means
no early rows.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.model import Catalog, Skill

if TYPE_CHECKING:
    from skilldeck.core.config import Settings
    from skilldeck.core.discovery import RootScan
    from skilldeck.core.discovery.scan import Found
    from skilldeck.core.store import LocalStore
    from skilldeck.core.workspace.oneshot import Scanned
    from skilldeck.core.workspace.workspace import Workspace

HEAD = 200
"""Rows kept: as many as the terminal UI's result list holds."""

KEY = "listing"
"""The purpose in the workspace's store key (:meth:`Workspace.key`)."""

TABLES = (
    # The first rows of a catalog's listing (JSON: SKILL.md path, shadowed_by,
    # shadow_reason) under the workspace key, with the catalog's fingerprint.
    """CREATE TABLE IF NOT EXISTS listing_heads (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        data TEXT NOT NULL
    )""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


def launch_discovery(
    workspace: Workspace,
    progress: Callable[[int], None] | None,
    early: Callable[[list[Skill], int], None],
) -> Catalog:
    """A face's first :meth:`Workspace.discover`, telling ``early`` the first rows of the
    listing and the number of skills before the catalog is built, when they were kept for
    this very catalog (:func:`load`; ``tool-validation: strict`` applied), else keeping
    them for the next launch. Returns the catalog."""
    from skilldeck.core.tools import gate_strict
    from skilldeck.core.workspace.oneshot import scan

    walked = scan(workspace)
    key = workspace.key(KEY)
    found = load(workspace.store, key, walked, workspace.settings, workspace.profile)
    if found is not None:
        gate_strict(found[0], workspace.registry, workspace.settings)
        early(*found)
    catalog = workspace.discover(progress, walked=walked)
    if found is None and walked.fingerprint is not None:
        rows = head(workspace.all_sorted())
        save(workspace.store, key, walked.fingerprint, rows, len(catalog.skills))
    return catalog


def head(by_name: list[Skill], limit: int = HEAD) -> list[Skill]:
    """The first ``limit`` rows of the listing of ``by_name`` (skills in name order):
    the winners, then the shadowed copies."""
    winners = [s for s in by_name if not s.shadowed]
    if len(winners) < limit:
        winners += [s for s in by_name if s.shadowed]
    return winners[:limit]


def save(store: LocalStore, key: str, fingerprint: str, rows: list[Skill], total: int) -> None:
    """Keep ``rows`` (a listing's first rows, of ``total``) for ``key``; a store that
    cannot be written is left alone."""
    data = {
        "total": total,
        "rows": [
            [str(s.path), None if s.shadowed_by is None else str(s.shadowed_by), s.shadow_reason]
            for s in rows
        ],
    }
    with contextlib.suppress(sqlite3.Error):
        store.ensure(TABLES)
        with store.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO listing_heads (key, fingerprint, data) VALUES (?, ?, ?)",
                (key, fingerprint, json.dumps(data, separators=(",", ":"))),
            )


def load(
    store: LocalStore, key: str, walked: Scanned, settings: Settings, profile: str
) -> tuple[list[Skill], int] | None:
    """The first rows kept for ``key`` and the number of skills listed, when they were
    kept for the catalog ``walked`` shows (same fingerprint) and every one of them was
    found by that walk; else None."""
    if walked.fingerprint is None:
        return None
    try:
        store.ensure(TABLES)
        found = (
            store.connect()
            .execute("SELECT fingerprint, data FROM listing_heads WHERE key = ?", (key,))
            .fetchone()
        )
    except sqlite3.Error:
        return None
    if found is None or found[0] != walked.fingerprint:
        return None
    rows = _rows(found[1])
    if rows is None:
        return None
    total, kept = rows
    skills = _skills(kept, walked, settings, profile, store)
    return (skills, total) if skills else None


def _rows(text: str) -> tuple[int, list[tuple[str, str | None, str]]] | None:
    """The stored ``(total, [(path, shadowed_by, shadow_reason)])``, or None when it does
    not decode."""
    try:
        data: Any = json.loads(text)
        total = data["total"]
        rows = [(str(p), None if by is None else str(by), str(why)) for p, by, why in data["rows"]]
    except (ValueError, TypeError, KeyError):
        return None
    return (total, rows) if type(total) is int else None


def _skills(
    kept: list[tuple[str, str | None, str]],
    walked: Scanned,
    settings: Settings,
    profile: str,
    store: LocalStore,
) -> list[Skill]:
    """The kept rows' skills, loaded as discovery loads them; [] when one is missing (or
    two rows are one file, reached from two roots)."""
    from skilldeck.core.discovery import load_found

    wanted = {path for path, _by, _why in kept}
    if len(wanted) != len(kept):
        return []
    where: dict[str, tuple[RootScan, Found]] = {}
    for group in sorted(walked.groups, key=lambda g: g.level):  # the winning root last
        for item in group.found:
            if item.md_path in wanted:
                where[item.md_path] = (group, item)
    if len(where) != len(wanted):
        return []
    picks = [where[path] for path, _by, _why in kept]
    skills = load_found(picks, settings, profile=profile, store=store)
    for skill, (_path, by, why) in zip(skills, kept, strict=True):
        skill.shadowed_by = None if by is None else Path(by)
        skill.shadow_reason = why
    return skills
