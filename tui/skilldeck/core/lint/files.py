"""Lint rules over the files of a skill folder: symlinks leaving it, hard links, compiled
code, names that cannot be pinned (SL303-SL306)."""

from __future__ import annotations

from pathlib import Path

from skilldeck.core import skillfolder
from skilldeck.core.config import hardlinks_allowed
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.lint.findings import Findings
from skilldeck.core.skillfolder import shown

FILE_CODES = ("SL303", "SL304", "SL305", "SL306")
MAX_WALK_ENTRIES = 5000


def file_rules(out: Findings) -> None:
    """SL303-SL306 over the files :func:`~skilldeck.core.skillfolder.walk` lists: a
    symlink leaving the folder, a hard link, compiled code (by name), a name that cannot be
    pinned. Paths are shown escaped."""
    try:
        real_base = out.skill.base_dir.resolve()
        listing = skillfolder.walk(real_base, limit=MAX_WALK_ENTRIES)
    except (OSError, RuntimeError, SkilldeckError):
        return
    for rel in listing.unsafe:
        out.add("SL306", f"file name '{shown(rel)}' {skillfolder.name_problem(rel)}")
    for entry in listing.entries:
        what = skillfolder.compiled(entry.rel)
        if what is not None:
            out.add("SL305", f"'{shown(entry.rel)}' is {what}: nobody can review it")
        try:
            _entry_rules(out, real_base, entry)
        except (OSError, RuntimeError, ValueError):
            continue


def _entry_rules(out: Findings, real_base: Path, entry: skillfolder.Entry) -> None:
    path = real_base / entry.rel
    if entry.kind in (skillfolder.LINK, skillfolder.FOLDER_LINK):
        target = path.resolve()
        if not target.is_relative_to(real_base):
            out.add(
                "SL303",
                f"symlink '{shown(entry.rel)}' resolves outside the skill folder to {target}",
            )
    elif entry.kind == skillfolder.FILE and out.on("SL304"):
        links = path.lstat().st_nlink
        if links > 1 and not hardlinks_allowed():
            out.add("SL304", f"'{shown(entry.rel)}' has {links} hard links; it will not be read")
