"""The resource files of a skill folder: everything but its SKILL.md, bounded."""

from __future__ import annotations

import os

MAX_RESOURCES = 200
"""Bound on the number of resource files listed per skill."""

MAX_RESOURCE_DEPTH = 6
"""Resource folders deeper than this are not listed."""


def list_resources(
    base_dir: str,
    limit: int = MAX_RESOURCES,
    max_depth: int = MAX_RESOURCE_DEPTH,
    stamps: list[tuple[str, int]] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Files under ``base_dir`` other than the SKILL.md, relative POSIX paths, sorted.

    Hidden entries, folders starting with ``_`` and symlinked folders leading outside the
    skill are skipped; at most ``limit`` files and ``max_depth`` levels are listed.

    Args:
        base_dir: The skill folder.
        limit: Bound on the number of files.
        max_depth: Bound on folder depth.
        stamps: When given, receives ``(folder relative to base_dir, mtime_ns)`` for every
            folder the listing read, ``""`` being ``base_dir`` (the store re-checks them).

    Returns:
        ``(paths, truncated)``.
    """
    walk = _Walk(base_dir, limit, max_depth, stamps)
    walk.folder(base_dir, "", 0)
    walk.out.sort()
    return tuple(walk.out), walk.truncated


class _Walk:
    """State of one resource listing."""

    def __init__(
        self, base_dir: str, limit: int, max_depth: int, stamps: list[tuple[str, int]] | None
    ) -> None:
        self.base_dir = base_dir
        self.limit = limit
        self.max_depth = max_depth
        self.stamps = stamps
        self.out: list[str] = []
        self.truncated = False
        self.base_real = ""
        self.visited: set[str] = set()

    def folder(self, folder: str, prefix: str, depth: int) -> None:
        """List ``folder`` (``prefix`` relative to the skill) and its subfolders."""
        try:
            if self.stamps is not None:
                self.stamps.append((prefix.rstrip("/"), os.stat(folder).st_mtime_ns))
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in items:
            name = entry.name
            if name[0] == "." or (depth == 0 and name.lower() == "skill.md"):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not is_dir:
                if len(self.out) >= self.limit:
                    self.truncated = True
                    return
                self.out.append(prefix + name)
            elif self._enter(entry, depth):
                self.folder(entry.path, prefix + name + "/", depth + 1)
                if self.truncated:
                    return

    def _enter(self, entry: os.DirEntry[str], depth: int) -> bool:
        """Whether to list the subfolder ``entry`` (symlinks only inside the skill, once)."""
        if entry.name[0] == "_" or depth + 1 >= self.max_depth:
            return False
        if not entry.is_symlink():
            return True
        if not self.base_real:
            self.base_real = os.path.realpath(self.base_dir)
        real = os.path.realpath(entry.path)
        if real in self.visited or not real.startswith(self.base_real + os.sep):
            return False
        self.visited.add(real)
        return True
