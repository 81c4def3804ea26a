"""What the workspace stats to tell that skills changed on disk: the one change check of
every long-running face (the MCP server and the TUI poll it).

SKILL.md files take the (mtime, size) discovery recorded, so a baseline costs no stat of
them; the folders that gain new skills (roots, parents of skill folders), the registry
and tools files and the config file are stat'ed when the baseline is taken. Default
roots that appear or go after it are found by :func:`roots_changed`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.core.config import Settings, config_path
from skilldeck.core.model import Catalog, Source

if TYPE_CHECKING:
    from skilldeck.core.discovery import Root


def stat(path: str) -> tuple[int, int]:
    """(mtime_ns, size) of ``path``; (-1, -1) when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


def baseline(catalog: Catalog, files: list[Path]) -> dict[str, tuple[int, int]]:
    """What to watch for ``catalog`` (plus ``files``) and its state now."""
    stats: dict[str, tuple[int, int]] = {}
    folders: dict[str, None] = {}
    for root, _source in catalog.roots:
        folders[str(root)] = None
        folders[os.path.join(root, "registry.json")] = None
        folders[os.path.join(root, "skills", "registry.json")] = None
    for skill in catalog.skills:
        if skill.mtime_ns or skill.size:
            stats[str(skill.path)] = (skill.mtime_ns, skill.size)
        else:
            stats[str(skill.path)] = stat(str(skill.path))
        folders[str(skill.base_dir.parent)] = None
    for path in files:
        folders[str(path)] = None
    folders[config_file()] = None
    for folder in folders:
        stats.setdefault(folder, stat(folder))
    return stats


def roots_changed(current: list[Root], settings: Settings, cwd: Path | None) -> bool:
    """Whether the default skill roots differ from ``current`` (a folder such as
    ``~/.claude/skills`` created after the last discovery: the stat baseline covers only
    roots that existed); never for explicit roots. A few ``is_dir`` calls, about 0.2 ms."""
    from skilldeck.core.discovery import default_roots

    if any(root.source is Source.EXPLICIT for root in current):
        return False
    return [root.path for root in default_roots(settings, cwd)] != [r.path for r in current]


def changed(watch: dict[str, tuple[int, int]]) -> bool:
    """True when any watched path's stat differs from ``watch``."""
    return any(stat(p) != stamp for p, stamp in watch.items())


def config_file() -> str:
    """The config file the faces load their settings from (watched: settings are not
    reloaded live, :attr:`~skilldeck.core.workspace.Workspace.settings_stale` says so)."""
    return str(config_path())
