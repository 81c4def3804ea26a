"""What the MCP server does, independent of the protocol: the five tools and resources.

:class:`SkillService` holds a :class:`~skilldeck.core.workspace.Workspace` (the catalog,
kept fresh from disk, the search index and the tool registry) and maps client
connections to sessions in the shared store. Every
tool returns a :class:`ToolOutput` (structured data plus the text a model reads) or raises
:class:`~skilldeck.core.errors.SkilldeckError`. Nothing here imports the MCP SDK, so the
logic is testable and reusable; :mod:`skilldeck.mcp.server` adapts it to the protocol.

Thread safety: tool calls run in worker threads; the workspace swaps in new state and
searches under its lock, so readers see a consistent snapshot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Skill
from skilldeck.core.safe_text import for_terminal, is_safe_name
from skilldeck.core.workspace import Workspace
from skilldeck.mcp.client_sessions import ClientSessions
from skilldeck.mcp.log import log
from skilldeck.mcp.toolset_mounts import ToolsetMounts, call_output, mount_notes

if TYPE_CHECKING:
    from skilldeck.core.loader import Listing
    from skilldeck.core.search import SearchIndex
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.store import LocalStore
    from skilldeck.core.tools import ToolRegistry

INSTRUCTIONS_BUDGET = 2000
INSTRUCTIONS_SKILLS = 40
QUICK_INDEX_MIN = 2000
SESSION_MODES = ("strict", "approval", "permissive")
_INLINE_CHECK_MAX_SECONDS = 0.005
_RESOURCE_PAGE = 500

T = TypeVar("T")

INTRO = (
    "Skilldeck serves Agent Skills: folders of instructions for specific tasks. Before a "
    "task, call search_skills with a few words describing it (or pick from the listing "
    "below), then load_skill to read the skill's instructions and follow them. Files the "
    "instructions mention are read with read_skill_resource. Call check_tool before using "
    "a tool the operator may restrict; requires_approval means wait for the operator."
)


SKILLS_OFF = (
    "Skills are turned off on this server (feature flag skills_v1 is off): no skill is "
    "listed or loaded."
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


class SkillService:
    """The server's state and the implementation of its tools.

    The skills, their search index and the tool registry are a
    :class:`~skilldeck.core.workspace.Workspace`'s; the service adds sessions and the
    tools' answers. The index is loaded (or built) before the server says it is ready.

    Args:
        settings: Loaded settings.
        roots: Explicit skill roots (``--root``), or None for the default roots.
        profile: Validation profile used by discovery.
        mode: Policy mode for sessions this server creates (default: settings).
        session_id: Join this existing session instead of creating one per client.
        cwd: Working directory for project-level discovery.
        store: The local store (default: the one under ``SKILLDECK_HOME``).

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
        store: LocalStore | None = None,
    ) -> None:
        self.settings = settings
        self.mode = mode or settings.session_mode
        if self.mode not in SESSION_MODES:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"unknown session mode {self.mode!r} (choose from {', '.join(SESSION_MODES)})",
            )
        self.workspace = Workspace(
            settings, roots, profile=profile, cwd=cwd, store=store, watch=True
        )
        for notice in self.workspace.notices:
            log(notice)
        self._listings: dict[tuple[int, int], Listing] = {}
        self.sessions = ClientSessions(settings, self.mode, session_id)
        self.mounts = ToolsetMounts()
        self.workspace.discover()

    # ------------------------------------------------------------------ catalog state

    @property
    def catalog(self) -> Catalog:
        """The current catalog."""
        return self.workspace.catalog

    @property
    def visible(self) -> list[Skill]:
        """Skills a model may see, sorted by name (none when ``skills_v1`` is off)."""
        if not self.settings.skills_v1:
            return []
        return self.workspace.visible_to_models()

    def _require_skills(self) -> None:
        """PERMISSION_DENIED ``skills_disabled`` when the ``skills_v1`` flag is off."""
        if not self.settings.skills_v1:
            raise SkilldeckError(ErrorCode.PERMISSION_DENIED, SKILLS_OFF, reason="skills_disabled")

    @property
    def generation(self) -> int:
        """Bumped whenever the catalog was discovered again."""
        return self.workspace.generation

    @property
    def index_lock(self) -> threading.RLock:
        """Hold while using an index returned by :meth:`index`."""
        return self.workspace.lock

    @property
    def scan_seconds(self) -> float:
        """How long the last change check took (drives how often to check)."""
        return self.workspace.scan_seconds

    def changed_on_disk(self) -> bool:
        """True when a watched file or folder differs from the last discovery."""
        return self.workspace.changed_on_disk()

    def refresh(self, *, inline: bool = False) -> bool:
        """Discover again when skills changed on disk.

        Args:
            inline: Called on a request path: only scan when a scan is cheap (small
                catalogs); large catalogs rely on the background poll.

        Returns:
            True when the catalog was reloaded.
        """
        if inline and self.workspace.scan_seconds > _INLINE_CHECK_MAX_SECONDS:
            return False
        return self.workspace.refresh_if_changed()

    def index(self) -> SearchIndex:
        """The search index over the visible skills, kept in step with the catalog.

        Callers must hold :attr:`index_lock` while they use the returned index.
        """
        return self.workspace.index("visible")

    def upgrade_index(self) -> bool:
        """Add the embedding signal when the settings ask for it (slow: a background
        thread). Returns True when it was added."""
        if not self.settings.semantic:
            return False
        return self.workspace.enable_semantic("visible")

    def tool_registry(self) -> ToolRegistry:
        """The tool registry (reloaded after the tools file changed)."""
        return self.workspace.registry()

    def instructions(self, budget: int = INSTRUCTIONS_BUDGET) -> str:
        """The server instructions: how to use the tools plus a short skill listing.

        Only the first :data:`INSTRUCTIONS_SKILLS` skills (highest priority, then by name)
        are offered to the listing, so a large catalog costs no more than a small one;
        the closing line says how many more there are.
        """
        from skilldeck.core.loader import render_listing

        if not self.settings.skills_v1:
            return f"{INTRO}\n\n{SKILLS_OFF}"
        visible = self.visible
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
        """The shared session store (see :meth:`ClientSessions.store`)."""
        return self.sessions.store()

    def _session_call(self, action: Callable[[], T]) -> T:
        return self.sessions.call(action)

    def session_for(self, client_key: str, label: str = "") -> str:
        """The store session of one client connection, created on first use."""
        return self.sessions.session_for(client_key, label)

    def end_client(self, client_key: str) -> None:
        """Drop a client that disconnected: its mounted tools and the session created for
        it (joined ones stay)."""
        self.mounts.drop(client_key)
        self.sessions.end(client_key)

    def close(self) -> None:
        """End the sessions this server created (joined ones stay open). Idempotent."""
        self.sessions.close()

    # ------------------------------------------------------------------ lookups

    def _skill(self, name: str) -> Skill:
        """The winning skill named ``name`` for an agent; NOT_FOUND with suggestions.

        INVALID_PARAM for a name no skill can have (control characters, too long), before
        any lookup, so it never reaches messages, logs or the audit.
        """
        from skilldeck.core.sessions import SKILL_NAME_MAX, check_name

        check_name(name, "skill", SKILL_NAME_MAX)
        self._require_skills()
        skill = self.workspace.by_name(name)
        if skill is None:
            from skilldeck.core.loader import unknown_skill

            names = [s.name for s in self.visible]
            raise unknown_skill(name, names, " (search_skills finds skills by task)")
        if not skill.enabled:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"skill {name!r} is disabled by the governance registry",
                name=name,
            )
        if not skill.valid:
            codes = sorted({d.code for d in skill.errors})
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"skill {name!r} is invalid ({', '.join(codes)}): a model may not load it "
                "('skilldeck validate' says why)",
                name=name,
                diagnostics=codes,
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
        if not query.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "query must not be blank")
        self._require_skills()
        response = self.workspace.agent_search(query, limit, scope="visible")
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
            "total": int(getattr(response, "total", len(self.visible))),
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

    def skill_context(
        self, message: str, max_skills: int = 3, *, client_key: str = "stdio"
    ) -> ToolOutput:
        """What to inject for one user message (:func:`skilldeck.core.context.build_context`),
        ranking skills used recently in the client's session first among equal matches."""
        from skilldeck.core.context import build_context

        if not message.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "message must not be blank")
        answer = build_context(
            self.workspace, message, max_skills=max_skills, recent=self.recent_use(client_key)
        )
        text = answer.text or f"Nothing to inject: {answer.reason}."
        return ToolOutput(answer.to_dict(), text)

    def recent_use(self, client_key: str) -> dict[str, float]:
        """Skill name -> last use in the client's session ({} when sessions are unusable)."""
        from skilldeck.core.context import recent_use

        if not self.settings.skills_v1:
            return {}
        try:
            session_id = self.session_for(client_key)
            store = self.store()
            return recent_use(self._session_call(lambda: store.get(session_id)))
        except SkilldeckError:
            return {}

    def list_skills(self, budget: int | None = None) -> ToolOutput:
        """The tier-1 listing within ``budget`` characters."""
        from skilldeck.core.loader import render_listing

        chosen = self.settings.prompt_char_budget if budget is None else budget
        with self.workspace.lock:
            visible, generation = self.visible, self.generation
            cached = self._listings.get((generation, chosen))
        if cached is None:
            cached = render_listing(visible, budget=chosen, fmt="xml")
            with self.workspace.lock:
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
        session_id, problem = self._activate(skill, arguments, client_key)
        latency_ms = (time.perf_counter() - started) * 1000
        record_load(skill, result, latency_ms, actor="agent", session=session_id, source="mcp")
        data = result.to_dict()
        data["allowed_tools"] = list(skill.allowed_tools)
        data["tools"] = availability
        data["session"] = session_id
        data["resources"] = list(skill.resources)
        notes: list[str] = []
        if problem is not None:
            data["session_error"] = problem.to_dict()
            notes.append(
                f"This load was not recorded in a session ({problem.message}); check_tool "
                "cannot authorize this skill's tools until that is fixed."
            )
        missing = list(availability.get("missing") or [])
        if missing:
            notes.append(
                f"Tools this skill needs that are not available here: {', '.join(missing)}."
            )
        if skill.toolsets:
            data["toolsets"] = self._mount(skill, session_id, client_key)
            notes.extend(mount_notes(data["toolsets"]))
        notes.extend(f"Warning: {w}" for w in result.warnings)
        text = result.text
        if notes:
            text = text.rstrip("\n") + "\n\n[skilldeck]\n" + "\n".join(notes)
        return ToolOutput(data, text)

    def _activate(
        self, skill: Skill, arguments: str, client_key: str
    ) -> tuple[str | None, SkilldeckError | None]:
        """Activate ``skill`` in the client's session. When the store cannot be used the
        skill is still served: returns ``(None, the error)`` instead of failing the load
        (nothing is granted, so this fails closed)."""
        try:
            session_id = self.session_for(client_key)
            store = self.store()
            self._session_call(
                lambda: store.activate_skill(
                    session_id,
                    skill.name,
                    list(skill.allowed_tools),
                    actor="agent",
                    arguments=arguments,
                )
            )
        except SkilldeckError as exc:
            if exc.code is not ErrorCode.EXECUTION_ERROR:
                raise
            return None, exc
        return session_id, None

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
        _check_path(path)
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
        from skilldeck.core.sessions import check_name

        tool = check_name(tool, "tool")
        session_id = self.session_for(client_key)
        store = self.store()
        decision = self._session_call(lambda: store.check(session_id, tool, actor="agent"))
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

    def run_skill_script(
        self, name: str, script: str, args: list[str], *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Run an allowed script of a skill (``skills_exec`` on, allowlisted or approved for
        the client's session); every attempt is audited."""
        from skilldeck.core.execution import execute

        skill = self._skill(name)
        session_id = self.session_for(client_key)
        store = self.store()
        result = execute(
            self.settings, skill, script, list(args), store=store, session_id=session_id
        )
        result["session"] = session_id
        status = (
            "timed out and was killed"
            if result["timed_out"]
            else (f"exited with {result['exit_code']}")
        )
        lines = [f"{skill.name}/{result['script']} {status}."]
        for label in ("stdout", "stderr"):
            if result[label]:
                lines.append(f"--- {label} ---\n{result[label].rstrip(chr(10))}")
        if result["truncated"]:
            lines.append("[output was cut at 1 MB]")
        lines.extend(f"Warning: {w}" for w in result["warnings"])
        return ToolOutput(result, "\n".join(lines))

    def _mount(self, skill: Skill, session_id: str | None, client_key: str) -> dict[str, Any]:
        """Mount the allowed toolsets of ``skill`` for the client (see ``toolset_mounts``)."""
        store = self.store() if session_id is not None else None
        return self.mounts.mount(self.settings, skill, store, session_id, client_key)

    def mount_approved(self) -> set[str]:
        """Mount the toolsets that waited for approval and are allowed now; returns the
        clients whose tool list changed. Nothing is queued or audited for what still
        waits (the state is read with :func:`~skilldeck.core.execution.toolset_status`)."""
        from skilldeck.core.execution import toolset_status

        changed: set[str] = set()
        for client_key, name, session_id in self.mounts.waiting():
            skill = self.workspace.by_name(name)
            if skill is None:
                continue
            store = self.store() if session_id is not None else None
            states = {row.state for row in toolset_status(self.settings, skill, store, session_id)}
            if states & {"approved", "allowlist"}:
                before = self.mounts.names(client_key)
                self._mount(skill, session_id, client_key)
                if self.mounts.names(client_key) != before:
                    changed.add(client_key)
        return changed

    def call_toolset_tool(
        self, name: str, arguments: dict[str, Any], *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Call a mounted toolset tool ``skill-name.tool`` in a child process (checked and
        authorized again: an edited module is refused until approved again)."""
        from skilldeck.core.execution import call_toolset

        mounted = self.mounts.get(client_key, name)
        if mounted is None:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"no mounted toolset tool {name!r}")
        skill = self._skill(mounted.skill)
        session_id = self.session_for(client_key)
        result = call_toolset(
            self.settings,
            skill,
            mounted.spec,
            mounted.tool.name,
            arguments,
            store=self.store(),
            session_id=session_id,
        )
        return ToolOutput(*call_output(result))

    # ------------------------------------------------------------------ resources

    def resource_page(self, cursor: str | None) -> tuple[list[Skill], str | None]:
        """One page of skills for ``resources/list`` (their SKILL.md)."""
        start = 0
        if cursor:
            try:
                start = max(0, int(cursor)) if len(cursor) <= 20 else -1
            except ValueError:
                start = -1
            if start < 0:
                shown = for_terminal(repr(cursor[:40]))
                raise SkilldeckError(ErrorCode.INVALID_PARAM, f"bad cursor {shown}")
        visible = self.visible
        skills = visible[start : start + _RESOURCE_PAGE]
        following = start + _RESOURCE_PAGE
        return skills, (str(following) if following < len(visible) else None)

    def complete(self, argument: str, prefix: str, known: dict[str, str]) -> list[str]:
        """Completions of a ``skill://`` template argument: skill names or file paths."""
        if argument == "name":
            return [s.name for s in self.visible if s.name.startswith(prefix)]
        if argument == "path" and self.settings.skills_v1:
            skill = self.workspace.by_name(known.get("name", ""))
            if skill is None or not (skill.enabled and skill.valid):
                return []
            files = [skill.path.name, *skill.resources]
            return [f for f in files if f.startswith(prefix)]
        return []

    def read_uri(self, uri: str) -> ResourceContent:
        """Read ``skill://{name}/SKILL.md`` or ``skill://{name}/{path}``."""
        from urllib.parse import unquote

        from skilldeck.core.discovery.frontmatter import read_source
        from skilldeck.core.loader import read_and_record

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
        _check_path(rel)
        if rel.lower() == "skill.md":
            return ResourceContent(uri, "text/markdown", text=read_source(skill))
        resource = read_and_record(
            skill, rel, self.settings.resource_byte_cap, actor="agent", source="mcp-resource"
        )
        if resource.binary:
            return ResourceContent(uri, resource.mime, data=resource.data)
        return ResourceContent(uri, resource.mime, text=resource.text or "")


def _check_path(path: str) -> None:
    """INVALID_PARAM for a resource path with control characters or over 4096 characters
    (no file inside a skill has such a name; NUL would crash the OS call)."""
    if not is_safe_name(path, 4096):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            "path must be 1-4096 characters without control or bidirectional characters",
        )


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
