"""Place installed skills in the folders agents read, never over a skill someone wrote.

A copy made here carries a small marker file (``.skilldeck-sync``, JSON with the tree hash
it was made with); a symlink made here points into the skills root. Only such entries are
replaced on the next sync, and a marked copy that was edited since is left alone unless
forced. Anything else already in the agent's folder is the user's and is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.apply import copy_skill, staging_area
from skilldeck.core.install.lock import MARKER, Lockfile, tree_hash

AGENT_DIRS = {
    "claude": ".claude/skills",
    "codex": ".codex/skills",
    "gemini": ".gemini/skills",
    "opencode": ".opencode/skills",
}
"""Skills folder of each agent, relative to the home folder (``--to user``) or the project."""
MODES = ("copy", "symlink")


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What happened to one skill in one agent's folder.

    Attributes:
        name: The skill.
        dest: Where it was placed (or would have been).
        action: ``created``, ``updated``, ``unchanged`` or ``skipped``.
        reason: Why it was skipped ('' otherwise).
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
    """Place each locked, present skill under ``dest_root`` by ``mode``."""
    if mode not in MODES:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"--mode must be one of {', '.join(MODES)}")
    results: list[SyncResult] = []
    for name in sorted(names or lock.entries):
        source = lock.root / name
        dest = dest_root / name
        if name not in lock.entries or not source.is_dir():
            results.append(SyncResult(name, dest, "skipped", "not installed (run skilldeck check)"))
            continue
        results.append(_place(source, dest, mode, force))
    return results


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
    return SyncResult(name, dest, "updated" if exists else "created")


def _same(source: Path, dest: Path, mode: str) -> bool:
    if mode == "symlink":
        return dest.is_symlink() and Path(os.path.realpath(dest)) == source.resolve()
    return not dest.is_symlink() and tree_hash(dest) == tree_hash(source)


def unsync(lock: Lockfile, dest_root: Path, name: str) -> bool:
    """Remove ``name`` from ``dest_root`` when skilldeck placed it there and it is unedited."""
    dest = dest_root / name
    source = lock.root / name
    if not (dest.exists() or dest.is_symlink()) or _ours(source, dest, False) is not None:
        return False
    if dest.is_symlink():
        dest.unlink()
    else:
        shutil.rmtree(dest)
    return True
