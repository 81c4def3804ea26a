"""The install operations every face shares: add, check, update, remove.

Each operation fetches with :mod:`~skilldeck.core.install.git` (or, for a skill from a
well-known index, :mod:`~skilldeck.core.install.wellknown`: artifact verified by digest and
laid out as a folder) into a temporary folder, judges with
:mod:`~skilldeck.core.install.review` and writes with :mod:`~skilldeck.core.install.apply`;
nothing here prompts or prints.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from skilldeck.core.config import cache_dir
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.apply import exclusive, install_folder
from skilldeck.core.install.git import (
    Fetched,
    clone_history,
    fetch_source,
    remote_commit,
    tree_id,
)
from skilldeck.core.install.lock import LockEntry, Lockfile, read_lock, tree_hash, write_lock
from skilldeck.core.install.reasons import Reason
from skilldeck.core.install.review import (
    FileChange,
    Finding,
    SkillReview,
    diff_trees,
    find_skill_folders,
    finding_delta,
    review_skill,
)
from skilldeck.core.install.skills_json import folder_hash
from skilldeck.core.install.staging import stage
from skilldeck.core.install.wellknown import (
    Index,
    IndexEntry,
    cached_index,
    fetch_listed,
    skill_version,
    stage_entry,
)

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolRegistry

InstallState = Literal["ok", "modified", "missing", "outdated"]
"""An installed skill's state: as locked, edited locally, gone, or behind its source."""
LocalState = Literal["ok", "modified", "missing"]
"""What :func:`state_of` can tell without the network."""
STATES: tuple[InstallState, ...] = get_args(InstallState)


def target_root(to: str | None, cwd: Path | None = None) -> Path:
    """The skills folder for ``--to``: ``user`` (``~/.agents/skills``), ``project``
    (``./.agents/skills``) or a folder. Default: the project folder when it has a lockfile
    (``./.agents/skills-lock.toml``), else the user folder."""
    here = cwd or Path.cwd()
    project = here / ".agents" / "skills"
    if to is None:
        to = "project" if (here / ".agents" / "skills-lock.toml").is_file() else "user"
    if to == "user":
        return Path.home() / ".agents" / "skills"
    if to == "project":
        return project
    return (here / Path(to).expanduser()).resolve()


@contextmanager
def fetched(source: str, ref: str | None) -> Iterator[Fetched]:
    """``source`` at ``ref`` in a stage of Skilldeck's cache, removed on exit."""
    with stage(cache_dir() / "staging", "fetch") as tmp:
        yield fetch_source(source, ref or None, tmp / "src")


@contextmanager
def fetched_index(entries: list[IndexEntry]) -> Iterator[tuple[Fetched, dict[str, str]]]:
    """Each well-known index entry's artifact fetched, verified against its digest and
    laid out as ``<stage>/<name>/SKILL.md…`` (a tree :func:`candidates` reads), with the
    problem of each entry that could not be (by name); removed on exit."""
    with stage(cache_dir() / "staging", "index") as tmp:
        problems: dict[str, str] = {}
        for entry in entries:
            try:
                stage_entry(entry, tmp / "src" / entry.name)
            except SkilldeckError as exc:
                problems[entry.name] = exc.message
                shutil.rmtree(tmp / "src" / entry.name, ignore_errors=True)
        (tmp / "src").mkdir(exist_ok=True)
        yield Fetched(tmp / "src", None), problems


@dataclass(slots=True)
class Candidate:
    """A skill found in a fetched source, judged and ready to install.

    Attributes:
        review: Its review.
        subpath: Its folder inside the source (POSIX, ``.`` for the top).
        existing: ``None`` when nothing is installed under its name, ``locked`` when it
            is an installed skill from the lockfile, ``unlocked`` for a folder the user
            made (never replaced without ``force``).
    """

    review: SkillReview
    subpath: str
    existing: str | None = None


def candidates(
    fetch: Fetched,
    lock: Lockfile,
    *,
    profile: str = "default",
    registry: ToolRegistry | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Candidate]:
    """Every skill in the fetched source, reviewed (``progress`` is told how many so far)."""
    found: list[Candidate] = []
    seen: dict[str, str] = {}
    folders = find_skill_folders(fetch.path)
    for done, folder in enumerate(folders):
        if progress is not None:
            progress(f"reviewing skills: {done} of {len(folders)}")
        review = review_skill(folder, profile=profile, registry=registry)
        rel = folder.relative_to(fetch.path).as_posix() or "."
        if review.name in seen:
            review.refused.append(f"{seen[review.name]} in this source has the same name")
        seen.setdefault(review.name, rel)
        target = lock.root / review.name
        existing = None
        if target.exists() or target.is_symlink():
            existing = "locked" if review.name in lock.entries else "unlocked"
        found.append(Candidate(review, rel, existing))
    return found


def blockers(
    candidate: Candidate, lock: Lockfile, *, force: bool, source: str = "", replace: bool = False
) -> list[Reason]:
    """Why ``candidate`` (from ``source``) must not be installed ([] when it may). A skill
    installed from another source is never replaced silently: only with ``replace``, after
    :func:`source_switch` has shown what changes."""
    review = candidate.review
    reasons = [Reason("refused", text) for text in review.refused]
    locked_from = lock.entries[review.name].source if review.name in lock.entries else None
    if source and locked_from not in (None, source) and not replace:
        text = f"it is installed from {locked_from}; adding it from {source} would replace it"
        reasons.append(Reason("other_source", text))
    if review.errors and not force:
        reasons.append(Reason("error_findings", f"{len(review.errors)} error finding(s)"))
    if candidate.existing == "unlocked" and not force:
        text = f"{lock.root / review.name} exists and was not installed by skilldeck"
        reasons.append(Reason("unlocked_folder", text))
    locked = lock.entries.get(review.name)
    edited = locked is not None and state_of(lock, locked) == "modified"
    if candidate.existing == "locked" and edited and not force:
        reasons.append(Reason("local_edits", "the installed copy has local edits"))
    return reasons


def install(
    lock: Lockfile,
    candidate: Candidate,
    source: str,
    ref: str,
    commit: str,
    *,
    digest: str = "",
    resolved_index: str = "",
) -> LockEntry:
    """Install ``candidate`` (already judged by :func:`blockers`) and lock it. A skill from
    a well-known index passes its artifact's ``digest`` and the ``resolved_index`` URL
    (``source`` is then the index URL asked for; its version is read from its SKILL.md)."""
    if resolved_index:
        entry = LockEntry(candidate.review.name, source, subpath=".", digest=digest)
        entry.resolved_index = resolved_index
        entry.version = skill_version(candidate.review.folder)
    else:
        entry = LockEntry(candidate.review.name, source, ref, commit, candidate.subpath)
    return install_folder(lock, entry, candidate.review.folder)


def state_of(lock: Lockfile, entry: LockEntry) -> LocalState:
    """``missing``, ``modified`` or ``ok`` for an installed skill (no network), from
    either lock format."""
    folder = lock.root / entry.name
    if not folder.is_dir() or folder.is_symlink():
        return "missing"
    try:
        if entry.computed_hash:  # a skills-lock.json entry: the installer's own digest
            return "ok" if folder_hash(folder) == entry.computed_hash else "modified"
        return "ok" if tree_hash(folder) == entry.sha256 else "modified"
    except OSError:
        return "modified"


@dataclass(slots=True)
class Status:
    """One locked skill's state.

    Attributes:
        entry: Its lock entry.
        state: One of :data:`STATES`.
        latest: The commit its ref points at now (only with ``remote``).
        detail: One sentence for a person.
    """

    entry: LockEntry
    state: InstallState
    latest: str | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            **self.entry.to_dict(),
            "state": self.state,
            "latest": self.latest,
            "detail": self.detail,
        }


def check(lock: Lockfile, *, remote: bool = False, names: list[str] | None = None) -> list[Status]:
    """The state of each locked skill (``names``: only those). With ``remote``, a skill whose
    ref moved is ``outdated`` only when its own folder changed; otherwise it stays ``ok``
    and its detail says ``unchanged``. A skill from a well-known index is ``outdated`` when
    the index lists another digest for it, or no longer lists it (the index is read once
    per source; no artifact is downloaded)."""
    out: list[Status] = []
    indexes: dict[str, Index] = {}
    for name in sorted(names or lock.entries):
        entry = lock.entries.get(name)
        if entry is None:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is not in {lock.path}")
        state = state_of(lock, entry)
        status = Status(entry, state, detail=_detail(state, lock, entry))
        if remote and entry.indexed:
            _judge_listed(status, indexes)
        elif remote and entry.commit:
            status.latest = remote_commit(entry.source, entry.ref or None)
        out.append(status)
    moved = [
        s
        for s in out
        if s.state == "ok" and not s.entry.indexed and s.latest and s.latest != s.entry.commit
    ]
    if moved:
        _judge_moved(moved)
    return out


def _judge_listed(status: Status, indexes: dict[str, Index]) -> None:
    """A skill from a well-known index: ``outdated`` when the index lists another digest
    for it (or no longer lists it); ``ok`` and ``unchanged`` when the digest is the same."""
    entry = status.entry
    listed = cached_index(entry.source, indexes).entries.get(entry.name)
    if listed is None:
        gone = f"no longer listed in {entry.source}"
        if status.state == "ok":
            status.state, status.detail = "outdated", gone
        else:
            status.detail = f"{status.detail}; {gone}"
        return
    status.latest = listed.digest
    if status.state != "ok":
        return
    if listed.digest == entry.digest:
        status.detail = f"unchanged (the index lists {_short(entry.digest)}, the locked digest)"
    else:
        status.state = "outdated"
        status.detail = f"the index lists {_short(listed.digest)} (locked {_short(entry.digest)})"


def _short(digest: str) -> str:
    """``sha256:`` and the first 12 hex digits."""
    return digest[:19]


def _judge_moved(moved: list[Status]) -> None:
    """Compare each moved skill's folder at its pinned and at the remote commit (one
    history clone per source); ``outdated`` when they differ or cannot be compared."""
    by_source: dict[str, list[Status]] = {}
    for status in moved:
        by_source.setdefault(status.entry.source, []).append(status)
    with stage(cache_dir() / "staging", "check") as tmp:
        for index, (source, group) in enumerate(sorted(by_source.items())):
            try:
                repo: Path | None = clone_history(source, tmp / str(index))
            except SkilldeckError:
                repo = None
            for status in group:
                _judge_one(status, repo)


def _judge_one(status: Status, repo: Path | None) -> None:
    entry, latest = status.entry, status.latest or ""
    where = f"{entry.ref or 'HEAD'} is now at {latest[:12]}"
    old = tree_id(repo, entry.commit, entry.subpath) if repo is not None else None
    if repo is not None and old is not None and old == tree_id(repo, latest, entry.subpath):
        status.detail = f"unchanged ({where}; this skill's files did not change)"
        return
    status.state = "outdated"
    status.detail = where


def _detail(state: InstallState, lock: Lockfile, entry: LockEntry) -> str:
    if state == "missing":
        return f"{lock.root / entry.name} is gone"
    if state == "modified":
        return "installed files differ from the lockfile"
    if entry.indexed:
        return f"{_short(entry.digest)}" + (f" (version {entry.version})" if entry.version else "")
    if entry.computed_hash:  # a skills-lock.json entry
        at = entry.commit[:12] or entry.ref or "default branch"
        return f"{at} (computedHash {entry.computed_hash[:12]})"
    return f"{entry.commit[:12] or 'local folder'}"


@dataclass(slots=True)
class UpdatePlan:
    """What updating one skill would change.

    Attributes:
        entry: The current lock entry.
        state: Its local state before the update (``ok``, ``modified``, ``missing``).
        commit: The commit the update would install.
        candidate: The new version, reviewed (None when the skill left the source).
        changes: Files that differ between the installed and the new version.
        added, removed: Findings the new version adds and removes.
        digest: For a skill from a well-known index: the digest the index lists now.
        resolved_index: For such a skill: the index URL that answered now.
        problem: Why the new version cannot be used ('' when it can: e.g. its digest
            did not match or its archive was refused).
    """

    entry: LockEntry
    state: LocalState
    commit: str
    candidate: Candidate | None
    changes: list[FileChange] = field(default_factory=list)
    added: list[Finding] = field(default_factory=list)
    removed: list[Finding] = field(default_factory=list)
    digest: str = ""
    resolved_index: str = ""
    problem: str = ""

    @property
    def has_changes(self) -> bool:
        """True when applying would change the installed files (or the skill left its
        source). A new commit that leaves this skill's files as they are is no change."""
        return bool(self.changes) or self.candidate is None

    @property
    def unchanged(self) -> bool:
        """True when the source moved on but this skill's files are the same."""
        if self.entry.indexed:
            return not self.has_changes and self.state == "ok" and self.digest != self.entry.digest
        return not self.has_changes and self.state == "ok" and self.commit != self.entry.commit

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        review = self.candidate.review.to_dict() if self.candidate else None
        return {
            "name": self.entry.name,
            "state": self.state,
            "from": self.entry.digest if self.entry.indexed else self.entry.commit,
            "to": self.digest if self.entry.indexed else self.commit,
            "changes": [c.to_dict() for c in self.changes],
            "added_findings": [f.to_dict() for f in self.added],
            "removed_findings": [f.to_dict() for f in self.removed],
            "review": review,
        }


@contextmanager
def prepared_updates(
    lock: Lockfile,
    names: list[str] | None = None,
    *,
    profile: str = "default",
    registry: ToolRegistry | None = None,
    progress: Callable[[str], None] | None = None,
) -> Iterator[list[UpdatePlan]]:
    """Fetch each source once and plan the updates; the fetched copies live until exit.
    ``progress`` is told which skill is being fetched and reviewed."""
    wanted = sorted(names or lock.entries)
    for name in wanted:
        if name not in lock.entries:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{name} is not in {lock.path}")
    with stage(cache_dir() / "staging", "update") as tmp:
        plans: list[UpdatePlan] = []
        cache: dict[tuple[str, str], Fetched] = {}
        indexes: dict[str, Index] = {}
        for done, name in enumerate(wanted):
            if progress is not None:
                progress(f"fetching and reviewing {name} ({done + 1} of {len(wanted)})")
            entry = lock.entries[name]
            if entry.indexed:
                where = Path(tmp) / f"index-{len(plans)}"
                plans.append(_plan_listed(lock, entry, where, indexes, profile, registry))
                continue
            key = (entry.source, entry.ref)
            if key not in cache:
                cache[key] = fetch_source(
                    entry.source, entry.ref or None, Path(tmp) / str(len(cache))
                )
            plans.append(_plan(lock, entry, cache[key], profile, registry))
        yield plans


def _plan(
    lock: Lockfile, entry: LockEntry, fetch: Fetched, profile: str, registry: ToolRegistry | None
) -> UpdatePlan:
    installed = lock.root / entry.name
    state = state_of(lock, entry)
    folder = fetch.path / entry.subpath
    commit = fetch.commit or ""
    if not (folder / "SKILL.md").is_file():
        return UpdatePlan(entry, state, commit, None)
    new = review_skill(folder, profile=profile, registry=registry)
    old = (
        review_skill(installed, profile=profile, registry=registry) if state != "missing" else None
    )
    plan = UpdatePlan(entry, state, commit, Candidate(new, entry.subpath, "locked"))
    plan.changes = diff_trees(installed if state != "missing" else None, folder)
    plan.added, plan.removed = finding_delta(old, new)
    return plan


def _plan_listed(
    lock: Lockfile,
    entry: LockEntry,
    where: Path,
    indexes: dict[str, Index],
    profile: str,
    registry: ToolRegistry | None,
) -> UpdatePlan:
    """The update plan of a skill from a well-known index: its artifact as listed now,
    verified and reviewed (or the problem that stops it)."""
    listed = fetch_listed(entry.source, entry.name, where, indexes)
    if listed.folder is None:
        plan = UpdatePlan(entry, state_of(lock, entry), "", None, problem=listed.problem)
        plan.digest = listed.entry.digest if listed.entry else ""
        return plan
    plan = _plan(lock, entry, Fetched(listed.folder, None), profile, registry)
    plan.digest = listed.entry.digest if listed.entry else ""
    plan.resolved_index = listed.resolved
    return plan


def source_switch(
    lock: Lockfile, candidate: Candidate, source: str, commit: str
) -> UpdatePlan | None:
    """What installing ``candidate`` from ``source`` over the same-named skill installed
    from another source would change, as an update plan (None when it is no switch)."""
    name = candidate.review.name
    entry = lock.entries.get(name)
    if entry is None or entry.source == source:
        return None
    installed = lock.root / name
    state = state_of(lock, entry)
    old = review_skill(installed) if state != "missing" else None
    plan = UpdatePlan(entry, state, commit, candidate)
    plan.changes = diff_trees(installed if state != "missing" else None, candidate.review.folder)
    plan.added, plan.removed = finding_delta(old, candidate.review)
    return plan


def update_blockers(plan: UpdatePlan, *, force: bool) -> list[Reason]:
    """Why ``plan`` must not be applied ([] when it may)."""
    if plan.problem:
        return [Reason("fetch_problem", plan.problem)]
    if plan.candidate is None:
        return [
            Reason("left_source", f"{plan.entry.subpath} has no SKILL.md in the source any more")
        ]
    if plan.candidate.review.name != plan.entry.name:
        text = f"the skill was renamed to {plan.candidate.review.name!r} upstream"
        return [Reason("renamed", text)]
    reasons = [Reason("refused", text) for text in plan.candidate.review.refused]
    if plan.candidate.review.errors and not force:
        reasons.append(Reason("error_findings", "the new version has error findings"))
    if plan.state == "modified" and not force:
        reasons.append(Reason("local_edits", "the installed copy has local edits"))
    return reasons


def apply_update(lock: Lockfile, plan: UpdatePlan) -> LockEntry:
    """Install the planned version (checked with :func:`update_blockers` first)."""
    if plan.candidate is None:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{plan.entry.name}: nothing to install")
    entry = LockEntry(
        plan.entry.name, plan.entry.source, plan.entry.ref, plan.commit, plan.entry.subpath
    )
    if plan.entry.indexed:
        entry.digest, entry.resolved_index = plan.digest, plan.resolved_index
        entry.version = skill_version(plan.candidate.review.folder)
    return install_folder(lock, entry, plan.candidate.review.folder)


def refresh_pin(lock: Lockfile, plan: UpdatePlan) -> LockEntry:
    """Record the digest an index lists now for a skill whose files it leaves as they are
    (:attr:`UpdatePlan.unchanged`): the installed files are not touched, only the lock."""
    if not (plan.entry.indexed and plan.unchanged):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{plan.entry.name}: nothing to refresh")
    with exclusive(lock):
        fresh = read_lock(lock.root)
        entry = fresh.entries.get(plan.entry.name)
        if entry is None or entry.sha256 != plan.entry.sha256:
            raise SkilldeckError(
                ErrorCode.EXECUTION_ERROR, f"{plan.entry.name} changed meanwhile; left alone"
            )
        entry.digest, entry.resolved_index = plan.digest, plan.resolved_index
        write_lock(fresh)
        lock.entries = fresh.entries
    return entry
