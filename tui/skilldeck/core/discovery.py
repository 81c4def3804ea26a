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

Codes (catalog diagnostics):
    SD201 an explicit root does not exist
    SD202 a folder cannot be read
    SD203 a symlink loops back to a folder above it (not followed)
    SD204 scanning stopped at the depth limit
    SD205 validation failed unexpectedly for a skill (a bug; the skill still shows)
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skilldeck.core.cache import (
    RACY_NS,
    DiagRow,
    MetadataCache,
    Record,
    diagnostics_from_rows,
    diagnostics_to_rows,
    skill_from_record,
    skill_to_record,
)
from skilldeck.core.config import Settings, bundled_skills_dir, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source
from skilldeck.core.parse import SKILL_FILE, frontmatter_hash, list_resources, parse_path
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

    def stat(self) -> os.stat_result:
        if self.md_stat is not None:
            return self.md_stat
        if self.md_entry is not None:
            return self.md_entry.stat()
        return os.stat(self.md_path)


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


def _scan_root(root: str, diags: list[Diagnostic]) -> list[_Found]:
    """Every skill folder under ``root``, real folders before symlinked aliases."""
    found: list[_Found] = []
    root_real = os.path.realpath(root)
    visited = {root_real}
    pending: list[tuple[str, str, int]] = [(root, root_real, 0)]
    links: list[tuple[str, str, int]] = []
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
                real_md = real + os.sep + md.name
                if md.is_symlink():
                    real_md = os.path.realpath(md.path)
                found.append(_Found(folder, real_md, md, md.path, entries, None, md.name))
                continue
        subdirs: list[tuple[str, str, int]] = []
        entries.sort(key=lambda e: e.name)
        for entry in entries:
            name = entry.name
            if name[0] == "." or name[0] == "_":
                continue
            try:
                if not entry.is_dir():
                    continue
            except OSError:
                continue
            if depth + 1 > MAX_SCAN_DEPTH:
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
                if target == real or real.startswith(target.rstrip(os.sep) + os.sep):
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
            child_real = real + os.sep + name
            if child_real in visited:
                continue
            visited.add(child_real)
            # most folders here are skills: one lstat tells, without listing the folder
            md_path = entry.path + os.sep + SKILL_FILE
            try:
                md_stat = os.lstat(md_path)
            except OSError:
                md_stat = None
            if md_stat is not None and stat.S_ISREG(md_stat.st_mode):
                found.append(
                    _Found(
                        entry.path, child_real + os.sep + SKILL_FILE, None, md_path, None, md_stat
                    )
                )
                continue
            subdirs.append((entry.path, child_real, depth + 1))
        if subdirs:
            subdirs.reverse()
            pending.extend(subdirs)
    found.sort(key=lambda f: f.folder)
    return found


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
    by_real: dict[str, tuple[tuple[int, int], int]] = {}
    ranked: list[tuple[tuple[int, int, int], Skill, str]] = []
    counter = [0]

    def tick() -> None:
        counter[0] += 1
        if progress is not None and counter[0] % _PROGRESS_EVERY == 0:
            progress(counter[0])

    for index, root in enumerate(roots):
        root_dir, single = _root_target(root.path)
        if single is None and not os.path.isdir(root_dir):
            if root.source is Source.EXPLICIT:
                catalog.diagnostics.append(
                    Diagnostic("SD201", Severity.WARNING, "root folder does not exist", root.path)
                )
            continue
        found = single if single is not None else _scan_root(root_dir, catalog.diagnostics)
        if not found:
            continue
        cache = MetadataCache.load(root_dir, validator=validator_key) if use_cache else None
        root_path = Path(root_dir)
        paths = _Paths(root_dir, root_path)
        skills = _load_root(found, paths, root.source, cache, validate, tick)
        if cache is not None:
            cache.save()
        for registry_path in root_registry_paths(root_path):
            registry = Registry.load(registry_path)
            catalog.diagnostics.extend(registry.diagnostics)
            registry.apply(skills)
        rank = root.source.rank
        for position, (item, skill) in enumerate(zip(found, skills, strict=True)):
            key = (rank, index, -position)
            previous = by_real.get(item.real_md)
            if previous is not None:
                if previous[0] >= key[:2]:
                    continue
                ranked[previous[1]] = (ranked[previous[1]][0], ranked[previous[1]][1], "")
            by_real[item.real_md] = (key[:2], len(ranked))
            ranked.append((key, skill, item.real_md))
    kept = [(key, skill) for key, skill, real in ranked if real]
    kept.sort(key=lambda pair: (pair[0][0], pair[0][1], -pair[0][2]))
    catalog.skills = [skill for _key, skill in kept]
    global_registry = Registry.load(settings.registry_file)
    catalog.diagnostics.extend(global_registry.diagnostics)
    global_registry.apply(catalog.skills)
    copies = _resolve_shadows(kept)
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


def _from_cache(
    item: _Found, paths: _Paths, source: Source, cache: MetadataCache
) -> tuple[Skill, bool] | None:
    """The cached skill for ``item`` (and whether its validation was cached too), or None."""
    if item.md_entry is None and item.md_stat is None:
        return None
    try:
        st = item.stat()
    except OSError:
        return None
    record = cache.get(item.real_md, item.md_path, st.st_mtime_ns, st.st_size)
    if record is None:
        return None
    return _cached_skill(record, item, paths, source, cache)


def _cached_skill(
    record: Record, item: _Found, paths: _Paths, source: Source, cache: MetadataCache
) -> tuple[Skill, bool]:
    """A skill rebuilt from its cache record; True when its validation was cached too."""
    base_dir = paths.folder(item.folder)
    md_path = _child(base_dir, item.md_name)
    skill = skill_from_record(
        record, md_path, base_dir, source, paths.root_path, paths.rel_id(item.folder)
    )
    rows = cache.get_validated(item.real_md)
    if rows is None:
        return skill, False
    skill.diagnostics = diagnostics_from_rows(rows, md_path, item.md_path)
    return skill, True


_BYTE_CODES = frozenset({"SD101", "SD102", "SD107", "SD108", "SD110", "SD114", "SD117", "SD199"})
"""Parse findings that depend on more than the frontmatter bytes: always parse again."""


def _same_frontmatter(
    item: _Found, paths: _Paths, source: Source, cache: MetadataCache
) -> tuple[Skill, bool] | None:
    """A changed file whose frontmatter bytes are unchanged (touched, body edited): reuse."""
    old = cache.stale(item.real_md, item.md_path)
    if old is None or any(row[0] in _BYTE_CODES for row in old[21]):
        return None
    current = frontmatter_hash(item.md_path)
    if current is None or current[0] != old[3]:
        return None
    record = cache.refresh(item.real_md, old, current[2], current[1])
    return _cached_skill(record, item, paths, source, cache)


def _parse_item(item: _Found, paths: _Paths, source: Source) -> Skill:
    md_obj = (
        _child(paths.folder(item.folder), item.md_name)
        if item.md_entry is not None or item.md_stat is not None
        else None
    )
    return parse_path(
        item.md_path,
        source=source,
        root=paths.root_path,
        rel_id=paths.rel_id(item.folder),
        path_obj=md_obj,
    )


_RACY_NS = RACY_NS


def _resources(item: _Found, cache: MetadataCache | None) -> tuple[tuple[str, ...], bool]:
    """The skill folder's resource listing, from the cache while the folder is unchanged.

    Only listings of folders without visible subfolders are cached (a change inside a
    subfolder does not touch the skill folder's mtime), and never for a folder modified in
    the last two seconds (mtime granularity).
    """
    if item.entries is not None or cache is None:
        return list_resources(item.folder, item.entries)
    try:
        mtime = os.stat(item.folder).st_mtime_ns
        hit = cache.get_resources(item.real_md, mtime)
        if hit is not None:
            return hit
        with os.scandir(item.folder) as it:
            entries = list(it)
    except OSError:
        return list_resources(item.folder, None)
    listing = list_resources(item.folder, entries)
    if mtime < time.time_ns() - _RACY_NS and _flat(entries):
        cache.put_resources(item.real_md, mtime, listing)
    return listing


def _flat(entries: list[os.DirEntry[str]]) -> bool:
    """True when no entry is a folder that :func:`list_resources` would descend into."""
    for entry in entries:
        if entry.name[0] in "._":
            continue
        try:
            if entry.is_dir():
                return False
        except OSError:
            return False
    return True


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


def _load_root(
    found: list[_Found],
    paths: _Paths,
    source: Source,
    cache: MetadataCache | None,
    validate: _Validate | None,
    tick: Callable[[], None],
) -> list[Skill]:
    """Skills for every found SKILL.md: cached, else parsed (in parallel when worth it)."""
    loaded: list[Skill | None] = [None] * len(found)
    validated = [False] * len(found)
    misses: list[int] = []
    for i, item in enumerate(found):
        hit = _from_cache(item, paths, source, cache) if cache is not None else None
        if hit is None:
            misses.append(i)
        else:
            loaded[i], validated[i] = hit
    parsed = _parse_parallel([found[i] for i in misses], paths, source, validate)
    if parsed is not None:
        for i, (record, rows) in zip(misses, parsed, strict=True):
            item = found[i]
            base_dir = paths.folder(item.folder)
            md_path = _child(base_dir, item.md_name)
            skill = skill_from_record(
                record, md_path, base_dir, source, paths.root_path, paths.rel_id(item.folder)
            )
            if cache is not None and not any(d.code == "SD110" for d in skill.diagnostics):
                cache.put(item.real_md, skill)
            if rows is not None:
                skill.diagnostics = diagnostics_from_rows(rows, md_path, item.md_path)
                validated[i] = True
                if cache is not None:
                    cache.put_validated(item.real_md, skill.diagnostics)
            loaded[i] = skill
    else:
        for i in misses:
            item = found[i]
            if cache is not None:
                reused = _same_frontmatter(item, paths, source, cache)
                if reused is not None:
                    loaded[i], validated[i] = reused
                    continue
            skill = _parse_item(item, paths, source)
            if cache is not None and not any(d.code == "SD110" for d in skill.diagnostics):
                cache.put(item.real_md, skill)
            loaded[i] = skill
    skills: list[Skill] = []
    for i, item in enumerate(found):
        done = loaded[i]
        assert done is not None
        done.resources, done.resources_truncated = _resources(item, cache)
        if (
            validate is not None
            and not validated[i]
            and _run_validation(done, validate)
            and cache is not None
        ):
            cache.put_validated(item.real_md, done.diagnostics)
        skills.append(done)
        tick()
    return skills


PARALLEL_MIN = 1500
"""Parse in worker processes when at least this many files miss the cache."""

_WORK: list[tuple[str, str]] = []
_WORK_CONTEXT: list[tuple[Source, Path, _Validate | None]] = []


def _parallel_ok(count: int) -> bool:
    if count < PARALLEL_MIN or os.environ.get("SKILLDECK_NO_PARALLEL"):
        return False
    if (os.cpu_count() or 1) < 2 or threading.active_count() != 1:
        return False  # forking a threaded process is unsafe
    return "fork" in multiprocessing.get_all_start_methods()


def _parse_chunk(bounds: tuple[int, int]) -> list[tuple[Record, tuple[DiagRow, ...] | None]]:
    """Worker side (forked): parse and validate a slice of :data:`_WORK`."""
    source, root_path, validate = _WORK_CONTEXT[0]
    out: list[tuple[Record, tuple[DiagRow, ...] | None]] = []
    for md_path, rel_id in _WORK[bounds[0] : bounds[1]]:
        skill = parse_path(md_path, source=source, root=root_path, rel_id=rel_id)
        record = skill_to_record(skill, time.time_ns())
        rows = None
        if validate is not None:
            try:
                rows = diagnostics_to_rows(validate(skill))
            except Exception:  # validated again (and reported) in the parent
                rows = None
        out.append((record, rows))
    return out


def _parse_parallel(
    items: list[_Found], paths: _Paths, source: Source, validate: _Validate | None
) -> list[tuple[Record, tuple[DiagRow, ...] | None]] | None:
    """Parse ``items`` in forked worker processes; None when not worth it or not possible."""
    if not _parallel_ok(len(items)):
        return None
    workers = min(os.cpu_count() or 2, 8)
    _WORK[:] = [(item.md_path, paths.rel_id(item.folder)) for item in items]
    _WORK_CONTEXT[:] = [(source, paths.root_path, validate)]
    step = max(200, len(items) // (workers * 4) + 1)
    chunks = [(start, min(start + step, len(items))) for start in range(0, len(items), step)]
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.map(_parse_chunk, chunks)
    except Exception:  # no processes available, pickling trouble…: parse here instead
        return None
    finally:
        _WORK.clear()
        _WORK_CONTEXT.clear()
    return [pair for chunk in results for pair in chunk]


def _resolve_shadows(kept: list[tuple[tuple[int, int, int], Skill]]) -> set[int]:
    """Mark every skill that loses its name to a higher-precedence one.

    Returns:
        The ids of bundled skills that are identical copies of their winner (Skilldeck
        installed and also run from its own repository): one skill, to be listed once.
    """
    copies: set[int] = set()
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
