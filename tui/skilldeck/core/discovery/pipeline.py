"""Discovery's pipeline: find skills in every root, read them (through the local store)
and resolve name clashes.

- :mod:`~skilldeck.core.discovery.scan` walks a root with ``os.scandir``;
- :mod:`~skilldeck.core.discovery.frontmatter` reads a SKILL.md's frontmatter;
- :mod:`~skilldeck.core.discovery.catalog` ranks roots and marks shadowed skills;
- :mod:`~skilldeck.core.discovery.records` turns a skill into a store row and back.

:func:`scan_roots` is the walk :func:`discover` makes; :func:`fingerprint` digests what it
found (and the other files discovery reads) so that a saved search index can prove it was
made from the same catalog, and :func:`load_found` then loads just the skills a one-shot
search returns.

With a store, a skill whose SKILL.md has the stored ``(mtime_ns, size)`` is rebuilt from
its row (its resource listing too while its folders keep their mtimes); others are parsed
and their rows written in one transaction per call. Without one, everything is parsed.

Catalog diagnostics (besides the scan's SD202-SD204 and the registry's):
    SD201 an explicit root does not exist
    SD205 validation failed unexpectedly for a skill (a bug; the skill still shows)
    SD206 the local store could not be updated (disk full, busy, unusable)
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings, bundled_skills_dir, config_path, load_settings
from skilldeck.core.discovery import records
from skilldeck.core.discovery.catalog import RootSkills, rank
from skilldeck.core.discovery.frontmatter import parse_file
from skilldeck.core.discovery.resources import list_resources
from skilldeck.core.discovery.scan import Found, scan_root, single_file
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source
from skilldeck.core.registry import Registry, root_registry_paths
from skilldeck.core.store import LocalStore

__all__ = [
    "Root",
    "RootScan",
    "default_roots",
    "discover",
    "fingerprint",
    "load_found",
    "scan_roots",
]

PROGRESS_EVERY = 500
"""``progress`` is called after every this many skills, and once at the end."""

AGENTS_DEPTH = 6
"""How deep ``agents/**/skills`` folders are looked for under a project folder."""

_Validate = Callable[[Skill], list[Diagnostic]]


@dataclass(frozen=True, slots=True)
class Root:
    """A folder to scan for skills (or one SKILL.md file), and the source its skills get.

    Attributes:
        path: The folder (or SKILL.md file).
        source: The source its skills get.
        base: The folder its skill ids are relative to (the project for a project root,
            the home folder for a user root); None: ids use the root's own name.
    """

    path: Path
    source: Source
    base: Path | None = field(default=None, compare=False)


def default_roots(settings: Settings, cwd: Path | None = None) -> list[Root]:
    """The standard roots in ascending precedence; only folders that exist.

    ``bundled`` (shipped skills, or ``settings.skills_dir``) < ``user``
    (``~/.agents/skills``, ``~/.agent/skills``, ``~/.claude/skills``, ``~/.codex/skills``,
    then ``settings.extra_skill_dirs``, then ``settings.custom_skills_dir``) <
    ``project`` (from the repository root down to ``cwd``: ``.agents/skills``,
    ``.agent/skills``, ``.claude/skills``, ``skills``, ``agents/**/skills``; nearer
    folders come later and so win).
    """
    here = Path(os.path.abspath(cwd or Path.cwd()))
    roots: list[Root] = [Root(here / (settings.skills_dir or bundled_skills_dir()), Source.BUNDLED)]
    home = Path.home()
    for rel in (".agents/skills", ".agent/skills", ".claude/skills", ".codex/skills"):
        roots.append(Root(home / rel, Source.USER, home))
    for extra in settings.extra_skill_dirs:
        roots.append(Root(Path(extra).expanduser(), Source.USER, home))
    if settings.custom_skills_dir is not None:
        roots.append(Root(here / settings.custom_skills_dir, Source.USER))
    chain = _project_chain(here)
    for folder in chain:
        for rel in (".agents/skills", ".agent/skills", ".claude/skills", "skills"):
            roots.append(Root(folder / rel, Source.PROJECT, chain[0]))
        roots.extend(Root(p, Source.PROJECT, chain[0]) for p in _agents_skills(folder / "agents"))
    out: list[Root] = []
    seen: set[tuple[Path, Source]] = set()
    for root in roots:
        if (root.path, root.source) in seen or not root.path.is_dir():
            continue
        seen.add((root.path, root.source))
        out.append(root)
    return out


def _project_chain(here: Path) -> list[Path]:
    """The folders from the repository root (the nearest with ``.git``) down to ``here``;
    just ``here`` outside a repository."""
    chain = [here]
    for folder in (here, *here.parents):
        if folder is not here:
            chain.append(folder)
        if (folder / ".git").exists():
            return list(reversed(chain))
    return [here]


def _agents_skills(agents: Path) -> list[Path]:
    """Every ``skills`` folder under ``agents`` (at any depth up to :data:`AGENTS_DEPTH`),
    in path order; not looked into further."""
    out: list[Path] = []
    pending = [(str(agents), 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as it:
                names = sorted(e.name for e in it if e.name[0] not in "._" and e.is_dir())
        except OSError:
            continue
        for name in reversed(names):
            child = os.path.join(folder, name)
            if name == "skills" and depth > 0:
                out.append(Path(child))
            elif depth + 1 < AGENTS_DEPTH:
                pending.append((child, depth + 1))
    return sorted(out)


def discover(
    roots: list[Root],
    settings: Settings | None = None,
    *,
    profile: str = "default",
    store: LocalStore | None = None,
    progress: Callable[[int], None] | None = None,
    scanned: list[RootScan] | None = None,
    scan_diagnostics: Sequence[Diagnostic] = (),
) -> Catalog:
    """Scan ``roots``, read every skill, apply governance and resolve name clashes.

    A broken skill never stops the rest: its problems are in its diagnostics.

    Args:
        roots: Roots in ascending precedence (a higher source rank always wins; among
            roots of the same source a later one wins).
        settings: Settings (loaded when None).
        profile: Validation profile whose diagnostics go on each skill.
        store: The local store to reuse and update (None: parse everything, keep nothing).
        progress: Called with the number of skills read so far.
        scanned: The scan of ``roots`` when the caller made it (:func:`scan_roots`, for
            its :func:`fingerprint`), with the diagnostics it gave.
        scan_diagnostics: Those diagnostics.

    Returns:
        The catalog, skills ordered by source, then root, then path.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown profile.
    """
    settings = settings or load_settings()
    validate, key = _validator(profile)
    catalog = Catalog(roots=[(r.path, r.source) for r in roots])
    if scanned is None:
        scanned = scan_roots(roots, catalog.diagnostics)
    else:
        catalog.diagnostics.extend(scan_diagnostics)
    rows = {} if store is None else records.read_rows(store, _keys(scanned))
    loader = _Loader(rows, validate, key, progress)
    groups: list[RootSkills] = []
    for group in scanned:
        found, root_dir = group.found, group.folder
        skills = loader.load_root(root_dir, group.root.source, found, group.label)
        for registry_path in root_registry_paths(Path(root_dir)):
            registry = Registry.load(registry_path)
            catalog.diagnostics.extend(registry.diagnostics)
            registry.apply(skills)
        groups.append(RootSkills(group.level, [f.real_md for f in found], skills))
    catalog.skills = rank(groups)
    global_registry = Registry.load(settings.registry_file)
    catalog.diagnostics.extend(global_registry.diagnostics)
    global_registry.apply(catalog.skills)
    if store is not None:
        loader.finish(store, catalog)
    if progress is not None:
        progress(loader.count)
    return catalog


@dataclass(slots=True)
class RootScan:
    """What the scan found under one root.

    Attributes:
        index: The root's position in the roots given.
        root: The root.
        folder: Its folder (the parent folder for a root that is a SKILL.md file).
        found: The SKILL.md files found, in path order.
        label: The root's part of its skills' ids (:func:`label_roots`).
    """

    index: int
    root: Root
    folder: str
    found: list[Found]
    label: str = ""

    @property
    def level(self) -> tuple[int, int]:
        """``(source rank, root index)``: a higher level wins (see :mod:`.catalog`)."""
        return (self.root.source.rank, self.index)


def scan_roots(roots: list[Root], diags: list[Diagnostic]) -> list[RootScan]:
    """Walk every root (the one walk :func:`discover` makes): the roots that have skills,
    in the order given. Problems go to ``diags``."""
    out: list[RootScan] = []
    for index, root in enumerate(roots):
        target = os.path.abspath(root.path)
        if os.path.isfile(target):
            found, target = [single_file(target)], os.path.dirname(target)
        elif os.path.isdir(target):
            found = scan_root(target, diags)
        else:
            if root.source is Source.EXPLICIT:
                message = "root folder does not exist"
                diags.append(Diagnostic("SD201", Severity.WARNING, message, root.path))
            continue
        if found:
            out.append(RootScan(index, root, target, found))
    label_roots(out)
    return out


def label_roots(groups: list[RootScan]) -> None:
    """Give each root its part of its skills' ids: its folder relative to the root's
    ``base`` (``.claude/skills`` of a project), else the folder's name; roots of one source
    with the same label get more of their path until the labels differ, so two roots never
    share ids and the same roots give the same ids on every run."""
    parts: dict[int, tuple[str, ...]] = {}
    width: dict[int, int] = {}
    for group in groups:
        folder = Path(group.folder)
        base = group.root.base
        inside = base is not None and folder.is_relative_to(base) and folder != base
        parts[id(group)] = folder.parts
        width[id(group)] = len(folder.relative_to(base).parts) if inside and base else 1
    while True:
        seen: dict[tuple[str, str], list[RootScan]] = {}
        for group in groups:
            group.label = "/".join(parts[id(group)][-width[id(group)] :])
            seen.setdefault((group.root.source.value, group.label), []).append(group)
        clashes = [g for same in seen.values() if len(same) > 1 for g in same]
        longer = [g for g in clashes if width[id(g)] < len(parts[id(g)]) - 1]
        if not longer:
            return
        for group in longer:
            width[id(group)] += 1


def fingerprint(
    roots: list[Root], scanned: list[RootScan], settings: Settings, profile: str
) -> str | None:
    """A digest of everything :func:`discover` reads to make a catalog, from stats alone.

    It covers the roots and their sources, every found SKILL.md (as reached, its real
    path, ``mtime_ns`` and size, in scan order), the registry files (global and per root)
    and the configuration file (``mtime_ns``, size, or missing), the profile, and the code
    versions of the validator and of what turns a stored row into a skill. Equal digests
    mean discovery would give the same catalog (a skill's resource listing aside: it is
    checked when the skill itself is loaded). None when a file changed within
    :data:`records.RACY_NS`: it may change again unseen within one timestamp tick. Fills
    each :attr:`Found.md_stat` it had to stat.

    Measured on the 10k synthetic catalog: 6-8 ms (no extra stat per skill: the scan's
    own ``lstat`` is used), after a 38-51 ms walk.
    """
    _validate, key = _validator(profile)
    parts = [f"profile\0{profile}\0{key}"]
    newest = 0
    files: list[str | Path] = [settings.registry_file, config_path()]
    code = _code_files()  # versions only: running code does not change under a scan
    for root in roots:
        parts.append(f"root\0{os.path.abspath(root.path)}\0{root.source.value}")
    for group in scanned:
        parts.append(f"scan\0{group.index}\0{group.folder}")
        files.extend(root_registry_paths(Path(group.folder)))
        for item in group.found:
            try:
                st = item.md_stat = item.md_stat or os.stat(item.md_path)
            except OSError:
                parts.append(f"{item.md_path}\0{item.real_md}\0-")
                continue
            newest = max(newest, st.st_mtime_ns)
            parts.append(f"{item.md_path}\0{item.real_md}\0{st.st_mtime_ns}\0{st.st_size}")
    for path in [*files, *code]:
        try:
            st = os.stat(path)
        except OSError:
            parts.append(f"file\0{path}\0-")
            continue
        if path not in code:
            newest = max(newest, st.st_mtime_ns)
        parts.append(f"file\0{path}\0{st.st_mtime_ns}\0{st.st_size}")
    if newest >= time.time_ns() - records.RACY_NS:
        return None
    text = "\n".join(parts).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()


def _code_files() -> list[str]:
    """The modules whose code decides a skill made from a stored row (its fields, its
    precedence, its governance): edited, they change the catalog with every file alike."""
    from skilldeck.core import model, registry
    from skilldeck.core.discovery import catalog, fields, frontmatter

    return [m.__file__ or "" for m in (model, registry, catalog, fields, frontmatter, records)]


def load_found(
    picks: Sequence[tuple[RootScan, Found]],
    settings: Settings,
    *,
    profile: str = "default",
    store: LocalStore | None = None,
) -> list[Skill]:
    """Just these found SKILL.md files as :func:`discover` gives them: from their store
    rows when unchanged (else parsed), validated, registries applied; nothing is written.

    Name clashes are not resolved (``shadowed_by`` stays None): meant for winners of a
    catalog whose :func:`fingerprint` is known, e.g. a one-shot search's results.
    """
    validate, key = _validator(profile)
    reals = list(dict.fromkeys(item.real_md for _group, item in picks))
    rows = {} if store is None else records.read_rows(store, reals)
    loader = _Loader(rows, validate, key, None)
    registries: dict[str, list[Registry]] = {}
    global_registry = Registry.load(settings.registry_file)
    out: list[Skill] = []
    for group, item in picks:
        skills = loader.load_root(group.folder, group.root.source, [item], group.label)
        if group.folder not in registries:
            paths = root_registry_paths(Path(group.folder))
            registries[group.folder] = [Registry.load(p) for p in paths]
        for registry in registries[group.folder]:
            registry.apply(skills)
        global_registry.apply(skills)
        out.extend(skills)
    return out


def _keys(scanned: list[RootScan]) -> list[str]:
    return list(dict.fromkeys(f.real_md for group in scanned for f in group.found))


class _Loader:
    """Turns found SKILL.md files into skills: from their store rows when unchanged,
    else parsed, listed and validated; collects the rows to write."""

    def __init__(
        self,
        rows: dict[str, tuple[Any, ...]],
        validate: _Validate | None,
        key: str,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.rows = rows
        self.validate = validate
        self.key = key
        self.progress = progress
        self.count = 0
        self.dropped = 0
        self.changed: dict[str, tuple[str, int, int, str, str]] = {}

    def load_root(
        self, root_dir: str, source: Source, found: list[Found], label: str = ""
    ) -> list[Skill]:
        """The skills of one root's found files, in the same order; ``label`` is the
        root's part of their ids."""
        root = Path(root_dir)
        cut = len(root_dir.rstrip(os.sep)) + 1
        skills: list[Skill] = []
        for item in found:
            rel_id = "." if item.folder == root_dir else item.folder[cut:].replace(os.sep, "/")
            skill = self.load(item, root, source, rel_id)
            skill.root_label = label or skill.root_label
            skills.append(skill)
            self.count += 1
            if self.progress is not None and self.count % PROGRESS_EVERY == 0:
                self.progress(self.count)
        return skills

    def load(self, item: Found, root: Path, source: Source, rel_id: str) -> Skill:
        """One skill, with its validated diagnostics."""
        read_ns = 0
        path = Path(item.md_path)
        entry = self._stored(item, path, source, root, rel_id)
        changed = entry is None
        if entry is None:
            read_ns = time.time_ns()
            entry = self._parse(item, path, source, root, rel_id)
        elif not records.stamps_hold(item.folder, entry.stamps):
            read_ns = time.time_ns()
            skill = entry.skill
            entry.stamps = []
            skill.resources, skill.resources_truncated = list_resources(
                item.folder, stamps=entry.stamps
            )
            changed = True
        skill = entry.skill
        checked = entry.checks.get(self.key) if self.key else None
        if checked is None and self.validate is not None:
            checked = _run_validation(skill, self.validate)
            if checked is None:
                return skill  # the validator broke (SD205): nothing is stored
            if self.key:
                records.add_check(entry, self.key, checked)
                changed = True
                read_ns = read_ns or time.time_ns()
        if changed and item.real_md not in self.changed:  # an alias reached later: not stored
            self._keep(item, entry, read_ns)
        if checked is not None:
            skill.diagnostics = list(checked)
        return skill

    def _stored(
        self, item: Found, path: Path, source: Source, root: Path, rel_id: str
    ) -> records.Entry | None:
        """The entry of an unchanged SKILL.md from its row, if it has a usable one."""
        row = self.rows.get(item.real_md)
        if row is None:
            return None
        try:
            st = item.md_stat or os.stat(item.md_path)
        except OSError:
            return None
        if row[1] != st.st_mtime_ns or row[2] != st.st_size:
            return None
        entry = records.decode(row, path, source, root, rel_id)
        if entry is None:
            self.dropped += 1
            return None
        return entry if entry.md_path == item.md_path else None

    def _parse(
        self, item: Found, path: Path, source: Source, root: Path, rel_id: str
    ) -> records.Entry:
        entry = records.Entry(parse_file(path, source=source, root=root, rel_id=rel_id))
        entry.md_path = item.md_path
        skill = entry.skill
        skill.resources, skill.resources_truncated = list_resources(
            item.folder, stamps=entry.stamps
        )
        return entry

    def _keep(self, item: Found, entry: records.Entry, read_ns: int) -> None:
        """Queue the row of a parsed, relisted or newly validated skill for writing."""
        if any(d.code == "SD110" for d in entry.skill.diagnostics):
            return  # unreadable: nothing worth keeping
        row = records.encode(entry, read_ns) if records.storable(item.real_md) else None
        if row is not None:
            self.changed[item.real_md] = (item.real_md, *row)

    def finish(self, store: LocalStore, catalog: Catalog) -> None:
        """Write the changed rows; say what could not be kept."""
        if self.dropped:
            store.notice(
                f"local store: {self.dropped} skill row(s) did not decode and were rebuilt"
            )
        problem = records.write_rows(store, list(self.changed.values()))
        if problem is not None:
            catalog.diagnostics.append(problem)


def _run_validation(skill: Skill, validate: _Validate) -> list[Diagnostic] | None:
    """The validator's diagnostics for ``skill``; None (and SD205 on it) if it broke."""
    try:
        return validate(skill)
    except SkilldeckError:
        raise
    except Exception as exc:  # a validator bug must not hide the skill
        message = f"validation failed: {exc!r}"
        skill.diagnostics.append(Diagnostic("SD205", Severity.ERROR, message, skill.path))
        return None


def _validator(profile: str) -> tuple[_Validate | None, str]:
    """The validation function for ``profile`` and a key naming it and its code version."""
    from skilldeck.core import validate as module

    if profile not in module.PROFILES:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown validation profile {profile!r}; choose one of {', '.join(module.PROFILES)}",
        )
    try:
        stats = [os.stat(path) for path in module.code_files()]
        key = ":".join([profile, *(f"{st.st_mtime_ns}:{st.st_size}" for st in stats)])
    except OSError:
        key = ""

    def run(skill: Skill) -> list[Diagnostic]:
        return module.validate_skill(skill, profile)

    return run, key
