"""Place installed skills in the folders agents read, never over a skill someone wrote.

A copy made here carries a small marker file (``.skilldeck-sync``, JSON with the tree hash
it was made with); a symlink made here points into the skills root. Only such entries are
replaced on the next sync, and a marked copy that was edited since is left alone unless
forced. Anything else already in the agent's folder is the user's and is skipped.

Each sync also records what it placed in which folder (``.skilldeck-synced.json`` beside
the lockfile). A later full sync prunes a recorded entry whose skill is no longer installed
(after ``skilldeck remove``), but only while it is still exactly what sync placed: a copy
edited since, or anything the user put there, is kept and said so.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.apply import copy_skill, exclusive, staging_area
from skilldeck.core.install.lock import MARKER, Lockfile, tree_hash

AGENT_DIRS = {
    "claude": ".claude/skills",
    "codex": ".codex/skills",
    "gemini": ".gemini/skills",
    "opencode": ".opencode/skills",
}
"""Skills folder of each agent, relative to the home folder (``--to user``) or the project."""
MODES = ("copy", "symlink")
RECORD = ".skilldeck-synced.json"
"""File beside the lockfile naming what sync placed, per destination folder."""


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What happened to one skill in one agent's folder.

    Attributes:
        name: The skill.
        dest: Where it was placed (or would have been).
        action: ``placed``, ``updated``, ``unchanged``, ``skipped`` (something else is in
            the way), ``pruned`` (removed: the skill is no longer installed) or ``kept``
            (not pruned: edited since, or no longer what sync placed).
        reason: Why it was skipped or kept ('' otherwise).
    """

    name: str
    dest: Path
    action: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "dest": str(self.dest),
            "action": self.action,
            "reason": self.reason,
        }


def agent_dir(agent: str, base: Path) -> Path:
    """The skills folder of ``agent`` under ``base`` (the home or the project folder)."""
    rel = AGENT_DIRS.get(agent)
    if rel is None:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown agent {agent!r} (choose from {', '.join(sorted(AGENT_DIRS))})",
        )
    return base / rel


def sync_to(
    lock: Lockfile,
    dest_root: Path,
    *,
    mode: str = "copy",
    force: bool = False,
    names: list[str] | None = None,
) -> list[SyncResult]:
    """Place each locked, present skill under ``dest_root`` by ``mode``; without ``names``
    also prune what an earlier sync placed there for skills no longer installed."""
    if mode not in MODES:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"--mode must be one of {', '.join(MODES)}")
    with exclusive(lock):  # two syncs of one skills root take turns on its record
        record = read_record(lock)
        key = str(Path(os.path.abspath(dest_root)))
        placed = record.setdefault(key, {})
        results = [
            _sync_one(lock, name, dest_root, mode, force) for name in sorted(names or lock.entries)
        ]
        placed.update({r.name: mode for r in results if r.action != "skipped"})
        if names is None:
            results += _prune(lock, dest_root, placed)
        if not placed:
            record.pop(key)
        write_record(lock, record)
    return results


def _sync_one(lock: Lockfile, name: str, dest_root: Path, mode: str, force: bool) -> SyncResult:
    source = lock.root / name
    if name not in lock.entries or not source.is_dir():
        return SyncResult(name, dest_root / name, "skipped", "not installed (run skilldeck check)")
    return _place(source, dest_root / name, mode, force)


def _prune(lock: Lockfile, dest_root: Path, placed: dict[str, str]) -> list[SyncResult]:
    """Remove the recorded entries of ``dest_root`` whose skill left the lockfile (edited
    copies and anything no longer what sync placed are kept)."""
    results: list[SyncResult] = []
    for name in sorted(placed):
        if name in lock.entries:  # still locked (even if its folder is missing): kept
            continue
        dest = dest_root / name
        if not (dest.exists() or dest.is_symlink()):
            del placed[name]
            continue
        why = _ours(lock.root / name, dest, False)
        if why is None:
            _delete(dest)
            del placed[name]
            results.append(SyncResult(name, dest, "pruned"))
            continue
        if dest.is_symlink() or not (dest / MARKER).is_file():
            del placed[name]  # no longer what sync placed: the user's now, never again ours
            why = f"{dest} is no longer what sync placed there; left alone"
        else:
            why = f"{dest} was edited since it was synced; delete it by hand if unwanted"
        results.append(SyncResult(name, dest, "kept", f"no longer installed, but {why}"))
    return results


def _delete(dest: Path) -> None:
    if dest.is_symlink():
        dest.unlink()
    else:
        shutil.rmtree(dest)


def record_path(lock: Lockfile) -> Path:
    """The sync record of ``lock`` (beside its lockfile)."""
    return lock.path.parent / RECORD


def read_record(lock: Lockfile) -> dict[str, dict[str, str]]:
    """What sync placed: destination folder -> skill name -> mode (empty when unreadable)."""
    try:
        data = json.loads(record_path(lock).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    placed = data.get("placed") if isinstance(data, dict) else None
    if not isinstance(placed, dict):
        return {}
    return {
        str(dest): {str(n): str(m) for n, m in names.items() if _is_name(str(n))}
        for dest, names in placed.items()
        if isinstance(names, dict)
    }


def _is_name(name: str) -> bool:
    """A recorded name is only used when it is a skill name (never a path)."""
    from skilldeck.core.validate import name_problems

    return not name_problems(name)


def write_record(lock: Lockfile, record: dict[str, dict[str, str]]) -> None:
    """Write the sync record atomically (removed when empty)."""
    path = record_path(lock)
    if not record:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".skilldeck-synced-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "placed": record}, handle, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _ours(source: Path, dest: Path, force: bool) -> str | None:
    """None when ``dest`` may be replaced; otherwise why not."""
    if dest.is_symlink():
        if Path(os.path.realpath(dest)) == source.resolve() or force:
            return None
        return f"{dest} is a symlink to {os.readlink(dest)}, not made by skilldeck"
    marker = dest / MARKER
    if not marker.is_file():
        return f"{dest} was not placed by skilldeck (a skill you wrote?); left alone"
    try:
        made = json.loads(marker.read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        made = None
    if made != tree_hash(dest) and not force:
        return f"{dest} was edited since it was synced; use --force to replace it"
    return None


def _place(source: Path, dest: Path, mode: str, force: bool) -> SyncResult:
    name = source.name
    exists = dest.exists() or dest.is_symlink()
    if exists:
        why = _ours(source, dest, force)
        if why is not None:
            return SyncResult(name, dest, "skipped", why)
        if _same(source, dest, mode):
            return SyncResult(name, dest, "unchanged")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with staging_area(dest.parent) as stage:
        new = stage / "new"
        if mode == "symlink":
            new.symlink_to(source.resolve(), target_is_directory=True)
        else:
            copy_skill(source, new)
            (new / MARKER).write_text(json.dumps({"sha256": tree_hash(new)}), encoding="utf-8")
        if exists:
            dest.rename(stage / "old")
        new.rename(dest)
    return SyncResult(name, dest, "updated" if exists else "placed")


def _same(source: Path, dest: Path, mode: str) -> bool:
    if mode == "symlink":
        return dest.is_symlink() and Path(os.path.realpath(dest)) == source.resolve()
    return not dest.is_symlink() and tree_hash(dest) == tree_hash(source)
