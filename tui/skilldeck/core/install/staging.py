"""Where installs keep their work in progress, and how a killed one is cleaned up.

Every stage is a folder ``LABEL-PID-RANDOM`` inside one known folder: ``.skilldeck-staging``
beside a skills root (same file system, so the final swap is a rename) or
``staging`` in Skilldeck's cache (fetched repositories). The known folder holds a
``.gitignore`` of ``*``, so a stage never shows in ``git status``. Each new stage first
removes the stages of processes that are gone (a ``kill -9`` during an install or update
leaves one behind; the next run cleans it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KNOWN = ".skilldeck-staging"
"""The folder beside a skills root that holds its stages."""


@contextmanager
def stage(base: Path, label: str) -> Iterator[Path]:
    """A fresh stage folder inside ``base`` (created, ignored by git, swept of dead
    processes' stages first), removed on exit."""
    base.mkdir(parents=True, exist_ok=True)
    ignore = base / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):
            ignore.write_text("*\n", encoding="utf-8")
    sweep(base)
    folder = Path(tempfile.mkdtemp(prefix=f"{label}-{os.getpid()}-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep(base: Path) -> list[Path]:
    """Remove the stages in ``base`` whose process is gone; returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        pid = _owner(entry.name)
        if pid is None or _alive(pid) or not entry.is_dir() or entry.is_symlink():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _owner(name: str) -> int | None:
    parts = name.split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
