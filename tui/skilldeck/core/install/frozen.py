"""Locks that travel: ``install --frozen`` puts exactly what a lock says in place, and
``verify`` compares what is installed with the lock's digests.

Both read ``skills-lock.toml`` (:mod:`.lock`) or ``skills-lock.json``
(:mod:`.skills_json`). A frozen install never writes a lockfile: it fetches each missing
skill at its locked commit (or ref), checks the fetched folder against the lock's digest
and reviews it; any drift stops it before anything is placed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.config import cache_dir
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.apply import place_folder
from skilldeck.core.install.git import Fetched, fetch_source
from skilldeck.core.install.lock import (
    LOCK_NAME,
    LockEntry,
    Lockfile,
    read_lock,
    tree_digests,
    tree_hash,
)
from skilldeck.core.install.reasons import ReasonCode
from skilldeck.core.install.review import find_skill_folders, review_skill
from skilldeck.core.install.skills_json import (
    JSON_LOCK_NAME,
    folder_hash,
    installer_skips,
    read_json_lock,
)
from skilldeck.core.install.staging import stage
from skilldeck.core.install.wellknown import Index, fetch_listed

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolRegistry


@dataclass(slots=True)
class Drift:
    """One way an installed or fetched skill differs from its lock.

    Attributes:
        name: The skill.
        problem: One sentence for a person.
        files: The files that differ, as ``(path, change)`` with change ``modified``,
            ``added`` or ``missing`` (empty when the lock holds no per-file digests).
        code: Why, when the skill could not be fetched: ``unsafe_source`` (a local source
            refused before it was read) or ``fetch_problem``; None for a difference.
    """

    name: str
    problem: str
    files: list[tuple[str, str]] = field(default_factory=list)
    code: ReasonCode | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "name": self.name,
            "problem": self.problem,
            "files": [{"path": p, "change": c} for p, c in self.files],
        }
        if self.code is not None:
            out["code"] = self.code
        return out


def find_lock(to: str | None, lock_file: Path | None = None, cwd: Path | None = None) -> Lockfile:
    """The lock to follow, of the skills folder ``to`` names when given
    (:func:`~skilldeck.core.install.ops.target_root`).

    ``lock_file`` when given (``.json`` or ``skills-lock.toml``); else the project's
    ``skills-lock.toml``, then ``./skills-lock.json``, then the ``skills-lock.toml`` of
    ``--to``; for ``--to FOLDER`` without its own ``skills-lock.toml``, the
    ``skills-lock.json`` of the project holding FOLDER (``.claude/skills`` → ``.``) or of
    this folder. A ``skills-lock.json`` describes the folder the ``skills`` installer put
    its skills in (:func:`~skilldeck.core.install.skills_json.json_root`) unless ``to``
    names one.

    Raises:
        SkilldeckError: NOT_FOUND when there is none; INVALID_PARAM when it is unreadable.
    """
    from skilldeck.core.install.ops import target_root

    here = cwd or Path.cwd()
    folder = target_root(to, here) if to not in (None, "project") else None
    if lock_file is not None:
        return _named_lock(lock_file, folder)
    beside = here / JSON_LOCK_NAME
    project = (here / ".agents" / LOCK_NAME).is_file()
    if to is None and not project and beside.is_file():
        return read_json_lock(beside)
    lock = read_lock(target_root(to, here))
    if lock.path.is_file():
        return lock
    if to != "user":
        owner = folder.parent.parent / JSON_LOCK_NAME if folder is not None else beside
        for candidate in dict.fromkeys((owner, beside)):
            if candidate.is_file():
                return read_json_lock(candidate, folder)
    raise SkilldeckError(
        ErrorCode.NOT_FOUND, f"no lockfile: neither {lock.path} nor {beside} exists"
    )


def _named_lock(lock_file: Path, folder: Path | None) -> Lockfile:
    """The lock in ``lock_file``, of ``folder`` when given (else the folder it describes)."""
    if lock_file.suffix == ".json":
        return read_json_lock(lock_file, folder)
    if lock_file.name != LOCK_NAME:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{lock_file}: name a {LOCK_NAME} or a .json lock"
        )
    if not lock_file.is_file():
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{lock_file}: no such lockfile")
    lock = read_lock(lock_file.parent / "skills")
    lock.root = folder or lock.root
    return lock


def verify(lock: Lockfile) -> list[Drift]:
    """Compare every installed skill of ``lock`` with its digests (no network)."""
    drifts: list[Drift] = []
    for name in sorted(lock.entries):
        drift = installed_drift(lock, lock.entries[name])
        if drift is not None:
            drifts.append(drift)
    return drifts


def installed_drift(lock: Lockfile, entry: LockEntry) -> Drift | None:
    """How the installed copy of ``entry`` differs from the lock (None when it does not)."""
    folder = lock.root / entry.name
    if folder.is_symlink() or not folder.is_dir():
        return Drift(entry.name, f"{folder} is missing")
    try:
        if entry.computed_hash:
            if folder_hash(folder) == entry.computed_hash:
                return None
            return Drift(
                entry.name,
                f"{folder} differs from the computedHash in {lock.path.name} "
                "(that lock has no per-file digests: compare with its source to see which file)",
            )
        if tree_hash(folder) == entry.sha256:
            return None
        files = _file_changes(entry.files, tree_digests(folder)) if entry.files else []
    except OSError as exc:
        return Drift(entry.name, f"{folder} cannot be read: {exc}")
    where = ", ".join(f"{p} ({c})" for p, c in files) or "files differ (no per-file digests)"
    return Drift(entry.name, f"{folder}: {where}", files)


def _file_changes(locked: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    changes = [(p, "missing") for p in locked if p not in now]
    changes += [(p, "added") for p in now if p not in locked]
    changes += [(p, "modified") for p in locked if p in now and now[p] != locked[p]]
    return sorted(changes)


@dataclass(slots=True)
class FrozenPlan:
    """What a frozen install would do.

    Attributes:
        lock: The lock followed.
        ready: Skills to place, with the fetched folder (checked and reviewed).
        present: Skills already installed as the lock says.
        drift: Every difference found; a frozen install places nothing when any.
    """

    lock: Lockfile
    ready: list[tuple[LockEntry, Path]] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)


@contextmanager
def frozen_plan(
    lock: Lockfile,
    *,
    force: bool = False,
    profile: str = "default",
    registry: ToolRegistry | None = None,
    progress: Callable[[str], None] | None = None,
) -> Iterator[FrozenPlan]:
    """Fetch and check every missing skill of ``lock``; the fetched copies live until exit.
    ``force`` lets error findings through, never a refusal or a digest mismatch.
    ``progress`` is told which skill is being checked."""
    plan = FrozenPlan(lock)
    with stage(cache_dir() / "staging", "frozen") as tmp:
        fetches: dict[tuple[str, str], Fetched | SkilldeckError] = {}
        indexes: dict[str, Index] = {}
        for done, name in enumerate(sorted(lock.entries)):
            if progress is not None:
                progress(f"checking {name} ({done + 1} of {len(lock.entries)})")
            entry = lock.entries[name]
            target = lock.root / name
            if target.exists() or target.is_symlink():
                drift = installed_drift(lock, entry)
                if drift is None:
                    plan.present.append(name)
                else:
                    plan.drift.append(drift)
                continue
            if entry.indexed:
                fetch = _fetch_listed(entry, indexes, tmp / f"index-{name}")
            else:
                fetch = _fetch(entry, fetches, tmp)
            if isinstance(fetch, SkilldeckError):
                unsafe = fetch.details.get("reason") == "unsafe_source"
                code: ReasonCode = "unsafe_source" if unsafe else "fetch_problem"
                text = f"cannot fetch {entry.source}: {fetch.message}"
                plan.drift.append(Drift(name, text, code=code))
                continue
            _judge(plan, entry, fetch, force, profile, registry)
        yield plan


def _fetch(
    entry: LockEntry, cache: dict[tuple[str, str], Fetched | SkilldeckError], tmp: Path
) -> Fetched | SkilldeckError:
    """``entry``'s source at its commit (or ref), fetched once per source and commit."""
    key = (entry.source, entry.commit or entry.ref)
    if key not in cache:
        try:
            cache[key] = fetch_source(entry.source, key[1] or None, tmp / str(len(cache)))
        except SkilldeckError as exc:
            cache[key] = exc
    return cache[key]


def _fetch_listed(
    entry: LockEntry, indexes: dict[str, Index], dest: Path
) -> Fetched | SkilldeckError:
    """A skill from a well-known index: its artifact as the index lists it now, verified
    against the lock's digest (a new digest in the index is drift, never installed)."""
    try:
        listed = fetch_listed(entry.source, entry.name, dest, indexes, digest=entry.digest)
    except SkilldeckError as exc:
        return exc
    if listed.folder is None:
        return SkilldeckError(ErrorCode.NOT_FOUND, listed.problem)
    return Fetched(listed.folder, None)


def _judge(
    plan: FrozenPlan,
    entry: LockEntry,
    fetch: Fetched,
    force: bool,
    profile: str,
    registry: ToolRegistry | None,
) -> None:
    """Check one fetched skill against its lock entry; ready it or name the drift."""
    folder = _skill_folder(fetch.path, entry)
    at = (fetch.commit or "local folder")[:12]
    if folder is None:
        plan.drift.append(Drift(entry.name, f"{entry.source} @ {at} has no skill {entry.name}"))
        return
    if entry.commit and fetch.commit != entry.commit:
        plan.drift.append(Drift(entry.name, f"fetched {at}, the lock pins {entry.commit[:12]}"))
        return
    folder = _as_locked(folder, entry)
    digest = folder_hash(folder) if entry.computed_hash else tree_hash(folder)
    if digest != (entry.computed_hash or entry.sha256):
        files = _file_changes(entry.files, tree_digests(folder)) if entry.files else []
        named = ", ".join(f"{p} ({c})" for p, c in files)
        plan.drift.append(
            Drift(
                entry.name,
                f"{entry.source} @ {at}: files differ from the lock's digest"
                + (f": {named}" if named else ""),
                files,
            )
        )
        return
    review = review_skill(folder, profile=profile, registry=registry)
    reasons = list(review.refused)
    if review.name != entry.name:
        reasons.append(f"its SKILL.md names it {review.name!r}")
    if review.errors and not force:
        reasons.append(f"{len(review.errors)} error finding(s)")
    if reasons:
        plan.drift.append(Drift(entry.name, "refused: " + "; ".join(reasons)))
        return
    plan.ready.append((entry, folder))


def _as_locked(folder: Path, entry: LockEntry) -> Path:
    """``folder``, or for a ``skills-lock.json`` entry whose digest is of the copy the
    ``skills`` installer makes (without ``README.md`` and the like), that copy."""
    if not entry.computed_hash or folder_hash(folder) == entry.computed_hash:
        return folder
    if folder_hash(folder, as_installed=True) != entry.computed_hash:
        return folder
    copy = folder.parent / f".{folder.name}.as-installed"
    if not copy.exists():
        ignore = lambda _dir, names: [n for n in names if installer_skips(n)]  # noqa: E731
        shutil.copytree(folder, copy, symlinks=True, ignore=ignore)
    return copy


def _skill_folder(tree: Path, entry: LockEntry) -> Path | None:
    """The entry's folder in the fetched tree: its subpath, or (a ``skills-lock.json``
    entry without ``skillPath``) the one skill folder named like it."""
    if entry.subpath:
        folder = tree / entry.subpath
        return folder if (folder / "SKILL.md").is_file() and not folder.is_symlink() else None
    named = [f for f in find_skill_folders(tree) if f.name == entry.name]
    return named[0] if len(named) == 1 else None


def apply_frozen(plan: FrozenPlan) -> list[Path]:
    """Place every ready skill (call only when ``plan.drift`` is empty for a frozen
    install); no lockfile is written."""
    return [place_folder(plan.lock.root, entry.name, folder) for entry, folder in plan.ready]
