"""What the MCP server does, independent of the protocol: the five tools and resources.

:class:`SkillService` holds a :class:`~skilldeck.core.workspace.Workspace` (the catalog,
kept fresh from disk, the search index, the tool registry, the remote catalogs and the
write door every load, read, run and toolset call goes through) and maps client
connections to sessions in the shared store; what it adds is the MCP shaping. Every
tool returns a :class:`ToolOutput` (structured data plus the text a model reads) or raises
:class:`~skilldeck.core.errors.SkilldeckError`. Nothing here imports the MCP SDK, so the
logic is testable and reusable; :mod:`skilldeck.mcp.server` adapts it to the protocol.
The ``skill://`` resources are read in :mod:`skilldeck.mcp.resources`; the instructions
and search answers a model reads are written in :mod:`skilldeck.mcp.answers`.

Thread safety: tool calls run in worker threads; the workspace swaps in new state and
searches under its lock, so readers see a consistent snapshot.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skilldeck.core import execution, loader
from skilldeck.core.config import Settings
from skilldeck.core.context import build_context, recent_use
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.limits import AGENT_LIMIT
from skilldeck.core.model import Skill
from skilldeck.core.sessions import check_mode, check_name
from skilldeck.core.workspace import SessionRef, Workspace, check_lookup
from skilldeck.mcp import resources
from skilldeck.mcp.answers import (
    INSTRUCTIONS_BUDGET,
    SKILLS_OFF,
    agent_refusal,
    instructions_text,
    search_answer,
)
from skilldeck.mcp.answers import INSTRUCTIONS_SKILLS as INSTRUCTIONS_SKILLS
from skilldeck.mcp.answers import INTRO as INTRO
from skilldeck.mcp.client_sessions import ClientSessions
from skilldeck.mcp.log import log
from skilldeck.mcp.remote_answers import mark_remote_results, with_remotes
from skilldeck.mcp.resources import ResourceContent as ResourceContent
from skilldeck.mcp.resources import check_path
from skilldeck.mcp.resources import resource_uri as resource_uri
from skilldeck.mcp.toolset_mounts import ToolsetMounts, call_output, mount_notes

if TYPE_CHECKING:
    from skilldeck.core.execution import ScriptRun
    from skilldeck.core.loader import Listing, Resource
    from skilldeck.core.remote import Listing as RemoteListing
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.store import LocalStore

_INLINE_CHECK_MAX_SECONDS = 0.005

T = TypeVar("T")


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


RECENT_AUDIT_ROWS = 2000
"""Audit rows read to rank the skills offered in the server instructions by recent use."""


class SkillService:
    """The server's state and the implementation of its tools.

    The skills (local and remote), their search index, the tool registry and the write
    door are a :class:`~skilldeck.core.workspace.Workspace`'s; the service adds client
    sessions, mounted toolsets and the tools' answers. The index is loaded (or built)
    before the server says it is ready.

    Args:
        settings: Loaded settings.
        roots: Explicit skill roots (``--root``), or None for the default roots.
        profile: Validation profile used by discovery.
        mode: Policy mode for sessions this server creates (default: settings).
        session_id: Join this existing session instead of creating one per client.
        cwd: Working directory for project-level discovery.
        store: The local store (default: the one under ``SKILLDECK_HOME``).

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown mode, or while a skill is invalid
            with ``fail_on_invalid_skills`` on; NOT_FOUND for an unknown or ended
            ``session_id``.
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
        self.mode = check_mode(mode or settings.session_mode)
        self.workspace = Workspace(
            settings, roots, profile=profile, cwd=cwd, store=store, watch=True
        )
        for notice in self.workspace.notices:
            log(notice)
        self._listings: dict[tuple[int, int], Listing] = {}
        self._semantic = "pending" if settings.semantic else "off"
        self.sessions = ClientSessions(
            settings, self.mode, session_id, self.workspace.actions, self.workspace.telemetry
        )
        self.mounts = ToolsetMounts()
        self.workspace.discover()
        problem = self.workspace.invalid_problem()
        if problem is not None:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM, f"not serving: {problem}", reason="invalid_skills"
            )

    # ------------------------------------------------------------------ catalog state

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

    def refresh(self, *, inline: bool = False) -> bool:
        """Discover again when skills changed on disk.

        Args:
            inline: Called on a request path: only scan when a scan is cheap (small
                catalogs) and ``skills_refresh_on_call`` is on; otherwise the background
                poll picks changes up.

        Returns:
            True when the catalog was reloaded.
        """
        if inline and not self.settings.skills_refresh_on_call:
            return False
        if inline and self.workspace.scan_seconds > _INLINE_CHECK_MAX_SECONDS:
            return False
        return self.workspace.refresh_if_changed()

    def upgrade_index(self) -> bool:
        """Add the embedding signal when the settings ask for it (slow: a background
        thread; searches meanwhile answer lexically). Returns True when it was added."""
        if not self.settings.semantic:
            return False
        on = False
        try:
            on = self.workspace.enable_semantic("visible")
        finally:
            self._semantic = "on" if on else "unavailable"
        return on

    def semantic_state(self) -> str:
        """The embedding signal of searches: ``on``, ``pending`` (being added: answers
        are lexical meanwhile), ``off`` (not configured) or ``unavailable`` (it failed)."""
        if self.workspace.semantic("visible"):
            return "on"
        return "unavailable" if self._semantic == "on" else self._semantic

    def instructions(self, budget: int = INSTRUCTIONS_BUDGET) -> str:
        """The server instructions: how to use the tools plus a short skill listing
        (see :func:`~skilldeck.mcp.answers.instructions_text`)."""
        used = self.recent_loads() if self.settings.skills_v1 else {}
        return instructions_text(self.visible, budget, skills_v1=self.settings.skills_v1, used=used)

    def recent_loads(self, window: int = RECENT_AUDIT_ROWS) -> dict[str, int]:
        """Skill name -> loads among the last ``window`` audit rows of every session ({}
        when sessions are unusable)."""
        try:
            store = self.store()
            since = max(0, store.last_audit_id() - window)
            rows = self._session_call(lambda: store.audit(since_id=since))
        except SkilldeckError:
            return {}
        counts: dict[str, int] = {}
        for row in rows:
            if row.action == "activate":
                counts[row.subject] = counts.get(row.subject, 0) + 1
        return counts

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
        """The local skill ``name`` means for an agent (:meth:`Workspace.resolve` with
        ``for_model``): INVALID_PARAM, NOT_FOUND with the nearest names and where to look
        instead, or PERMISSION_DENIED with the reason a model may not load it."""
        check_lookup(name)
        self._require_skills()
        try:
            return self.workspace.resolve(name, for_model=True)
        except SkilldeckError as exc:
            raise _advised(exc) from None

    def skill_to_check(self, name: str) -> Skill:
        """The skill ``validate_skill`` / ``lint_skill`` check: the winner of that name,
        valid or not (finding why it is invalid is the point), unless it is hidden from
        models; else what :meth:`_skill` answers (a skill's id, NOT_FOUND, a refusal)."""
        check_lookup(name)
        self._require_skills()
        skill = self.workspace.by_name(name)
        return skill if skill is not None and not skill.hidden else self._skill(name)

    # ------------------------------------------------------------------ tools

    def search_skills(
        self, query: str, limit: int = AGENT_LIMIT, *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Agent-facing search over local and remote skills (emits ``skill_selected`` to
        the workspace's telemetry, with the client's session when sessions can be used);
        a remote result carries its remote, URI, digest and review state."""
        if not query.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "query must not be blank")
        self._require_skills()
        listing = self.workspace.remotes.listing()
        response = self.workspace.search(
            query,
            scope="visible",
            limit=limit,
            agent=True,
            tools=self._known_tools(),
            session=self._session_or_none(client_key),
            remotes=True,
        )
        total = len(self.visible) + (len(listing.documents) if listing is not None else 0)
        data, text = search_answer(query, response, total, self.semantic_state())
        output = ToolOutput(data, text)
        if listing is None:
            return output
        output.text += mark_remote_results(data["results"], listing)
        return with_remotes(output, listing)

    def _session_or_none(self, client_key: str) -> str | None:
        """The client's session, or None when skills v1 is off or sessions are unusable."""
        if not self.settings.skills_v1:
            return None
        try:
            return self.session_for(client_key)
        except SkilldeckError:
            return None

    def skill_context(
        self, message: str, max_skills: int = 3, *, client_key: str = "stdio"
    ) -> ToolOutput:
        """What to inject for one user message (:func:`skilldeck.core.context.build_context`),
        ranking skills used recently in the client's session first among equal matches; the
        skills injected in full are loaded into that session and the match is recorded
        for usage (``skill_selected``), as a search and a load by the agent are."""
        if not message.strip():
            raise SkilldeckError(ErrorCode.INVALID_PARAM, "message must not be blank")
        session_id = self._session_or_none(client_key)
        answer = build_context(
            self.workspace,
            message,
            max_skills=max_skills,
            recent=self.recent_use(client_key),
            session=None if session_id is None else self.sessions.ref(session_id),
        )
        text = answer.text or f"Nothing to inject: {answer.reason}."
        return ToolOutput(answer.to_dict(), text)

    def recent_use(self, client_key: str) -> dict[str, float]:
        """Skill name -> last use in the client's session ({} when sessions are unusable)."""
        if not self.settings.skills_v1:
            return {}
        try:
            session_id = self.session_for(client_key)
            store = self.store()
            return recent_use(self._session_call(lambda: store.get(session_id)))
        except SkilldeckError:
            return {}

    def list_skills(self, budget: int | None = None) -> ToolOutput:
        """The tier-1 listing within ``budget`` characters, remote skills included."""
        chosen = self.settings.prompt_char_budget if budget is None else budget
        listing = self._remote_listing()
        with self.workspace.lock:
            visible, generation = self.visible, self.workspace.generation
            documents = listing.documents if listing is not None else ()
            cached = None if documents else self._listings.get((generation, chosen))
        if cached is None:
            cached = loader.render_listing([*visible, *documents], budget=chosen, fmt="xml")
            with self.workspace.lock:
                if self.workspace.generation == generation and not documents:
                    if len(self._listings) > 16:
                        self._listings.clear()
                    self._listings[(generation, chosen)] = cached
        data = cached.to_dict()
        data["total"] = len(visible) + len(documents)
        text = cached.text or "No skills are available."
        if cached.omitted and "left out" not in text:
            text += f"\n({len(cached.omitted)} skills left out: {', '.join(cached.omitted)})"
        output = ToolOutput(data, text)
        return output if listing is None else with_remotes(output, listing)

    def _remote_listing(self) -> RemoteListing | None:
        """The remotes' listing (None without remotes, or with skills off)."""
        return self.workspace.remotes.listing() if self.settings.skills_v1 else None

    def load_skill(
        self, name: str, arguments: str = "", *, client_key: str = "stdio"
    ) -> ToolOutput:
        """Tier 2: the skill's instructions (a remote ``label:name`` only once approved as
        it is now), through the workspace's write door; activates it in the client's
        session. When the session store cannot be used the skill is still served, unrecorded
        (nothing is granted, so this fails closed)."""
        check_lookup(name)
        self._require_skills()
        session, problem = self._session_ref(client_key)
        try:
            loaded = self.workspace.actions.load(
                name, arguments, actor="agent", source="mcp", session=session
            )
        except SkilldeckError as exc:
            raise _advised(exc) from None
        problem = loaded.session_error or problem
        data, notes = self.workspace.actions.answer(loaded)
        skill = loaded.target.skill
        first: list[str] = []
        if problem is not None:
            data["session_error"] = problem.to_dict()
            first.append(
                f"This load was not recorded in a session ({problem.message}); check_tool "
                "cannot authorize this skill's tools until that is fixed."
            )
        if skill.toolsets and loaded.target.remote is None:
            data["toolsets"] = self._mount(skill, loaded.session, client_key)
            first.extend(mount_notes(data["toolsets"]))
        notes = first + notes
        text = data["text"]
        if notes:
            text = text.rstrip("\n") + "\n\n[skilldeck]\n" + "\n".join(notes)
        if loaded.target.remote is not None:
            data["text"] = text
        return ToolOutput(data, text)

    def _session_ref(self, client_key: str) -> tuple[SessionRef | None, SkilldeckError | None]:
        """The client's session to act in, or ``(None, why)`` when the store cannot be used."""
        try:
            session_id = self.session_for(client_key)
            return SessionRef(self.store(), session_id, self.sessions.call), None
        except SkilldeckError as exc:
            if exc.code is not ErrorCode.EXECUTION_ERROR:
                raise
            return None, exc

    def _known_tools(self) -> set[str] | None:
        """The tools this server knows (preset, tools file, cached MCP server answers), for
        ranking skills missing none first; None when the registry cannot be read."""
        try:
            return self.workspace.known_tools()
        except SkilldeckError:
            return None

    def read_skill_resource(
        self, name: str, path: str, *, client_key: str = "stdio", reason: str | None = None
    ) -> ToolOutput:
        """Tier 3: one file from inside the skill folder, among those discovery listed (of
        a remote skill: among those its current entry lists, verified against its digest);
        ``reason`` (why the agent asks) goes into the telemetry event."""
        check_lookup(name)
        self._require_skills()
        check_path(path)
        try:
            read = self.workspace.actions.read(
                name, path, actor="agent", source="mcp", reason=reason
            )
        except SkilldeckError as exc:
            raise _advised(exc) from None
        resource = read.resource
        data = resource.to_dict()
        uri = resource_uri(resource.name, resource.path)
        if read.remote is not None:
            data.update(read.remote)
            uri = str(read.remote["uri"])
            del data["abs_path"]  # the cache folder is not the agent's business
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
        tool = check_name(tool, "tool")
        session_id = self.session_for(client_key)
        here = self.sessions.ref(session_id)
        decision = self.workspace.actions.check(tool, actor="agent", session=here)
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
        skill = self._skill(name)
        session = SessionRef(self.store(), self.session_for(client_key))
        try:
            result = self.workspace.actions.run(
                skill, script, list(args), actor="agent", session=session
            )
        except SkilldeckError as exc:
            raise agent_refusal(exc, f"script {script} of skill {skill.name}") from exc
        result.session = session.id
        return ToolOutput(result.to_dict(), run_text(result))

    def _mount(self, skill: Skill, session_id: str | None, client_key: str) -> dict[str, Any]:
        """Mount the allowed toolsets of ``skill`` for the client (see ``toolset_mounts``)."""
        session = SessionRef(self.store(), session_id) if session_id is not None else None
        return self.mounts.mount(self.workspace.actions, skill, session, client_key)

    def mount_approved(self) -> set[str]:
        """Mount the toolsets that waited for approval and are allowed now; returns the
        clients whose tool list changed. A load is redone only when a toolset it left
        waiting is allowed now (read without queueing or auditing anything, with
        :func:`~skilldeck.core.execution.toolset_status`)."""
        changed: set[str] = set()
        for client_key, name, session_id, waiting in self.mounts.waiting():
            skill = self.workspace.by_name(name)
            if skill is None:
                continue
            store = self.store() if session_id is not None else None
            rows = execution.toolset_status(self.settings, skill, store, session_id)
            if any(r.module in waiting and r.state in ("approved", "allowlist") for r in rows):
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
        mounted = self.mounts.get(client_key, name)
        if mounted is None:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"no mounted toolset tool {name!r}")
        skill = self._skill(mounted.skill)
        session = SessionRef(self.store(), self.session_for(client_key))
        try:
            result = self.workspace.actions.call_toolset(
                skill, mounted.spec, mounted.tool.name, arguments, actor="agent", session=session
            )
        except SkilldeckError as exc:
            raise agent_refusal(exc, f"tool {name} of skill {skill.name}") from exc
        return ToolOutput(*call_output(result))

    # ------------------------------------------------------------------ resources

    def resource_page(self, cursor: str | None) -> tuple[list[Skill], str | None]:
        """One page of skills for ``resources/list`` (their SKILL.md)."""
        start = resources.page_start(cursor)
        return resources.resource_page(self.visible, start)

    def complete(self, argument: str, prefix: str, known: dict[str, str]) -> list[str]:
        """Completions of a ``skill://`` template argument: skill names or file paths."""
        return resources.complete(
            self.workspace, self.settings, lambda: self.visible, argument, prefix, known
        )

    def read_uri(self, uri: str) -> ResourceContent:
        """Read ``skill://{name}/SKILL.md`` or ``skill://{name}/{path}`` (a file through
        the workspace's write door, its read recorded)."""

        def read(skill: Skill, rel: str) -> Resource:
            door = self.workspace.actions
            return door.read(skill, rel, actor="agent", source="mcp-resource").resource

        return resources.read_uri(uri, self._skill, read)


def _advised(exc: SkilldeckError) -> SkilldeckError:
    """``exc``, a NOT_FOUND one saying where to look instead."""
    if exc.code is not ErrorCode.NOT_FOUND:
        return exc
    advice = " (search_skills finds skills by task)"
    return SkilldeckError(exc.code, exc.message + advice, **exc.details)


def _as_dict(value: Any) -> dict[str, Any]:
    """JSON-ready dict of a core result object (``to_dict`` or dataclass fields)."""
    if value is None:
        return {}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        if isinstance(result, dict):
            return result
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"value": str(value)}


def run_text(result: ScriptRun) -> str:
    """The text answer of a script run. Skilldeck's own lines come first; the script's
    output follows between markers holding a random boundary it cannot guess, so nothing
    it prints can pass for Skilldeck's verdict."""
    run = result.run
    status = "timed out and was killed" if run.timed_out else f"exited with {run.exit_code}"
    lines = [f"{result.skill}/{result.script} {status} (sandbox: {run.sandbox})."]
    if run.truncated:
        lines.append("Output was cut at 1 MB.")
    lines.extend(f"Warning: {w}" for w in run.warnings)
    boundary = secrets.token_hex(8)
    for label, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        if text:
            body = text.rstrip(chr(10))
            lines.append(f"<<<{label} {boundary}>>>\n{body}\n<<<end {label} {boundary}>>>")
    return "\n".join(lines)
