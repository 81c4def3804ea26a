"""The write door of the workspace: loading, reading, running, toolsets and approvals.

:class:`Actions` (``workspace.actions``) is the one way a face changes state: every load,
read, run, toolset call, mount, force-load and approval names who acts (``agent``,
``cli``, ``operator``) and in which session, and the audit and telemetry rules are applied
here once: a load emits ``skill_loaded`` (its source suffixed ``-remote`` for a remote
skill), a read ``skill_resource_requested``, a run and a toolset call are audited by
:mod:`skilldeck.core.execution`. A name is a local skill's (:meth:`Workspace.resolve`) or
``label:name`` of a configured remote (:class:`~.remotes.RemoteSource`: the current entry,
the review gate, every file verified against its digest). Sessions themselves (create,
end, approve, deny, revoke, mode, check, prune) come from its base,
:class:`~.session_actions.SessionActions`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.workspace.session_actions import SessionActions

if TYPE_CHECKING:
    from skilldeck.core.execution import ScriptRun, ToolsetCall
    from skilldeck.core.execution.toolsets import Toolset
    from skilldeck.core.loader import LoadResult
    from skilldeck.core.loader.resources import Resource
    from skilldeck.core.remote.fetch import RemoteSkill
    from skilldeck.core.sessions import Session, SessionStore
    from skilldeck.core.workspace.workspace import Workspace

__all__ = ["Actions", "Loaded", "Read", "SessionRef", "Target"]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A session to act in.

    Attributes:
        store: The session store holding it.
        id: The session's id.
        guard: Runs each store operation (a face that turns database faults into its own
            error passes it); None runs them as they are.
    """

    store: SessionStore
    id: str
    guard: Callable[[Callable[[], Any]], Any] | None = None

    def call(self, action: Callable[[], Any]) -> Any:
        """Run one store operation through :attr:`guard`."""
        return action() if self.guard is None else self.guard(action)


@dataclass(frozen=True, slots=True)
class Target:
    """The skill a name means.

    Attributes:
        skill: The local skill, or the remote one parsed from its verified SKILL.md.
        remote: The remote skill (entry, review state), None for a local one.
    """

    skill: Skill
    remote: RemoteSkill | None = None

    def facts(self) -> dict[str, Any]:
        """A remote skill's remote, URI, digest, review state and origin
        (:func:`~.remotes.facts`); ``{}`` for a local one."""
        from skilldeck.core.workspace.remotes import facts

        remote = self.remote
        return {} if remote is None else facts(remote.entry, remote.review.state)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A finished load.

    Attributes:
        target: The skill loaded (and its remote entry).
        result: What the model receives.
        session: The session it was activated in (None: none, or the store failed).
        session_error: Why the activation failed (the load is still served).
    """

    target: Target
    result: LoadResult
    session: str | None = None
    session_error: SkilldeckError | None = None


@dataclass(frozen=True, slots=True)
class Read:
    """A file read from a skill.

    Attributes:
        resource: The file.
        remote: The facts of a remote skill's file (:func:`~.remotes.facts`, with its
            ``uri``), None for a local one.
    """

    resource: Resource
    remote: dict[str, Any] | None = None


class Actions(SessionActions):
    """What changes state, for every face (see the module docstring and
    :class:`~.session_actions.SessionActions` for sessions themselves).

    Args:
        workspace: The workspace whose skills, settings, store and telemetry are used.
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    # ------------------------------------------------------------------ names

    def target(self, name: str, *, for_model: bool = False) -> Target:
        """The skill ``name`` means: a local one (:meth:`Workspace.resolve`), or
        ``label:name`` of a configured remote as it is served now, past its review gate.

        Raises:
            SkilldeckError: as :meth:`Workspace.resolve`; for a remote skill
                PERMISSION_DENIED with reason ``review_required`` or
                ``changed_since_review``, EXECUTION_ERROR ``remote_unavailable``.
        """
        from skilldeck.core.workspace.resolve import check_lookup

        check_lookup(name)
        remotes = self.workspace.remotes
        if remotes.owns(name):
            remote = remotes.load(name)
            return Target(remote.skill, remote)
        return Target(self.workspace.resolve(name, for_model=for_model))

    def _target(self, name: str | Skill, actor: str) -> Target:
        if isinstance(name, Skill):
            return Target(name)
        return self.target(name, for_model=actor == "agent")

    # ------------------------------------------------------------------ loading

    def preview(self, skill: Skill, arguments: str = "") -> LoadResult:
        """What a model would receive if ``skill`` were loaded with ``arguments``; nothing
        is recorded (an operator looking before a force-load)."""
        from skilldeck.core.loader import load_skill

        settings = self.workspace.settings
        return load_skill(
            skill, arguments, settings.body_token_cap, settings=settings, store=self.workspace.store
        )

    def load(
        self,
        name: str | Skill,
        arguments: str = "",
        *,
        actor: str,
        source: str,
        session: SessionRef | None = None,
    ) -> Loaded:
        """Load a skill (tier 2), activate it in ``session`` and emit ``skill_loaded``.

        Args:
            name: A name (an agent's: only what a model may load) or a resolved skill.
            arguments: Substituted for ``$ARGUMENTS``.
            actor: ``agent``, ``cli`` or ``operator``.
            source: The face (``mcp``, ``cli``, ``tui``, ``context``), in the event.
            session: Where the skill becomes active (its granted tools join the session's;
                a remote skill's only while approved as it is now). A store
                that cannot be used (EXECUTION_ERROR) leaves the load served and unrecorded
                in a session (:attr:`Loaded.session_error`): nothing is granted.
        """
        started = time.perf_counter()
        target = self._target(name, actor)
        result = self.preview(target.skill, arguments)
        session_id, problem = None, None
        if session is not None:
            try:
                self._activate(target, arguments, actor, session)
                session_id = session.id
            except SkilldeckError as exc:
                if exc.code is not ErrorCode.EXECUTION_ERROR:
                    raise
                problem = exc
        self._record(target, result, started, actor, source, session_id)
        return Loaded(target, result, session_id, problem)

    def force_load(
        self,
        name: str | Skill,
        arguments: str = "",
        *,
        store: SessionStore,
        session: str | None,
        source: str,
        actor: str = "operator",
    ) -> tuple[Loaded, Session]:
        """An operator loads a skill into a session (a new one when ``session`` is None);
        the session must be open. Returns the load and the session as it is now.

        Raises:
            SkilldeckError: PERMISSION_DENIED ``operator_only`` for an agent, NOT_FOUND for
                an unknown session, INVALID_PARAM ``session_ended`` for an ended one
                (nothing loaded or recorded), and the errors of :meth:`load`.
        """
        self._require_operator(actor, "force-load a skill")
        if session is None:
            session = self.create(store, actor=actor).id
        else:
            self._current(SessionRef(store, session))
        started = time.perf_counter()
        target = self._target(name, actor)
        result = self.preview(target.skill, arguments)
        now = self._activate(target, arguments, actor, SessionRef(store, session))
        self._record(target, result, started, actor, source, session)
        return Loaded(target, result, session), now

    def answer(self, loaded: Loaded) -> tuple[dict[str, Any], list[str]]:
        """The answer to a load, the same on every face: the JSON data
        (:func:`~skilldeck.core.loader.load_answer`; its ``text`` is what the model reads)
        and the notes that follow the text. A remote skill's data carries its facts
        (remote, URI, digest, review), its URI as ``base_dir`` and ``path`` (its cache folder
        is never shown), and its text first names where it came from."""
        from skilldeck.core.loader import load_answer, load_notes

        skill, remote, result = loaded.target.skill, loaded.target.remote, loaded.result
        data = load_answer(skill, result, self.workspace.registry)
        data["session"] = loaded.session
        notes = load_notes(skill, data)
        if remote is None:
            return data, notes
        entry = remote.entry
        root = entry.uri.removesuffix("/SKILL.md")
        data.update(loaded.target.facts())
        data["base_dir"], data["path"] = root, entry.uri
        origin = (
            f"[skilldeck] Remote skill {entry.qualified} from the server labelled "
            f"{entry.label!r} ({entry.uri}): untrusted content, not a local skill. SKILL.md "
            "was verified against its digest; its files are read the same way."
        )
        data["text"] = origin + "\n\n" + result.text.replace(str(skill.base_dir), root)
        if remote.review.state != "approved" and remote.skill.frontmatter.get("allowed-tools"):
            notes.append("Its allowed-tools are not granted: it is not approved as it is now.")
        return data, notes

    def _activate(self, target: Target, arguments: str, actor: str, session: SessionRef) -> Session:
        """Make the skill active in the session: its granted tools join the session's
        allowlist (a remote skill's only while approved as it is now)."""
        store, session_id, name = session.store, session.id, target.skill.name
        remote = target.remote
        approved = remote is None or remote.review.state == "approved"
        tools = list(target.skill.granted_tools) if approved else []
        activated: Session = session.call(
            lambda: store.activate_skill(session_id, name, tools, actor=actor, arguments=arguments)
        )
        return activated

    def _record(
        self,
        target: Target,
        result: LoadResult,
        started: float,
        actor: str,
        source: str,
        session: str | None,
    ) -> None:
        from skilldeck.core.loader import record_load

        record_load(
            target.skill,
            result,
            (time.perf_counter() - started) * 1000,
            actor=actor,
            telemetry=self.workspace.telemetry,
            session=session,
            source=f"{source}-remote" if target.remote is not None else source,
        )

    # ------------------------------------------------------------------ reading

    def read(
        self,
        name: str | Skill,
        path: str,
        *,
        actor: str,
        source: str,
        reason: str | None = None,
    ) -> Read:
        """One file of a skill (tier 3) with its ``skill_resource_requested`` event. An
        agent is served only the files discovery listed; a remote skill only the files
        its current entry lists, each verified against its digest.

        Raises:
            SkilldeckError: as :func:`~skilldeck.core.loader.read_resource`; PERMISSION_DENIED
                ``too_large`` over the byte cap; the remote refusals of :meth:`target`.
        """
        from skilldeck.core.loader import read_and_record

        cap = self.workspace.settings.resource_byte_cap
        if isinstance(name, str) and self.workspace.remotes.owns(name):
            return self._read_remote(name, path.replace("\\", "/"), cap, actor, source, reason)
        skill = self._target(name, actor).skill
        telemetry = self.workspace.telemetry
        return Read(
            read_and_record(
                skill, path, cap, actor=actor, telemetry=telemetry, reason=reason, source=source
            )
        )

    def _read_remote(
        self, name: str, rel: str, cap: int, actor: str, source: str, reason: str | None
    ) -> Read:
        from skilldeck.core.loader import exact_text, mime_of
        from skilldeck.core.loader.resources import Resource
        from skilldeck.core.remote.fetch import cache_folder
        from skilldeck.core.workspace.remotes import facts

        entry, review, blob = self.workspace.remotes.read(name, rel)
        if len(blob) > cap:
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"{rel} is {len(blob)} bytes, over the {cap}-byte cap on resources",
                reason="too_large",
            )
        text = exact_text(blob)
        item = entry.file(rel)
        where = facts(entry, review.state)
        where["uri"] = item.uri if item is not None else entry.uri
        path = cache_folder(entry) / rel
        resource = Resource(name, rel, path, len(blob), mime_of(rel), text is None, text, blob)
        self.workspace.telemetry.emit(
            "skill_resource_requested",
            name=name,
            resource=rel,
            size=len(blob),
            binary=text is None,
            ok=True,
            actor=actor,
            source=f"{source}-remote",
            **({"reason": reason} if reason else {}),
        )
        return Read(resource, where)

    # ------------------------------------------------------------------ running

    def run(
        self,
        name: str | Skill,
        script: str,
        args: list[str],
        *,
        actor: str,
        session: SessionRef | str | None,
    ) -> ScriptRun:
        """Run an allowed script of a local skill (``skills_exec`` on; allowlisted or
        approved for the session); every attempt is audited. A remote skill's scripts
        never run here (PERMISSION_DENIED ``remote_skill``).
        """
        from skilldeck.core.execution import execute

        skill = self._local(name, actor)
        with self._session(session) as (store, session_id):
            return execute(
                self.workspace.settings,
                skill,
                script,
                list(args),
                store=store,
                session_id=session_id,
                actor=actor,
                telemetry=self.workspace.telemetry,
            )

    def call_toolset(
        self,
        name: str | Skill,
        spec: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        actor: str,
        session: SessionRef | str | None,
    ) -> ToolsetCall:
        """Call one tool of a toolset of a local skill in a child process (checked and
        authorized again: an edited module is refused until approved again); audited."""
        from skilldeck.core.execution import call_toolset

        skill = self._local(name, actor)
        with self._session(session) as (store, session_id):
            return call_toolset(
                self.workspace.settings,
                skill,
                spec,
                tool,
                arguments,
                store=store,
                session_id=session_id,
                actor=actor,
                telemetry=self.workspace.telemetry,
            )

    def mount(self, skill: Skill, spec: str, *, session: SessionRef | None) -> Toolset:
        """Describe one toolset of ``skill`` for mounting when it is allowed for the
        session (else PERMISSION_DENIED, an approval requested where one can be)."""
        from skilldeck.core.execution import mount_toolset

        store, session_id = (session.store, session.id) if session is not None else (None, None)
        return mount_toolset(
            self.workspace.settings, skill, spec, store=store, session_id=session_id
        )

    def _local(self, name: str | Skill, actor: str) -> Skill:
        if isinstance(name, str) and self.workspace.remotes.owns(name):
            raise SkilldeckError(
                ErrorCode.PERMISSION_DENIED,
                f"{name} is a remote skill: its scripts and toolsets never run here",
                reason="remote_skill",
            )
        return self._target(name, actor).skill

    @contextlib.contextmanager
    def _session(
        self, session: SessionRef | str | None
    ) -> Iterator[tuple[SessionStore, str | None]]:
        """The store and session id to act in: the given one, or a store opened for this
        call (closed after)."""
        if isinstance(session, SessionRef):
            yield session.store, session.id
            return
        from skilldeck.core.sessions import SessionStore

        settings = self.workspace.settings
        with SessionStore(settings=settings, telemetry=self.workspace.telemetry) as store:
            yield store, session
