"""Find skills in every root, parse them (through the cache) and resolve name clashes.

Precedence, lowest first: ``bundled`` < ``user`` < ``project`` < ``explicit``. Among roots
of one source, a later root wins (default project roots are ordered farthest folder first,
so nearer folders win; explicit ``--root`` options win in the order given, later wins).
Within one root the first skill in sorted path order wins. Losers stay in the catalog with
``shadowed_by`` and ``shadow_reason`` set.

Scanning is recursive with ``os.scandir``: folders starting with ``.`` or ``_`` are skipped,
a folder holding ``SKILL.md`` is a skill (its subfolders are its resources, not more skills),
a root that is itself a skill folder counts, symlinked folders are followed with loop
detection, and a SKILL.md reached twice (same real path) is kept once, at the highest
precedence.

Loading: the cache keeps the folders the scan listed (device, inode, mtime), so a warm scan
lists only folders that changed; a warm start takes every skill from the metadata cache
with one stat of the SKILL.md and one of its folder (plus one per resource subfolder). The
skills of unchanged folders are not even stat'ed by the scan: from :data:`STAT_JOB_MIN` of
them, a forked process makes those stats while this one reads the cache and rebuilds every
skill from it, then each is kept only if its stats match (a folder whose SKILL.md went is
scanned afresh).

Cache misses are parsed, listed and validated, shared between this process and forked
workers (from :data:`PARALLEL_MIN` misses; ``SKILLDECK_NO_PARALLEL=1`` disables forking):
every process takes the next chunk from a pipe of tokens when it finishes one, workers
append each chunk's cache tables, pickled, to an unlinked temp file, and this process
rebuilds those skills between its own chunks and writes the pickled tables into the cache
file unchanged. Chunks a failed worker did not deliver are loaded here. Nothing is forked
while other threads run (the TUI discovers in a thread): then all of it happens here.

Codes (catalog diagnostics):
    SD201 an explicit root does not exist
    SD202 a folder cannot be read
    SD203 a symlink loops back to a folder above it (not followed)
    SD204 scanning stopped at the depth limit
    SD205 validation failed unexpectedly for a skill (a bug; the skill still shows)
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import stat
import tempfile
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import IO, Any

from skilldeck.core.cache import (
    R_CHECKED,
    R_DIAGS,
    R_HASH,
    RACY_NS,
    DiagRow,
    MetadataCache,
    Record,
    ResourceRow,
    Segment,
    diagnostics_from_rows,
    diagnostics_to_rows,
    pack_records,
    pack_segment,
    skill_from_record,
    skill_to_record,
)
from skilldeck.core.config import Settings, bundled_skills_dir, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source
from skilldeck.core.parse import (
    SKILL_FILE,
    _Head,
    frontmatter_hash,
    list_resources,
    parse_read,
    read_head,
)
from skilldeck.core.registry import Registry, root_registry_paths

MAX_SCAN_DEPTH = 16
"""Folders deeper than this below a root are not scanned."""

_PROGRESS_EVERY = 500

_Validate = Callable[[Skill], list[Diagnostic]]


@dataclass(frozen=True, slots=True)
class Root:
    """A folder to scan for skills, and the source its skills get."""

    path: Path
    source: Source


@dataclass(slots=True)
class _Found:
    folder: str
    real_md: str
    md_entry: os.DirEntry[str] | None
    md_path: str
    entries: list[os.DirEntry[str]] | None
    md_stat: os.stat_result | None = None
    md_name: str = SKILL_FILE
    deferred: bool = False  # from an unchanged folder: not stat'ed yet, maybe not a skill
    folder_mtime: int | None = None  # from _stat_found (-1: stat failed; None: not taken)


def default_roots(settings: Settings, cwd: Path | None = None) -> list[Root]:
    """The standard roots in ascending precedence; only folders that exist.

    ``bundled`` (shipped skills) < ``user`` (``~/.agents/skills``, ``~/.claude/skills``,
    ``~/.codex/skills``, then ``settings.extra_skill_dirs``) < ``project`` (from the
    repository root down to ``cwd``: ``.agents/skills``, ``.claude/skills``, ``skills``,
    ``agents/*/skills``; nearer folders come later and so win).
    """
    roots: list[Root] = [Root(bundled_skills_dir(), Source.BUNDLED)]
    home = Path.home()
    for rel in (".agents/skills", ".claude/skills", ".codex/skills"):
        roots.append(Root(home / rel, Source.USER))
    roots.extend(Root(Path(p).expanduser(), Source.USER) for p in settings.extra_skill_dirs)
    here = Path(os.path.abspath(cwd or Path.cwd()))
    chain = [here]
    top: Path | None = here if (here / ".git").exists() else None
    if top is None:
        for parent in here.parents:
            chain.append(parent)
            if (parent / ".git").exists():
                top = parent
                break
        if top is None:
            chain = [here]
    for folder in reversed(chain):
        for rel in (".agents/skills", ".claude/skills", "skills"):
            roots.append(Root(folder / rel, Source.PROJECT))
        agents = folder / "agents"
        if agents.is_dir():
            try:
                names = sorted(e.name for e in os.scandir(agents) if not e.name.startswith("."))
            except OSError:
                names = []
            roots.extend(Root(agents / n / "skills", Source.PROJECT) for n in names)
    out: list[Root] = []
    seen: set[tuple[Path, Source]] = set()
    for root in roots:
        if (root.path, root.source) in seen or not root.path.is_dir():
            continue
        seen.add((root.path, root.source))
        out.append(root)
    return out


def _is_skill_name(name: str) -> bool:
    return name == "SKILL.md" or (len(name) == 8 and name.lower() == "skill.md")


TreeNode = tuple[str, int, int, int, int, tuple[str, ...], tuple[str, ...]]
"""A listed folder: ``(real path, st_dev, st_ino, mtime_ns, listed at ns, skill children,
other subfolders)``; skill children are the ones whose ``SKILL.md`` was a regular file."""


def _scan_root(
    root: str,
    diags: list[Diagnostic],
    tree: dict[str, TreeNode] | None = None,
    defer: bool = False,
) -> tuple[list[_Found], dict[str, TreeNode]]:
    """Every skill folder under ``root``, real folders before symlinked aliases.

    ``tree`` holds the folders a previous scan listed: a folder whose device, inode and
    mtime are unchanged (and were not modified within :data:`RACY_NS` of that listing) has
    the same entries, so it is not listed again; its skill children are still checked
    with one ``lstat`` of their SKILL.md. Only folders without symlinks among their
    entries and whose listing gave no diagnostic are kept (symlinks and diagnostics are
    always worked out afresh). With ``defer``, those skill children are not even
    ``lstat``-ed: they come back with ``deferred`` set, for :func:`_stat_found` to check.

    Returns:
        The skills found (sorted by folder) and the tree of this scan.
    """
    found: list[_Found] = []
    fresh_tree: dict[str, TreeNode] = {}
    old_tree = tree or {}
    root_real = os.path.realpath(root)
    visited = {root_real}
    pending: list[tuple[str, str, int]] = [(root, root_real, 0)]
    links: list[tuple[str, str, int]] = []
    sep, lstat, is_reg, racy = os.sep, os.lstat, stat.S_ISREG, RACY_NS
    while pending or links:
        if not pending:
            # symlinked folders go last, so a folder reachable directly is found at its
            # own path; one already visited is an alias and is skipped
            link, link_real, depth = links.pop(0)
            if link_real in visited:
                continue
            visited.add(link_real)
            pending.append((link, link_real, depth))
        folder, real, depth = pending.pop()
        node = old_tree.get(folder)
        if node is not None:
            try:
                st = os.stat(folder)
            except OSError:
                st = None
            if (
                st is not None
                and type(node) is tuple
                and len(node) == 7
                and node[0] == real
                and node[3] == st.st_mtime_ns
                and node[2] == st.st_ino
                and node[1] == st.st_dev
                and node[3] < node[4] - racy
            ):
                fresh_tree[folder] = node
                prefix, real_prefix = folder + sep, real + sep
                for name in node[5]:
                    child_real = real_prefix + name
                    if child_real in visited:
                        continue
                    visited.add(child_real)
                    md_path = prefix + name + sep + SKILL_FILE
                    md_stat: os.stat_result | None = None
                    if not defer:
                        try:
                            md_stat = lstat(md_path)
                        except OSError:
                            md_stat = None
                        if md_stat is None or not is_reg(md_stat.st_mode):
                            pending.append((prefix + name, child_real, depth + 1))
                            continue
                    found.append(
                        _Found(
                            prefix + name,
                            child_real + sep + SKILL_FILE,
                            None,
                            md_path,
                            None,
                            md_stat,
                            SKILL_FILE,
                            defer,
                        )
                    )
                for name in node[6]:
                    child_real = real_prefix + name
                    if child_real not in visited:
                        visited.add(child_real)
                        pending.append((prefix + name, child_real, depth + 1))
                continue
        listed_ns = time.time_ns()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if depth > 0 or not isinstance(exc, FileNotFoundError):
                diags.append(
                    Diagnostic(
                        "SD202",
                        Severity.WARNING,
                        f"cannot read folder: {exc.strerror or exc}",
                        Path(folder),
                    )
                )
            continue
        md: os.DirEntry[str] | None = None
        for entry in entries:
            if entry.name == "SKILL.md":
                md = entry
                break
        if md is None:
            for entry in entries:
                if _is_skill_name(entry.name):
                    md = entry
                    break
        if md is not None:
            try:
                is_file = md.is_file()
            except OSError:
                is_file = False
            if is_file or md.is_symlink():
                real_md = real + sep + md.name
                if md.is_symlink():
                    real_md = os.path.realpath(md.path)
                found.append(_Found(folder, real_md, md, md.path, entries, None, md.name))
                continue
        subdirs: list[tuple[str, str, int]] = []
        skill_names: list[str] = []
        other_names: list[str] = []
        try:  # after the listing: a change since then has an mtime past listed_ns
            folder_stat: os.stat_result | None = os.stat(folder)
        except OSError:
            folder_stat = None
        keep = folder_stat is not None
        entries.sort(key=lambda e: e.name)
        for entry in entries:
            name = entry.name
            if name[0] == "." or name[0] == "_":
                continue
            try:
                if entry.is_symlink():
                    keep = False  # its target may change without this folder changing
                if not entry.is_dir():
                    continue
            except OSError:
                keep = False
                continue
            if depth + 1 > MAX_SCAN_DEPTH:
                keep = False
                diags.append(
                    Diagnostic(
                        "SD204",
                        Severity.WARNING,
                        f"not scanned: deeper than {MAX_SCAN_DEPTH} folders",
                        Path(entry.path),
                    )
                )
                continue
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if target == real or real.startswith(target.rstrip(sep) + sep):
                    diags.append(
                        Diagnostic(
                            "SD203",
                            Severity.WARNING,
                            f"symlink loop: {entry.path} points back to {target}; not followed",
                            Path(entry.path),
                        )
                    )
                    continue
                links.append((entry.path, target, depth + 1))
                continue
            child_real = real + sep + name
            if child_real in visited:
                keep = False
                continue
            visited.add(child_real)
            # most folders here are skills: one lstat tells, without listing the folder
            md_path = entry.path + sep + SKILL_FILE
            try:
                md_stat = lstat(md_path)
            except OSError:
                md_stat = None
            if md_stat is not None and is_reg(md_stat.st_mode):
                skill_names.append(name)
                found.append(
                    _Found(entry.path, child_real + sep + SKILL_FILE, None, md_path, None, md_stat)
                )
                continue
            other_names.append(name)
            subdirs.append((entry.path, child_real, depth + 1))
        if keep and folder_stat is not None:
            fresh_tree[folder] = (
                real,
                folder_stat.st_dev,
                folder_stat.st_ino,
                folder_stat.st_mtime_ns,
                listed_ns,
                tuple(skill_names),
                tuple(other_names),
            )
        if subdirs:
            subdirs.reverse()
            pending.extend(subdirs)
    found.sort(key=attrgetter("folder"))
    return found, fresh_tree


def _root_target(path: Path) -> tuple[str, list[_Found] | None]:
    """(absolute root folder, a single pre-found skill when ``path`` is a file)."""
    text = os.path.abspath(path)
    if os.path.isfile(text):
        folder = os.path.dirname(text)
        real = os.path.realpath(text)
        return folder, [_Found(folder, real, None, text, None, None, os.path.basename(text))]
    return text, None


def discover(
    roots: list[Root],
    settings: Settings | None = None,
    *,
    profile: str = "default",
    use_cache: bool = True,
    progress: Callable[[int], None] | None = None,
) -> Catalog:
    """Scan ``roots`` (ascending precedence), parse, apply governance, resolve clashes.

    A broken skill never stops the rest: its problems are in its diagnostics.

    Args:
        roots: Roots in ascending precedence (a higher source rank always wins; among
            roots of the same source a later one wins).
        settings: Settings (loaded when None).
        profile: Validation profile whose diagnostics go on each skill.
        use_cache: Use and update the persistent metadata cache.
        progress: Called with the number of skills processed so far.

    Returns:
        The catalog, skills ordered by source, then root, then path.
    """
    settings = settings or load_settings()
    collecting = gc.isenabled()
    gc.disable()  # thousands of small objects: generational GC passes cost more than they free
    try:
        return _discover(roots, settings, profile, use_cache, progress)
    finally:
        if collecting:
            gc.enable()


def _discover(
    roots: list[Root],
    settings: Settings,
    profile: str,
    use_cache: bool,
    progress: Callable[[int], None] | None,
) -> Catalog:
    catalog = Catalog(roots=[(r.path, r.source) for r in roots])
    validate, validator_key = _validator(profile)
    groups: list[tuple[tuple[int, int], list[_Found], list[Skill]]] = []
    counter = [0]

    def tick(count: int) -> None:
        before = counter[0]
        counter[0] += count
        if progress is not None:
            for done in range(
                before + _PROGRESS_EVERY - before % _PROGRESS_EVERY, counter[0] + 1, _PROGRESS_EVERY
            ):
                progress(done)

    for index, root in enumerate(roots):
        root_dir, single = _root_target(root.path)
        if single is None and not os.path.isdir(root_dir):
            if root.source is Source.EXPLICIT:
                catalog.diagnostics.append(
                    Diagnostic("SD201", Severity.WARNING, "root folder does not exist", root.path)
                )
            continue
        cache = MetadataCache.open(root_dir, validator=validator_key) if use_cache else None
        tree: dict[str, TreeNode] = {}
        if single is not None:
            found = single
        else:
            old_tree = cache.tree if cache is not None else None
            found, tree = _scan_root(root_dir, catalog.diagnostics, old_tree, defer=bool(old_tree))
        # the stats of skills in unchanged folders are made meanwhile, by a forked process
        # started while this one's heap is small (fewer pages to copy on write)
        job = _StatJob.start(found) if cache is not None and cache.tree else None
        try:
            if cache is not None:
                cache.finish()
            root_path = Path(root_dir)
            paths = _Paths(root_dir, root_path)
            found, skills = _load_found(
                found, tree, paths, root.source, cache, validate, tick, catalog, job
            )
        finally:
            if job is not None:
                job.close()
        if cache is not None:
            if single is None:
                cache.put_tree(tree)
            cache.save()
        if not found:
            continue
        for registry_path in root_registry_paths(root_path):
            registry = Registry.load(registry_path)
            catalog.diagnostics.extend(registry.diagnostics)
            registry.apply(skills)
        groups.append(((root.source.rank, index), found, skills))
    ranked = _precedence(groups)
    catalog.skills = [skill for _level, skills in ranked for skill in skills]
    global_registry = Registry.load(settings.registry_file)
    catalog.diagnostics.extend(global_registry.diagnostics)
    global_registry.apply(catalog.skills)
    copies = _resolve_shadows(ranked, len(catalog.skills))
    if copies:
        catalog.skills = [skill for skill in catalog.skills if id(skill) not in copies]
    if progress is not None:
        progress(counter[0])
    return catalog


class _Paths:
    """Builds the Path objects of one root cheaply (parents shared, no re-parsing)."""

    def __init__(self, root_dir: str, root_path: Path) -> None:
        self.root_dir = root_dir
        self.root_path = root_path
        self.prefix = root_dir.rstrip(os.sep) + os.sep
        self.folders: dict[str, Path] = {root_dir: root_path}

    def folder(self, folder: str) -> Path:
        path = self.folders.get(folder)
        if path is None:
            parent, _, name = folder.rpartition(os.sep)
            if folder.startswith(self.prefix) and parent and name:
                path = _child(self.folder(parent), name)
            else:
                path = Path(folder)
            self.folders[folder] = path
        return path

    def rel_id(self, folder: str) -> str:
        if folder == self.root_dir or not folder.startswith(self.prefix):
            return "."
        return folder[len(self.prefix) :].replace(os.sep, "/")


def _make_child_fallback(parent: Path, name: str) -> Path:
    return parent / name


def _pick_child() -> Callable[[Path, str], Path]:
    """``Path._make_child_relpath`` (no re-parsing) when this Python has it and it works."""
    fast = getattr(Path, "_make_child_relpath", None)
    if fast is None:
        return _make_child_fallback
    try:
        probe = fast(Path("/a/b"), "c d")
        if isinstance(probe, Path) and str(probe) == "/a/b/c d" and probe == Path("/a/b/c d"):
            return fast  # type: ignore[no-any-return]
    except Exception:  # any surprise: use the public API
        pass
    return _make_child_fallback


_child = _pick_child()


def _pair_fallback(
    parent: Path, name: str, md_name: str, _folder: str, _md_text: str
) -> tuple[Path, Path]:
    base = _child(parent, name)
    return base, _child(base, md_name)


def _pair_direct(
    parent: Path, name: str, md_name: str, folder: str, md_text: str
) -> tuple[Path, Path]:
    """CPython 3.11's PurePath slots set directly, the text form included (``folder`` and
    ``md_text`` are the two paths as strings): no parsing, no later formatting."""
    up: Any = parent
    new, cls = object.__new__, type(parent)
    drv, root, parts = up._drv, up._root, [*up._parts, name]
    base: Any = new(cls)
    base._drv, base._root, base._parts, base._str = drv, root, parts, folder
    md: Any = new(cls)
    md._drv, md._root, md._parts, md._str = drv, root, [*parts, md_name], md_text
    return base, md


def _pick_pair() -> Callable[[Path, str, str, str, str], tuple[Path, Path]]:
    """A skill folder's Path and its SKILL.md's from the parent folder's Path:
    :func:`_pair_direct` (a measured third of the cost of two ``_child`` calls, and
    ``str()`` of them is free) when this Python's paths work that way, else
    :func:`_pair_fallback`."""
    try:
        base, md = _pair_direct(Path("/a/b"), "c d", "SKILL.md", "/a/b/c d", "/a/b/c d/SKILL.md")
        want_base, want_md = Path("/a/b/c d"), Path("/a/b/c d/SKILL.md")
        if (
            (base, md) == (want_base, want_md)
            and (str(base), str(md)) == (str(want_base), str(want_md))
            and (hash(base), hash(md)) == (hash(want_base), hash(want_md))
            and md.parent == base
            and md.parts == want_md.parts
            and base / "x" == want_base / "x"
            and (md.name, base.name) == ("SKILL.md", "c d")
        ):
            return _pair_direct
    except Exception:  # any surprise: the public way
        pass
    return _pair_fallback


_pair = _pick_pair()


class _Loaded:
    """One freshly loaded skill and what the cache keeps of it."""

    __slots__ = ("record", "resources", "rows", "skill")

    def __init__(
        self,
        skill: Skill,
        record: Record | None,
        rows: tuple[DiagRow, ...] | None,
        resources: ResourceRow,
    ) -> None:
        self.skill = skill
        self.record = record  # None: not to be cached (unreadable file)
        self.rows = rows  # validation rows; None: not validated (or the validator broke)
        self.resources = resources  # (folder mtime or -1 when not cacheable, stamps, listing)


def _warm_pass(
    found: list[_Found],
    paths: _Paths,
    source: Source,
    cache: MetadataCache,
    validate: _Validate | None,
    loaded: list[Skill | None],
    job: _StatJob | None = None,
) -> tuple[list[int], list[int]]:
    """Fill ``loaded`` with the skills fresh cache entries serve.

    The hot loop of a warm start, in two passes: build a skill from every cache entry
    recorded at its path (reading the cache's tables directly, one positional call each),
    then check each against the stats of its SKILL.md and folder (:func:`_stat_found`,
    made meanwhile by ``job`` when there is one) and keep only the fresh ones.

    Returns:
        The indexes to load afresh, and those of deferred items that are not skills.
    """
    entries, seen = cache.entries, cache.seen
    if not entries and not any(item.deferred for item in found):
        return list(range(len(found))), []  # nothing cached: a cold start
    validated, seen_validated = cache.validated, cache.seen_validated
    resources, seen_resources = cache.resources, cache.seen_resources
    folders, folder_path, root_path = paths.folders, paths.folder, paths.root_path
    prefix, cut = paths.prefix, len(paths.prefix)
    sep, child, pair = os.sep, _child, _pair
    slash = sep == "/"
    from_rows = diagnostics_from_rows
    built: list[Built | None] = [None] * len(found)
    for i, item in enumerate(found):
        real = item.real_md
        record = entries.get(real)
        if record is None or record[0] != item.md_path:
            continue
        folder = item.folder
        parent, _, name = folder.rpartition(sep)
        parent_path = folders.get(parent)
        if parent_path is not None and name:
            base_dir, md_path = pair(parent_path, name, item.md_name, folder, item.md_path)
        else:
            base_dir = folder_path(folder)
            md_path = child(base_dir, item.md_name)
        if folder.startswith(prefix):
            rel_id = folder[cut:] if slash else folder[cut:].replace(sep, "/")
        else:
            rel_id = "."
        rows = validated.get(real)
        if rows is None:
            diagnostics = None
        else:
            diagnostics = from_rows(rows, md_path, item.md_path) if rows else []
        row = resources.get(real)
        if type(row) is tuple and len(row) == 4:
            listing = (row[2], row[3])
        else:
            row, listing = None, ((), False)
        skill = skill_from_record(
            record, md_path, base_dir, source, root_path, rel_id, diagnostics, listing
        )
        built[i] = (skill, record, row, rows)
    stats = job.result(len(found)) if job is not None else None
    if stats is None:
        stats = _stat_found(found)
    columns = (stats[0::4], stats[1::4], stats[2::4], stats[3::4])
    misses: list[int] = []
    gone: list[int] = []
    racy, is_reg = RACY_NS, stat.S_ISREG
    for i, (item, got, mode, mtime, size, folder_mtime) in enumerate(
        zip(found, built, *columns, strict=True)
    ):
        if item.deferred and not is_reg(mode):
            gone.append(i)
            continue
        if got is None or mode == 0:
            item.folder_mtime = folder_mtime
            misses.append(i)
            continue
        skill, record, row, rows = got
        if mtime != record[1] or size != record[2] or mtime >= record[R_CHECKED] - racy:
            item.folder_mtime = folder_mtime
            misses.append(i)
            continue
        real = item.real_md
        seen[real] = record
        if row is not None and row[0] == folder_mtime and not row[1] and folder_mtime >= 0:
            seen_resources[real] = row
        else:
            skill.resources, skill.resources_truncated = _listing(item, cache, folder_mtime)
        if rows is not None:
            seen_validated[real] = rows
        elif validate is not None and _run_validation(skill, validate):
            cache.put_validated(real, skill.diagnostics)
        loaded[i] = skill
    cache.hits += len(found) - len(misses) - len(gone)
    cache.misses += len(misses)
    return misses, gone


Built = tuple[Skill, Record, ResourceRow | None, tuple[DiagRow, ...] | None]
"""A skill rebuilt from its cache entry, the entry, its resource row, its validation rows."""


def _stat_found(found: list[_Found]) -> array[int]:
    """``(mode, mtime_ns, size, folder mtime_ns)`` per item, flat: ``lstat`` of the SKILL.md
    (the scan's when it made one; ``stat`` when it was listed as a symlink), ``stat`` of its
    folder. Mode 0: no stat
    (a SKILL.md given as a root, or it failed); folder mtime -1: that stat failed."""
    out = array("q")
    add = out.extend
    lstat, stat_ = os.lstat, os.stat
    for item in found:
        st = item.md_stat  # the scan's lstat, when it made one
        if st is None:
            if item.deferred:
                call = lstat
            elif item.md_entry is not None:
                call = stat_
            else:
                add((0, 0, 0, -1))
                continue
            try:
                st = call(item.md_path)
            except OSError:
                add((0, 0, 0, -1))
                continue
        try:
            folder_mtime = stat_(item.folder).st_mtime_ns
        except OSError:
            folder_mtime = -1
        add((st.st_mode, st.st_mtime_ns, st.st_size, folder_mtime))
    return out


STAT_JOB_MIN = 2000
"""From this many skills in a warm root, their stats are made by a forked process while
this one rebuilds the skills from the cache (the two take about as long)."""


class _StatJob:
    """A forked process making :func:`_stat_found` of a list, sending it through a pipe."""

    __slots__ = ("pid", "reader")

    def __init__(self, pid: int, reader: int) -> None:
        self.pid = pid
        self.reader = reader

    @classmethod
    def start(cls, found: list[_Found]) -> _StatJob | None:
        """Fork the job, or None when it is not worth it or forking is not safe here."""
        if len(found) < STAT_JOB_MIN or not _can_fork():
            return None
        if sum(item.deferred for item in found) < STAT_JOB_MIN:
            return None
        try:
            reader, writer = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid:
            os.close(writer)
            return cls(pid, reader)
        code = 1
        try:  # the child: never returns, never runs the parent's exit handlers
            os.close(reader)
            view = memoryview(_stat_found(found).tobytes())
            while view:
                view = view[os.write(writer, view) :]
            code = 0
        finally:
            os._exit(code)

    def result(self, count: int) -> array[int] | None:
        """The stats (None when the job failed: make them here instead)."""
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self.reader, 1 << 20):
                chunks.append(chunk)
            _pid, status = os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            return None
        self.pid = 0
        out = array("q")
        data = b"".join(chunks)
        if os.waitstatus_to_exitcode(status) != 0 or len(data) != 4 * count * out.itemsize:
            return None
        out.frombytes(data)
        return out

    def close(self) -> None:
        """Release the pipe; stop and reap the process if its result was not taken."""
        with contextlib.suppress(OSError):
            os.close(self.reader)
        if self.pid:
            _reap(self.pid)
            self.pid = 0


def _rebuild(
    record: Record,
    item: _Found,
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
    listing: tuple[tuple[str, ...], bool],
    rows: tuple[DiagRow, ...] | None = None,
) -> Skill:
    """A skill from its record, with cached (or ``rows``) or fresh validation results."""
    base_dir = paths.folder(item.folder)
    md_path = _child(base_dir, item.md_name)
    if rows is None and cache is not None:
        rows = cache.get_validated(item.real_md)
    skill = skill_from_record(
        record,
        md_path,
        base_dir,
        source,
        paths.root_path,
        paths.rel_id(item.folder),
        None if rows is None else diagnostics_from_rows(rows, md_path, item.md_path),
        listing,
    )
    if (
        rows is None
        and validate is not None
        and _run_validation(skill, validate)
        and cache is not None
    ):
        cache.put_validated(item.real_md, skill.diagnostics)
    return skill


def _listing(
    item: _Found, cache: MetadataCache, mtime: int | None = None
) -> tuple[tuple[str, ...], bool]:
    """The skill folder's resource listing, from the cache while its folders are unchanged."""
    if mtime is None or mtime < 0:
        try:
            mtime = os.stat(item.folder).st_mtime_ns
        except OSError:
            return list_resources(item.folder, item.entries)
    hit = cache.get_resources(item.real_md, mtime, item.folder)
    if hit is not None:
        return hit
    row = _fresh_resources(item, mtime)
    if row[0] >= 0:
        cache.put_resources(item.real_md, row[0], (row[2], row[3]), row[1])
    return row[2], row[3]


def _fresh_resources(item: _Found, mtime: int | None = None) -> ResourceRow:
    """List the skill folder now: ``(mtime or -1 if not cacheable, stamps, listing, cut)``.

    A listing is cacheable when neither the folder nor any subfolder it read was modified
    within :data:`RACY_NS` (mtime granularity: a change in the same tick would go unseen).
    """
    if mtime is None:
        mtime = item.folder_mtime
    if mtime is None:
        try:
            mtime = os.stat(item.folder).st_mtime_ns
        except OSError:
            mtime = -1
    stamps: list[tuple[str, int]] = []
    listing, cut = list_resources(item.folder, item.entries, stamps=stamps)
    limit = time.time_ns() - RACY_NS
    if mtime >= limit or any(not 0 <= m < limit for _rel, m in stamps):
        mtime = -1
    return mtime, tuple(stamps), listing, cut


_BYTE_CODES = frozenset({"SD101", "SD102", "SD107", "SD108", "SD110", "SD114", "SD117", "SD199"})
"""Parse findings that depend on more than the frontmatter bytes: always parse again."""


_BATCH = 256
"""Misses are loaded in batches: list every folder, read every file, then parse them all
(alternating system calls with Python work costs about a third more CPU time)."""


def _load_batch(
    items: list[_Found],
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
) -> list[_Loaded]:
    """:func:`_load_miss` of every item, doing the file system work of a batch first."""
    out: list[_Loaded] = []
    for start in range(0, len(items), _BATCH):
        chunk = items[start : start + _BATCH]
        listed = [_fresh_resources(item) for item in chunk]
        read_ns = time.time_ns()
        heads = [
            None
            if cache is not None and _reusable(cache, item)
            else read_head(item.md_path, item.md_stat)
            for item in chunk
        ]
        out.extend(
            _load_miss(item, paths, source, cache, validate, resources, head, read_ns)
            for item, resources, head in zip(chunk, listed, heads, strict=True)
        )
    return out


def _reusable(cache: MetadataCache, item: _Found) -> Record | None:
    """The cache entry of ``item`` whatever its stamps, if its frontmatter hash may match."""
    old = cache.stale(item.real_md, item.md_path)
    if old is not None and not any(row[0] in _BYTE_CODES for row in old[R_DIAGS]):
        return old
    return None


def _load_miss(
    item: _Found,
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
    resources: ResourceRow | None = None,
    head: _Head | OSError | None = None,
    read_ns: int = 0,
) -> _Loaded:
    """Load a skill the cache could not serve: reuse an entry whose frontmatter bytes are
    unchanged (file touched, body edited), else parse; list resources; validate.

    ``resources`` and ``head`` are the folder listing and file start when already read
    (at ``read_ns`` or later).
    """
    if resources is None:
        resources = _fresh_resources(item)
    listing = (resources[2], resources[3])
    if cache is not None and head is None:
        old = _reusable(cache, item)
        if old is not None:
            current = frontmatter_hash(item.md_path)
            if current is not None and current[0] == old[R_HASH]:
                record = cache.refresh(item.real_md, old, current[2], current[1])
                rows = cache.get_validated(item.real_md)
                skill = _rebuild(record, item, paths, source, None, validate, listing, rows)
                if rows is None and validate is not None:
                    rows = diagnostics_to_rows(skill.diagnostics)
                return _Loaded(skill, record, rows, resources)
    base_dir = paths.folder(item.folder)
    md_obj = (
        _child(base_dir, item.md_name)
        if item.md_entry is not None or item.md_stat is not None or item.deferred
        else None
    )
    if head is None:
        read_ns = time.time_ns()
        head = read_head(item.md_path, item.md_stat)
    skill = parse_read(
        item.md_path,
        head,
        source=source,
        root=paths.root_path,
        rel_id=paths.rel_id(item.folder),
        path_obj=md_obj,
        base_obj=base_dir if md_obj is not None else None,
    )
    skill.resources, skill.resources_truncated = listing
    fresh = None
    if not any(d.code == "SD110" for d in skill.diagnostics):
        text = item.md_path if md_obj else None
        if text == item.real_md:
            text = item.real_md  # one string object for the key and the path: smaller cache
        fresh = skill_to_record(skill, read_ns, text)
    checked = None
    if validate is not None and _run_validation(skill, validate):
        checked = diagnostics_to_rows(skill.diagnostics)
    return _Loaded(skill, fresh, checked, resources)


def _run_validation(skill: Skill, validate: _Validate) -> bool:
    """Replace the skill's diagnostics with the validator's; False if the validator broke."""
    try:
        skill.diagnostics = validate(skill)
    except SkilldeckError:
        raise
    except Exception as exc:  # a validator bug must not hide the skill
        skill.diagnostics.append(
            Diagnostic("SD205", Severity.ERROR, f"validation failed: {exc!r}", skill.path)
        )
        return False
    return True


def _keep(cache: MetadataCache, item: _Found, loaded: _Loaded) -> None:
    """Store a loaded skill's record, validation and resource listing in the cache."""
    if loaded.record is None:
        return
    real = item.real_md
    cache.put_record(real, loaded.record)
    if loaded.rows is not None:
        cache.put_validated_rows(real, loaded.rows)
    res = loaded.resources
    if res[0] >= 0:
        cache.put_resources(real, res[0], (res[2], res[3]), res[1])


def _segment(part: list[_Found], loaded: list[_Loaded], ship: bool) -> Segment:
    """The cache tables of a chunk of loaded skills, their detail rows in one block. To
    ``ship`` it to the main process, ``extra`` also holds, by position, what the tables
    cannot give back: skills not cached (unreadable file, listing too recent to trust) and
    real paths met twice."""
    entries: dict[str, Record] = {}
    validated: dict[str, tuple[DiagRow, ...]] = {}
    resources: dict[str, ResourceRow] = {}
    extra: dict[int, tuple[Record, tuple[DiagRow, ...] | None, ResourceRow, bool]] = {}
    reals = [item.real_md for item in part]
    twice = (
        {r for r in reals if reals.count(r) > 1} if ship and len(set(reals)) < len(reals) else ()
    )
    wanted: list[Record | None] = [
        result.record
        if result.record is not None
        else skill_to_record(result.skill, 0, item.md_path)
        if ship
        else None
        for item, result in zip(part, loaded, strict=True)
    ]
    packed = iter(pack_records([r for r in wanted if r is not None]))
    records = [next(packed) if r is not None else None for r in wanted]
    for i, (item, real, result) in enumerate(zip(part, reals, loaded, strict=True)):
        record = records[i]
        rows, res = result.rows, result.resources
        cacheable = result.record is not None and record is not None
        if result.record is not None and record is not None:
            entries[real] = record
            if rows is not None:
                validated[real] = rows
            else:
                validated.pop(real, None)
            if res[0] >= 0:
                resources[real] = res
        if ship and (not cacheable or res[0] < 0 or real in twice):
            if record is None:
                raise ValueError(f"cannot ship {item.md_path}")  # its details do not pickle
            extra[i] = (record, rows, res, cacheable)
    return {"entries": entries, "validated": validated, "resources": resources, "extra": extra}


def _load_found(
    found: list[_Found],
    tree: dict[str, TreeNode],
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
    tick: Callable[[int], None],
    catalog: Catalog,
    job: _StatJob | None = None,
) -> tuple[list[_Found], list[Skill]]:
    """Skills for ``found`` (in order). A deferred skill folder that turns out to hold no
    SKILL.md any more is scanned afresh (its parent's tree node is dropped so the next scan
    lists it too), and what that finds is loaded and merged in path order."""
    found, skills, gone = _load_root(found, paths, source, cache, validate, tick, job)
    if not gone:
        return found, skills
    more: list[_Found] = []
    for folder in gone:
        tree.pop(os.path.dirname(folder), None)
        more.extend(_scan_root(folder, catalog.diagnostics)[0])
    if not more:
        return found, skills
    more, extra, _gone = _load_root(more, paths, source, cache, validate, tick, None)
    pairs = sorted(zip(found + more, skills + extra, strict=True), key=lambda p: p[0].folder)
    return [item for item, _skill in pairs], [skill for _item, skill in pairs]


def _load_root(
    found: list[_Found],
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
    tick: Callable[[int], None],
    job: _StatJob | None = None,
) -> tuple[list[_Found], list[Skill], list[str]]:
    """Skills for every found SKILL.md: cached, else loaded (in parallel when worth it).

    Returns:
        The items that are skills, their skills, and the folders of deferred items that
        are not skills after all.
    """
    loaded: list[Skill | None] = [None] * len(found)
    gone: list[int] = []
    if cache is not None:
        misses, gone = _warm_pass(found, paths, source, cache, validate, loaded, job)
    else:
        misses = list(range(len(found)))
    items = [found[i] for i in misses]
    position = 0
    for chunk in _load_misses(items, paths, source, cache, validate):
        if cache is not None:
            if chunk.blob is not None and chunk.segment is not None:
                cache.add_segment(chunk.segment, chunk.blob)
            else:
                for item, result in zip(
                    items[position : position + len(chunk.loaded)], chunk.loaded, strict=True
                ):
                    _keep(cache, item, result)
        for result in chunk.loaded:
            loaded[misses[position]] = result.skill
            position += 1
    gone_folders = [found[i].folder for i in gone]
    if gone:
        dropped = set(gone)
        found = [item for i, item in enumerate(found) if i not in dropped]
    skills = [done for done in loaded if done is not None]
    assert len(skills) == len(found)
    tick(len(skills))
    return found, skills, gone_folders


PARALLEL_MIN = 600
"""Load in forked worker processes (the main one works too) from this many cache misses."""

MAX_WORKERS = 8
"""Upper bound on processes (the main one included) loading cache misses."""

_CHUNK = 64
"""Misses are handed out in chunks of about this many: each process takes the next chunk
when it is done with one, so a slow or busy process simply takes fewer."""

_MAX_CHUNKS = 2000
"""At most this many chunks: their 2-byte tokens must fit one atomic pipe write."""

_FRAME = 10
"""A worker's result frame: chunk number (2 bytes), length (8 bytes), pickled segment."""


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    """Forked helpers may run: a spare CPU, no other thread, not disabled."""
    if os.environ.get("SKILLDECK_NO_PARALLEL"):
        return False
    if _usable_cpus() < 2 or threading.active_count() != 1:
        return False  # forking a threaded process is unsafe
    return hasattr(os, "fork") and hasattr(os, "waitpid") and hasattr(os, "pread")


def _parallel_ok(count: int) -> bool:
    return count >= PARALLEL_MIN and _can_fork()


class _Chunk:
    """Skills loaded together; ``segment`` and ``blob`` (its pickle) go to the cache as they
    are (None: store the skills one by one)."""

    __slots__ = ("blob", "loaded", "segment")

    def __init__(
        self, loaded: list[_Loaded], segment: Segment | None = None, blob: bytes | None = None
    ) -> None:
        self.loaded = loaded
        self.segment = segment
        self.blob = blob


def _chunks(count: int, procs: int) -> list[tuple[int, int]]:
    """``(start, stop)`` slices of ``count`` items: small enough to balance ``procs``."""
    size = max(1, min(_CHUNK, -(-count // (procs * 4))), -(-count // _MAX_CHUNKS))
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _token_pipe(count: int) -> int | None:
    """A pipe's read end holding the tokens ``0..count-1`` (2 bytes each), writer closed.

    Reads of 2 bytes are atomic, so each token (chunk) goes to exactly one reader.
    """
    try:
        reader, writer = os.pipe()
    except OSError:
        return None
    tokens = b"".join(k.to_bytes(2, "big") for k in range(count))
    try:
        written = os.write(writer, tokens)  # at most PIPE_BUF bytes: all or nothing
    except OSError:
        written = -1
    finally:
        os.close(writer)
    if written != len(tokens):
        os.close(reader)
        return None
    return reader


def _next_chunk(reader: int) -> int | None:
    """The next token from the pipe, or None when all are taken."""
    try:
        token = os.read(reader, 2)
    except OSError:
        return None
    return int.from_bytes(token, "big") if len(token) == 2 else None


class _Worker:
    """A forked loader: its pid, and the unlinked temp file it appends result frames to."""

    __slots__ = ("handle", "pid", "read")

    def __init__(self, pid: int, handle: IO[bytes]) -> None:
        self.pid = pid
        self.handle = handle
        self.read = 0  # bytes of complete frames consumed so far

    def frames(self) -> list[tuple[int, bytes]]:
        """The complete frames written since the last call (a frame's bytes are all there
        once the file's size covers them: the size grows as the data is copied in)."""
        out: list[tuple[int, bytes]] = []
        fd = self.handle.fileno()
        try:
            size = os.fstat(fd).st_size
            while size - self.read >= _FRAME:
                head = os.pread(fd, _FRAME, self.read)
                length = int.from_bytes(head[2:], "big")
                if self.read + _FRAME + length > size:
                    break
                blob = os.pread(fd, length, self.read + _FRAME)
                if len(blob) != length:
                    break
                out.append((int.from_bytes(head[:2], "big"), blob))
                self.read += _FRAME + length
        except OSError:
            pass  # what was read stays; the chunks not delivered are loaded by the parent
        return out


def _load_misses(
    items: list[_Found],
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
) -> list[_Chunk]:
    """Load ``items`` (in order): here, or shared between this process and forked ones.

    Work is handed out in chunks through a pipe of tokens that every process reads, so
    the split follows how fast each one actually is (the machine may be busy). Workers
    append each chunk's pickled rows to a temp file as they go; this process rebuilds
    those skills between its own chunks. Chunks a failed worker took are loaded here.
    """
    if not _parallel_ok(len(items)):
        return [_Chunk(_load_batch(items, paths, source, cache, validate))]
    procs = max(2, min(_usable_cpus(), MAX_WORKERS, len(items) // (PARALLEL_MIN // 2)))
    bounds = _chunks(len(items), procs)
    reader = _token_pipe(len(bounds))
    if reader is None:
        return [_Chunk(_load_batch(items, paths, source, cache, validate))]
    workers: list[_Worker] = []
    running: set[int] = set()
    done: dict[int, _Chunk] = {}

    def take(frames: list[tuple[int, bytes]]) -> None:
        for k, blob in frames:
            chunk = _shipped_chunk(k, blob, bounds, items, paths, source, validate)
            if chunk is not None and k not in done:
                done[k] = chunk

    try:
        for _ in range(procs - 1):
            worker = _fork_worker(items, bounds, reader, paths, source, cache, validate)
            if worker is None:
                break
            workers.append(worker)
            running.add(worker.pid)
        while True:
            for worker in workers:
                take(worker.frames())
            k = _next_chunk(reader)
            if k is None:
                break
            start, stop = bounds[k]
            part = items[start:stop]
            loaded = _load_batch(part, paths, source, cache, validate)
            if cache is None:
                done[k] = _Chunk(loaded)
                continue
            segment = _segment(part, loaded, ship=False)
            done[k] = _Chunk(loaded, segment, pack_segment(segment))
        for worker in workers:
            with contextlib.suppress(OSError, ChildProcessError):
                os.waitpid(worker.pid, 0)
            running.discard(worker.pid)
            take(worker.frames())
        for k, (start, stop) in enumerate(bounds):
            if k not in done:  # taken by a worker that failed
                done[k] = _Chunk(_load_batch(items[start:stop], paths, source, cache, validate))
        return [done[k] for k in range(len(bounds))]
    finally:
        os.close(reader)
        for worker in workers:
            if worker.pid in running:
                _reap(worker.pid)
            worker.handle.close()


def _shipped_chunk(
    k: int,
    blob: bytes,
    bounds: list[tuple[int, int]],
    items: list[_Found],
    paths: _Paths,
    source: Source,
    validate: _Validate | None,
) -> _Chunk | None:
    """A worker's chunk rebuilt here; None when its frame does not hold what it should."""
    if not 0 <= k < len(bounds):
        return None
    start, stop = bounds[k]
    try:
        segment = pickle.loads(blob)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(segment, dict) or not all(
        isinstance(segment.get(key), dict) for key in ("entries", "validated", "resources", "extra")
    ):
        return None
    entries, validated, resources = segment["entries"], segment["validated"], segment["resources"]
    extra = segment["extra"]
    loaded = []
    for i, item in enumerate(items[start:stop]):
        real = item.real_md
        shipped = extra.get(i)
        if shipped is not None:
            record, rows, res, cacheable = shipped
        else:
            record, rows, res, cacheable = (
                entries.get(real),
                validated.get(real),
                resources.get(real),
                True,
            )
        if type(record) is not tuple or type(res) is not tuple or record[0] != item.md_path:
            return None
        skill = _rebuild(record, item, paths, source, None, validate, (res[2], res[3]), rows)
        if rows is None and validate is not None:
            rows = diagnostics_to_rows(skill.diagnostics)
        loaded.append(_Loaded(skill, record if cacheable else None, rows, res))
    return _Chunk(loaded, segment, blob)


def _fork_worker(
    items: list[_Found],
    bounds: list[tuple[int, int]],
    reader: int,
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
) -> _Worker | None:
    """Fork a process loading the chunks it takes from ``reader``; after each one it
    appends a frame (chunk number, length, pickled :func:`_segment`) to an unlinked temp
    file."""
    try:
        handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _load_misses
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        handle.close()
        return None
    if pid:
        return _Worker(pid, handle)
    code = 1
    try:  # the child: never returns, never runs the parent's exit handlers
        fd = handle.fileno()
        while (k := _next_chunk(reader)) is not None:
            start, stop = bounds[k]
            part = items[start:stop]
            loaded = _load_batch(part, paths, source, cache, validate)
            blob = pack_segment(_segment(part, loaded, ship=True))
            view = memoryview(k.to_bytes(2, "big") + len(blob).to_bytes(8, "big") + blob)
            while view:
                view = view[os.write(fd, view) :]
        code = 0
    finally:
        os._exit(code)


def _reap(pid: int) -> None:
    """Stop and wait for a worker not collected (after an error in this process)."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)


Level = tuple[int, int]
"""``(source rank, root index)``: a higher level wins."""


def _precedence(
    groups: list[tuple[Level, list[_Found], list[Skill]]],
) -> list[tuple[Level, list[Skill]]]:
    """The skills of each root level in ascending precedence (stable: roots of one source
    keep their order), each real SKILL.md once: at the highest level that found it, first
    in path order within a root."""
    ordered = sorted(groups, key=lambda group: group[0][0])
    reals = [item.real_md for _level, found, _skills in ordered for item in found]
    if len(set(reals)) == len(reals):
        return [(level, skills) for level, _found, skills in ordered]
    best: dict[str, Level] = {}
    for level, found, _skills in ordered:
        for item in found:
            if best.get(item.real_md, (-1, -1)) < level:
                best[item.real_md] = level
    out: list[tuple[Level, list[Skill]]] = []
    for level, found, skills in ordered:
        taken: list[Skill] = []
        for item, skill in zip(found, skills, strict=True):
            if best.get(item.real_md) == level:
                del best[item.real_md]  # later copies in the same root lose
                taken.append(skill)
        out.append((level, taken))
    return out


def _resolve_shadows(ranked: list[tuple[Level, list[Skill]]], count: int) -> set[int]:
    """Mark every skill that loses its name to a higher-precedence one (``count`` skills
    in all).

    Returns:
        The ids of bundled skills that are identical copies of their winner (Skilldeck
        installed and also run from its own repository): one skill, to be listed once.
    """
    copies: set[int] = set()
    if len({skill.name for _level, skills in ranked for skill in skills}) == count:
        return copies  # every name is unique: nothing is shadowed
    kept = [
        ((level[0], level[1], -position), skill)
        for level, skills in ranked
        for position, skill in enumerate(skills)
    ]
    winners: dict[str, tuple[tuple[int, int, int], Skill]] = {}
    for key, skill in kept:
        best = winners.get(skill.name)
        if best is None or key > best[0]:
            winners[skill.name] = (key, skill)
    for key, skill in kept:
        win_key, winner = winners[skill.name]
        if winner is skill:
            continue
        if skill.source is Source.BUNDLED and _same_copy(skill, winner):
            copies.add(id(skill))
            continue
        skill.shadowed_by = winner.path
        if win_key[0] != key[0]:
            why = f"{winner.source.value} overrides {skill.source.value}"
        elif win_key[1] != key[1]:
            if skill.source is Source.PROJECT:
                why = "a nearer project folder overrides a farther one"
            else:
                why = f"a later {skill.source.value} root overrides an earlier one"
        else:
            why = "same root: the first in path order wins"
        skill.shadow_reason = f"shadowed by {winner.path} ({why})"
    return copies


def _same_copy(a: Skill, b: Skill) -> bool:
    """True when two skill folders hold the same SKILL.md bytes and resource names."""
    if (a.size, a.content_hash, a.resources) != (b.size, b.content_hash, b.resources):
        return False
    try:
        with open(a.path, "rb") as fa, open(b.path, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def _validator(profile: str) -> tuple[_Validate | None, str]:
    """The validation function for ``profile`` and a key identifying its code."""
    try:
        from skilldeck.core import validate as module
    except ImportError:
        return None, ""
    if profile not in module.PROFILES:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown validation profile {profile!r}; choose one of {', '.join(module.PROFILES)}",
        )
    try:
        st = os.stat(module.__file__ or "")
        key = f"{profile}:{st.st_mtime_ns}:{st.st_size}"
    except OSError:
        key = ""

    def run(skill: Skill) -> list[Diagnostic]:
        return module.validate_skill(skill, profile)

    return run, key


def load_catalog(
    paths: list[Path] | None,
    settings: Settings | None = None,
    *,
    profile: str = "default",
    cwd: Path | None = None,
) -> Catalog:
    """Discover from explicit ``paths`` (later wins) or, when None/empty, the default roots."""
    settings = settings or load_settings()
    if paths:
        roots = [Root(Path(p).expanduser(), Source.EXPLICIT) for p in paths]
    else:
        roots = default_roots(settings, cwd)
    return discover(roots, settings, profile=profile)


def refresh_skill(
    catalog: Catalog, path: Path, settings: Settings | None = None, profile: str = "default"
) -> Catalog:
    """A new catalog after ``path`` (a SKILL.md or skill folder) changed, appeared or vanished.

    Re-runs discovery over the catalog's roots; the cache makes unchanged skills free, and
    shadowing across roots stays right.
    """
    roots = [Root(p, s) for p, s in catalog.roots]
    return discover(roots, settings, profile=profile)
