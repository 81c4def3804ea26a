"""Find skill folders under a root with ``os.scandir``.

Folders starting with ``.`` or ``_`` are skipped. A folder holding ``SKILL.md`` is a skill
(its subfolders are its resources, not more skills); a root that is itself a skill folder
counts. Symlinked folders are followed after the real ones, so a folder reachable directly
is found at its own path; a symlink pointing back above itself is reported, not followed,
and a folder reached twice (same real path) is kept once.

Catalog diagnostics:
    SD202 a folder cannot be read
    SD203 a symlink loops back to a folder above it (not followed)
    SD204 scanning stopped at the depth limit
"""

from __future__ import annotations

import operator
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.discovery.frontmatter import SKILL_FILE
from skilldeck.core.model import Diagnostic, Severity

MAX_SCAN_DEPTH = 16
"""Folders deeper than this below a root are not scanned."""
_NAME = operator.attrgetter("name")  # sorting 10k entries: 1.75 ms, 2.05 with a lambda


@dataclass(slots=True)
class Found:
    """A SKILL.md the scan found.

    Attributes:
        folder: The skill folder, as reached from the root (symlinks not resolved).
        md_path: Its SKILL.md (or ``skill.md`` variant) as reached.
        real_md: The real path of that file: the key of its store row.
        md_stat: The file's stat when the scan made one (a regular file), else None.
    """

    folder: str
    md_path: str
    real_md: str
    md_stat: os.stat_result | None = None


def single_file(path: str) -> Found:
    """A root that is a SKILL.md file rather than a folder."""
    return Found(os.path.dirname(path), path, os.path.realpath(path))


def scan_root(root: str, diags: list[Diagnostic]) -> list[Found]:
    """Every skill under the folder ``root`` (absolute), sorted by folder.

    Problems (unreadable folders, symlink loops, the depth limit) go to ``diags``; a root
    that does not exist gives nothing and no diagnostic (the caller reports it).
    """
    root_real = os.path.realpath(root)
    scan = _Scan(root_real, diags)
    pending: list[tuple[str, str, int]] = [(root, root_real, 0)]
    while pending or scan.links:
        if not pending:
            link, real, depth = scan.links.pop(0)
            if real in scan.visited:
                continue  # an alias of a folder already scanned
            scan.visited.add(real)
            pending.append((link, real, depth))
        folder, real, depth = pending.pop()
        subfolders = scan.folder(folder, real, depth)
        subfolders.reverse()
        pending.extend(subfolders)
    scan.found.sort(key=lambda f: f.folder)
    return scan.found


class _Scan:
    """State of one root's scan."""

    def __init__(self, root_real: str, diags: list[Diagnostic]) -> None:
        self.visited = {root_real}
        self.diags = diags
        self.found: list[Found] = []
        self.links: list[tuple[str, str, int]] = []

    def folder(self, folder: str, real: str, depth: int) -> list[tuple[str, str, int]]:
        """List ``folder``: note it if it is a skill, else return its subfolders to scan."""
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_NAME)
        except OSError as exc:
            if depth > 0 or not isinstance(exc, FileNotFoundError):
                message = f"cannot read folder: {exc.strerror or exc}"
                self.diags.append(Diagnostic("SD202", Severity.WARNING, message, Path(folder)))
            return []
        md = _skill_file(entries)
        if md is not None:
            real_md = os.path.realpath(md.path) if md.is_symlink() else real + os.sep + md.name
            self.found.append(Found(folder, md.path, real_md))
            return []
        out: list[tuple[str, str, int]] = []
        for entry in entries:
            child = self._child(entry, real, depth)
            if child is not None:
                out.append(child)
        return out

    def _child(self, entry: os.DirEntry[str], real: str, depth: int) -> tuple[str, str, int] | None:
        """A subfolder to scan (None: a skill noted at once, a file, or skipped)."""
        name = entry.name
        try:
            if name[0] in "._" or not entry.is_dir():
                return None
        except OSError:
            return None
        if depth + 1 > MAX_SCAN_DEPTH:
            message = f"not scanned: deeper than {MAX_SCAN_DEPTH} folders"
            self.diags.append(Diagnostic("SD204", Severity.WARNING, message, Path(entry.path)))
            return None
        if entry.is_symlink():
            self._link(entry, real, depth)
            return None
        child_real = real + os.sep + name
        if child_real in self.visited:
            return None
        self.visited.add(child_real)
        # most folders here are skills: one lstat tells, without listing the folder
        md_path = entry.path + os.sep + SKILL_FILE
        try:
            md_stat = os.lstat(md_path)
        except OSError:
            md_stat = None
        if md_stat is not None and stat.S_ISREG(md_stat.st_mode):
            self.found.append(Found(entry.path, md_path, child_real + os.sep + SKILL_FILE, md_stat))
            return None
        return (entry.path, child_real, depth + 1)

    def _link(self, entry: os.DirEntry[str], real: str, depth: int) -> None:
        """Queue a symlinked folder for after the real ones, unless it loops."""
        target = os.path.realpath(entry.path)
        if target == real or real.startswith(target.rstrip(os.sep) + os.sep):
            message = f"symlink loop: {entry.path} points back to {target}; not followed"
            self.diags.append(Diagnostic("SD203", Severity.WARNING, message, Path(entry.path)))
            return
        self.links.append((entry.path, target, depth + 1))


def _skill_file(entries: list[os.DirEntry[str]]) -> os.DirEntry[str] | None:
    """The ``SKILL.md`` among ``entries`` (or a differently cased one), if it is a file."""
    md = next((e for e in entries if e.name == SKILL_FILE), None)
    if md is None:
        md = next((e for e in entries if len(e.name) == 8 and e.name.lower() == "skill.md"), None)
    if md is None:
        return None
    try:
        return md if md.is_file() or md.is_symlink() else None
    except OSError:
        return None
