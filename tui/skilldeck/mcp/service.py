"""What the MCP server does, independent of the protocol: the five tools and resources.

:class:`SkillService` owns the catalog (kept fresh from disk), the search index, the tool
registry and the mapping from client connections to sessions in the shared store. Every
tool returns a :class:`ToolOutput` (structured data plus the text a model reads) or raises
:class:`~skilldeck.core.errors.SkilldeckError`. Nothing here imports the MCP SDK, so the
logic is testable and reusable; :mod:`skilldeck.mcp.server` adapts it to the protocol.

Thread safety: tool calls run in worker threads. Catalog refreshes and the index build
hold ``_lock``; readers take a consistent snapshot (catalog, index) under it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Skill

if TYPE_CHECKING:
    from skilldeck.core.loader import Listing
    from skilldeck.core.search import SearchIndex
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.tools import ToolRegistry

INSTRUCTIONS_BUDGET = 2000
INSTRUCTIONS_SKILLS = 40
QUICK_INDEX_MIN = 2000
SESSION_MODES = ("strict", "approval", "permissive")
_INLINE_CHECK_MAX_SECONDS = 0.005
_RESOURCE_PAGE = 500

INTRO = (
    "Skilldeck serves Agent Skills: folders of instructions for specific tasks. Before a "
    "task, call search_skills with a few words describing it (or pick from the listing "
    "below), then load_skill to read the skill's instructions and follow them. Files the "
    "instructions mention are read with read_skill_resource. Call check_tool before using "
    "a tool the operator may restrict; requires_approval means wait for the operator."
)


@dataclass(slots=True)
class ToolOutput:
    """A successful tool result.

    Attributes:
        data: Structured content (JSON-ready object).
        text: What a model reads.
        blob: Optional binary payload ``(uri, mime, bytes)`` for an embedded resource.
    """

    data: dict[str, Any]
    text: str
    blob: tuple[str, str, bytes] | None = None


@dataclass(slots=True)
class ResourceContent:
    """One ``skill://`` resource read: text or bytes with a media type."""

    uri: str
    mime: str
    text: str | None = None
    data: bytes | None = None


@dataclass(slots=True)
class _Snapshot:
    """Stat results of everything whose change means the catalog must be rebuilt."""

    stats: dict[str, tuple[int, int]] = field(default_factory=dict)

    @staticmethod
    def stat(path: str) -> tuple[int, int]:
        try:
            info = os.stat(path)
        except OSError:
            return (-1, -1)
        return (info.st_mtime_ns, info.st_size)


def _baseline(catalog: Catalog, extra: list[Path]) -> dict[str, tuple[int, int]]:
    """What to watch and its current state.

    SKILL.md files take the (mtime, size) discovery recorded, so no extra stat is paid at
    start-up; folders that gain new skills (roots, parents of skill folders) and the
    registry and tools files are stat'ed now.
    """
    stats: dict[str, tuple[int, int]] = {}
    folders: dict[str, None] = {}
    for root, _source in catalog.roots:
        folders[str(root)] = None
        folders[os.path.join(root, "registry.json")] = None
        folders[os.path.join(root, "skills", "registry.json")] = None
    for skill in catalog.skills:
        if skill.mtime_ns or skill.size:
            stats[str(skill.path)] = (skill.mtime_ns, skill.size)
        else:
            stats[str(skill.path)] = _Snapshot.stat(str(skill.path))
        folders[str(skill.base_dir.parent)] = None
    for path in extra:
        folders[str(path)] = None
    for folder in folders:
        stats.setdefault(folder, _Snapshot.stat(folder))
    return stats


class SkillService:
    """The server's state and the implementation of its tools.

    Args:
        settings: Loaded settings.
        roots: Explicit skill roots (``--root``), or None for the default roots.
        profile: Validation profile used by discovery.
        mode: Policy mode for sessions this server creates (default: settings).
        session_id: Join this existing session instead of creating one per client.
        cwd: Working directory for project-level discovery.
        catalog_loader: Replaces discovery (benchmarks, tests); default
            :func:`skilldeck.core.discovery.load_catalog`.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown mode; NOT_FOUND for an unknown or
            ended ``session_id``.
    """

    def __init__(
        self,
        settings: Settings,
        roots: list[Path] | None = None,
        *,
        profile: str = "default",
        mode: str | None = None,
        session_id: str | None = None,
        cwd: Path | None = None,
        catalog_loader: Callable[[], Catalog] | None = None,
    ) -> None:
        self.settings = settings
        self.roots = roots
        self.profile = profile
        self.cwd = cwd
        self.mode = mode or settings.session_mode
        if self.mode not in SESSION_MODES:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"unknown session mode {self.mode!r} (choose from {', '.join(SESSION_MODES)})",
            )
        self._catalog_loader = catalog_loader
        self._lock = threading.RLock()
        self.index_lock = threading.RLock()
        self._refresh_lock = threading.Lock()
        self._pending_changes: list[tuple[list[Skill], list[Skill]]] = []
        self._listings: dict[tuple[int, int], Listing] = {}
        self._session_lock = threading.Lock()
        self._catalog: Catalog = Catalog()
        self._visible: list[Skill] = []
        self._by_name: dict[str, Skill] = {}
        self._index: SearchIndex | None = None
        self._semantic_ready = False
        self._bodies_ready = False
        self._index_generation = -1
        self._tool_registry: ToolRegistry | None = None
        self._store: SessionStore | None = None
        self._snapshot = _Snapshot()
        self._watch: list[str] = []
        self._scan_seconds = 0.0
        self._last_check = 0.0
        self.generation = 0
        self.fixed_session = session_id
        self._sessions: dict[str, str] = {}
        self._created: list[str] = []
        self._closed = False
        if session_id is not None:
            self._join(session_id)
        self._reload()

    # ------------------------------------------------------------------ catalog state

    def _load_catalog(self) -> Catalog:
        if self._catalog_loader is not None:
            return self._catalog_loader()
        from skilldeck.core.discovery import load_catalog

        return load_catalog(self.roots, self.settings, profile=self.profile, cwd=self.cwd)

    def _reload(self) -> None:
        """Rediscover the skills and reset what depends on them."""
        catalog = self._load_catalog()
        visible = [s for s in catalog.active() if s.visible_to_models]
        extra = [self.settings.registry_file, self.settings.tools_path]
        snapshot = _Snapshot(_baseline(catalog, extra))
        watch = list(snapshot.stats)
        sample = watch[:: max(1, len(watch) // 64)]
        started = time.perf_counter()
        for path in sample:
            _Snapshot.stat(path)
        scan = (time.perf_counter() - started) * len(watch) / max(1, len(sample))
        with self._lock:
            previous = self._visible
            self._catalog = catalog
            self._visible = visible
            self._by_name = {s.name: s for s in catalog.active()}
            self._watch = watch
            self._snapshot = snapshot
            self._scan_seconds = scan
            self._last_check = time.monotonic()
            self._tool_registry = None
            self._pending_changes.append((previous, visible))
            self._listings.clear()
            self.generation += 1

    @property
    def catalog(self) -> Catalog:
        """The current catalog."""
        return self._catalog

    @property
    def visible(self) -> list[Skill]:
        """Skills a model may see, sorted by name."""
        return self._visible

    def changed_on_disk(self) -> bool:
        """True when a watched file or folder differs from the last snapshot."""
        with self._lock:
            watch, snapshot = self._watch, self._snapshot
        started = time.perf_counter()
        changed = any(_Snapshot.stat(p) != snapshot.stats.get(p) for p in watch)
        self._scan_seconds = time.perf_counter() - started
        self._last_check = time.monotonic()
        return changed

    @property
    def scan_seconds(self) -> float:
        """How long the last change check took (drives how often to check)."""
        return self._scan_seconds

    def refresh(self, *, inline: bool = False) -> bool:
        """Reload the catalog when skills changed on disk.

        Args:
            inline: Called on a request path: only scan when a scan is cheap (small
                catalogs); large catalogs rely on the background poll.

        Returns:
            True when the catalog was reloaded.
        """
        if inline and self._scan_seconds > _INLINE_CHECK_MAX_SECONDS:
            return False
        with self._refresh_lock:
            if not self.changed_on_disk():
                return False
            self._reload()
            return True

    def index(self) -> SearchIndex:
        """The search index over the visible skills, kept in step with the catalog.

        Small changes are applied incrementally (``update``/``remove``); a large change or
        the first use builds the index. Until :meth:`upgrade_index` has run, the index is
        lexical only (the embedding model can take a long time to load). Callers must hold
        :attr:`index_lock` while they use the returned index.
        """
        from skilldeck.core.search import SearchIndex

        with self.index_lock:
            with self._lock:
                visible, generation = self._visible, self.generation
                changes, self._pending_changes = self._pending_changes, []
            if self._index is not None and self._index_generation == generation:
                return self._index
            if self._index is not None and changes:
                before = {str(s.path): s for s in changes[0][0]}
                after = {str(s.path): s for s in visible}
                changed = [
                    s for p, s in after.items() if p not in before or _stamp(before[p]) != _stamp(s)
                ]
                removed = [p for p in before if p not in after]
                if len(changed) + len(removed) <= max(50, len(visible) // 10):
                    for path in removed:
                        self._index.remove(Path(path))
                    for skill in changed:
                        self._index.update(skill)
                    self._index_generation = generation
                    return self._index
            bodies = self._bodies_ready or len(visible) < QUICK_INDEX_MIN
            semantic = self.settings.semantic and self._semantic_ready
            self._index = SearchIndex.build(
                list(visible), bodies=bodies, settings=self.settings, semantic=semantic
            )
            self._index_generation = generation
            return self._index

    def upgrade_index(self, attempts: int = 3) -> bool:
        """Complete the index in the background while searches use what exists.

        A large catalog is first indexed from metadata only (fast); this adds the bodies,
        then the embedding signal when the settings ask for it. Each richer index is built
        aside and swapped in. Returns True when a richer index was swapped in.
        """
        from skilldeck.core.search import SearchIndex

        stages = [] if len(self._visible) < QUICK_INDEX_MIN else [False]
        if self.settings.semantic:
            stages.append(True)
        for semantic in stages:
            for _ in range(attempts):
                self.index()
                with self._lock:
                    visible, generation = self._visible, self.generation
                full = SearchIndex.build(
                    list(visible), bodies=True, settings=self.settings, semantic=semantic
                )
                with self.index_lock:
                    if self._index_generation == generation and self.generation == generation:
                        self._index = full
                        self._bodies_ready = True
                        self._semantic_ready = self._semantic_ready or semantic
                        break
            else:
                return False
        return bool(stages)

    def tool_registry(self) -> ToolRegistry:
        """The tool registry (reloaded after the tools file changed)."""
        with self._lock:
            if self._tool_registry is None:
                from skilldeck.core.tools import ToolRegistry

                self._tool_registry = ToolRegistry.load(self.settings, cwd=self.cwd)
            return self._tool_registry

    def instructions(self, budget: int = INSTRUCTIONS_BUDGET) -> str:
        """The server instructions: how to use the tools plus a short skill listing.

        Only the first :data:`INSTRUCTIONS_SKILLS` skills (highest priority, then by name)
        are offered to the listing, so a large catalog costs no more than a small one;
        the closing line says how many more there are.
        """
        from skilldeck.core.loader import render_listing

        visible = self._visible
        total = len(visible)
        head = f"{INTRO}\n\n{total} skill{'s' if total != 1 else ''} available."
        if not total:
            return head
        chosen = sorted(visible, key=lambda s: (-s.priority, s.name))[:INSTRUCTIONS_SKILLS]
        listing = render_listing(chosen, budget=budget, fmt="markdown")
        text = listing.text
        if len(listing.included) < total:
            more = total - len(listing.included)
            lines = text.split("\n")
            if listing.omitted and lines[-1].startswith("(") and "left out" in lines[-1]:
                text = "\n".join(lines[:-1]).rstrip("\n")
            text += (
                f"\n\n{more} more skill{'s' if more != 1 else ''} not shown: call "
                "search_skills with the task, or list_skills for the full listing."
            )
        elif listing.shortened:
            text += "\n\nDescriptions are shortened; list_skills gives them in full."
        return f"{head}\n\n{text}"

    # ------------------------------------------------------------------ sessions

    def store(self) -> SessionStore:
        """The shared session store (opened on first use)."""
        with self._session_lock:
            if self._store is None:
                from skilldeck.core.sessions import SessionStore

                self._store = SessionStore(self.settings.sessions_db, settings=self.settings)
            return self._store

    def _join(self, session_id: str) -> None:
        try:
            session = self.store().get(session_id)
        except SkilldeckError as exc:
            if exc.code is ErrorCode.NOT_FOUND:
                raise SkilldeckError(
                    ErrorCode.NOT_FOUND, f"--session {session_id}: no such session"
                ) from exc
            raise
        if session.ended is not None:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"--session {session_id}: the session has ended"
            )

    def session_for(self, client_key: str, label: str = "") -> str:
        """The store session of one client connection, created on first use."""
        if self.fixed_session is not None:
            return self.fixed_session
        with self._session_lock:
            found = self._sessions.get(client_key)
            if found is not None:
                return found
        session = self.store().create(mode=self.mode, actor="agent", label=label or "mcp client")
        with self._session_lock:
            self._sessions.setdefault(client_key, session.id)
            self._created.append(session.id)
            return self._sessions[client_key]

    def end_client(self, client_key: str) -> None:
        """End the session created for a client that disconnected (joined ones stay)."""
        if self.fixed_session is not None:
            return
        with self._session_lock:
            session_id = self._sessions.pop(client_key, None)
            if session_id is None or session_id not in self._created:
                return
            self._created.remove(session_id)
        self.store().end(session_id, actor="agent")

    def close(self) -> None:
        """End the sessions this server created (joined ones stay open). Idempotent."""
        with self._session_lock:
            if self._closed:
                return
            self._closed = True
            created = list(self._created)
            store = self._store
        if store is None:
            return
        for session_id in created:
            with contextlib.suppress(Exception):
                store.end(session_id, actor="agent")
        with contextlib.suppress(Exception):
            closer = getattr(store, "close", None)
            if callable(closer):
                closer()

    # ------------------------------------------------------------------ lookups

    def _skill(self, name: str) -> Skill:
        """The winning skill named ``name`` for an agent; NOT_FOUND with suggestions."""
        skill = self._by_name.get(name)
        if skill is None:
            from skilldeck.core.loader import unknown_skill

            names = [s.name for s in self._visible]
            raise unknown_skill(name, names, " (search_skills finds skills by task)")
        if not skill.enabled:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"skill {name!r} is disabled by the governance registry",
                name=name,
            )
        if skill.frontmatter.get("disable-model-invocation") is True:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"skill {name!r} sets disable-model-invocation: only a person may load it",
                name=name,
            )
        return skill

    # ------------------------------------------------------------------ tools

    def search_skills(self, query: str, limit: int = 3) -> ToolOutput:
        """Agent-facing search (emits ``skill_selected`` through the search module)."""
        from skilldeck.core.search import agent_search

        if not query.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "query must not be blank")
        with self.index_lock:
            response = agent_search(self.index(), query, limit=limit, settings=self.settings)
        results = []
        for result in response.results:
            skill = result.skill
            results.append(
                {
                    "name": skill.name,
                    "description": skill.description,
                    "score": round(float(result.score), 4),
                    "confident": bool(result.confident),
                    "path": str(skill.path),
                }
            )
        confident = bool(response.confident) and bool(results)
        message = None
        if not results:
            message = f"No skill matches {query!r}."
        elif not confident:
            message = (
                f"No confident match for {query!r}: the closest skills are listed, but none "
                "clearly fits. Work without a skill unless one of them obviously applies."
            )
        elif getattr(response, "clustered", False):
            message = (
                "Several skills scored close together; read their descriptions before choosing."
            )
        data: dict[str, Any] = {
            "query": query,
            "results": results,
            "confident": confident,
            "clustered": bool(getattr(response, "clustered", False)),
            "total": int(getattr(response, "total", len(self._visible))),
            "message": message,
        }
        lines = [message] if message else []
        for i, item in enumerate(results, 1):
            flag = "" if item["confident"] else " (not confident)"
            lines.append(
                f"{i}. {item['name']} — score {item['score']:.2f}{flag}: {item['description']}"
            )
        if results and confident:
            lines.append(f"Load the best match with load_skill(name={results[0]['name']!r}).")
        return ToolOutput(data, "\n".join(lines))

    def list_skills(self, budget: int | None = None) -> ToolOutput:
        """The tier-1 listing within ``budget`` characters."""
        from skilldeck.core.loader import render_listing

        chosen = self.settings.prompt_char_budget if budget is None else budget
        with self._lock:
            visible, generation = self._visible, self.generation
            cached = self._listings.get((generation, chosen))
        if cached is None:
            cached = render_listing(visible, budget=chosen, fmt="xml")
            with self._lock:
                if self.generation == generation:
                    if len(self._listings) > 16:
                        self._listings.clear()
                    self._listings[(generation, chosen)] = cached
        listing = cached
        data = listing.to_dict()
        data["total"] = len(visible)
        text = listing.text or "No skills are available."
        if listing.omitted and "left out" not in text:
            text += f"\n({len(listing.omitted)} skills left out: {', '.join(listing.omitted)})"
        return ToolOutput(data, text)

    def load_skill(
        self, name: str, arguments: str = "", *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Tier 2: the skill's instructions; activates it in the client's session."""
        from skilldeck.core.loader import load_skill, record_load

        started = time.perf_counter()
        skill = self._skill(name)
        result = load_skill(skill, arguments, token_cap=self.settings.body_token_cap)
        availability = self._availability(skill)
        session_id = self.session_for(client_key)
        self.store().activate_skill(
            session_id, skill.name, list(skill.allowed_tools), actor="agent", arguments=arguments
        )
        latency_ms = (time.perf_counter() - started) * 1000
        record_load(skill, result, latency_ms, actor="agent", session=session_id, source="mcp")
        data = result.to_dict()
        data["allowed_tools"] = list(skill.allowed_tools)
        data["tools"] = availability
        data["session"] = session_id
        data["resources"] = list(skill.resources)
        notes: list[str] = []
        missing = list(availability.get("missing") or [])
        if missing:
            notes.append(
                f"Tools this skill needs that are not available here: {', '.join(missing)}."
            )
        notes.extend(f"Warning: {w}" for w in result.warnings)
        text = result.text
        if notes:
            text = text.rstrip("\n") + "\n\n[skilldeck]\n" + "\n".join(notes)
        return ToolOutput(data, text)

    def _availability(self, skill: Skill) -> dict[str, Any]:
        try:
            availability = self.tool_registry().availability(skill)
        except SkilldeckError as exc:
            return {"error": exc.to_dict()}
        return _as_dict(availability)

    def read_skill_resource(self, name: str, path: str, *, client_key: str = "stdio") -> ToolOutput:
        """Tier 3: one file from inside the skill folder."""
        from skilldeck.core.loader import read_and_record

        skill = self._skill(name)
        resource = read_and_record(
            skill, path, self.settings.resource_byte_cap, actor="agent", source="mcp"
        )
        data = resource.to_dict()
        uri = resource_uri(skill.name, resource.path)
        data["uri"] = uri
        if resource.binary:
            text = (
                f"{resource.path} is a binary file ({resource.mime}, {resource.size} bytes); "
                "its base64 content is in the structured result and the embedded resource."
            )
            return ToolOutput(data, text, blob=(uri, resource.mime, resource.data))
        return ToolOutput(data, resource.text or "")

    def check_tool(self, tool: str, *, client_key: str = "stdio") -> ToolOutput:
        """The session's authorization decision for ``tool``."""
        if not tool.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "tool must not be blank")
        session_id = self.session_for(client_key)
        decision = self.store().check(session_id, tool, actor="agent")
        data = _as_dict(decision)
        data.update(
            {
                "tool": tool,
                "session": session_id,
                "allowed": bool(decision.allowed),
                "requires_approval": bool(decision.requires_approval),
                "reason": str(decision.reason),
            }
        )
        if decision.allowed:
            text = f"{tool}: allowed ({decision.reason})."
        elif decision.requires_approval:
            text = (
                f"{tool}: requires approval ({decision.reason}). The request is queued for "
                "the operator; do not use the tool until check_tool says allowed."
            )
        else:
            text = f"{tool}: denied ({decision.reason}). Do not use this tool."
        return ToolOutput(data, text)

    # ------------------------------------------------------------------ resources

    def resource_page(self, cursor: str | None) -> tuple[list[Skill], str | None]:
        """One page of skills for ``resources/list`` (their SKILL.md)."""
        start = 0
        if cursor:
            try:
                start = max(0, int(cursor))
            except ValueError as exc:
                raise SkilldeckError(ErrorCode.INVALID_PARAM, f"bad cursor {cursor!r}") from exc
        skills = self._visible[start : start + _RESOURCE_PAGE]
        following = start + _RESOURCE_PAGE
        return skills, (str(following) if following < len(self._visible) else None)

    def complete(self, argument: str, prefix: str, known: dict[str, str]) -> list[str]:
        """Completions of a ``skill://`` template argument: skill names or file paths."""
        if argument == "name":
            return [s.name for s in self._visible if s.name.startswith(prefix)]
        if argument == "path":
            skill = self._by_name.get(known.get("name", ""))
            if skill is None or not skill.enabled:
                return []
            files = [skill.path.name, *skill.resources]
            return [f for f in files if f.startswith(prefix)]
        return []

    def read_uri(self, uri: str) -> ResourceContent:
        """Read ``skill://{name}/SKILL.md`` or ``skill://{name}/{path}``."""
        from urllib.parse import unquote

        from skilldeck.core.loader import read_and_record
        from skilldeck.core.parse import read_source

        prefix = "skill://"
        if not uri.startswith(prefix):
            raise SkilldeckError(ErrorCode.INVALID_PARAM, f"not a skill:// URI: {uri!r}")
        name, sep, rel = uri[len(prefix) :].partition("/")
        name, rel = unquote(name), unquote(rel)
        if not name or not sep or not rel:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"expected skill://NAME/PATH, got {uri!r}"
            )
        skill = self._skill(name)
        if rel.lower() == "skill.md":
            return ResourceContent(uri, "text/markdown", text=read_source(skill))
        resource = read_and_record(
            skill, rel, self.settings.resource_byte_cap, actor="agent", source="mcp-resource"
        )
        if resource.binary:
            return ResourceContent(uri, resource.mime, data=resource.data)
        return ResourceContent(uri, resource.mime, text=resource.text or "")


def _stamp(skill: Skill) -> tuple[int, int, str, bool]:
    return (skill.mtime_ns, skill.size, skill.content_hash, skill.enabled)


def resource_uri(name: str, rel_path: str) -> str:
    """The ``skill://`` URI of a file inside a skill."""
    from urllib.parse import quote

    return f"skill://{quote(name, safe='')}/{quote(rel_path, safe='/')}"


def _as_dict(value: Any) -> dict[str, Any]:
    """JSON-ready dict of a core result object (``to_dict`` or dataclass fields)."""
    if value is None:
        return {}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        if isinstance(result, dict):
            return result
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"value": str(value)}


def log(message: str) -> None:
    """One diagnostic line on stderr (stdout carries the protocol)."""
    print(f"skilldeck serve: {message}", file=sys.stderr, flush=True)
