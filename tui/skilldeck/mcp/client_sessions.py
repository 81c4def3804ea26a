"""Which session in the shared store each MCP client uses, and the store itself.

One session per client connection (created on first use, ended when the client goes), or
one fixed session every client joins (``skilldeck serve --session ID``). A store that
cannot be used does not stop the server: session calls answer "sessions are unavailable"
until it can be used again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import SessionStore
from skilldeck.core.workspace import SessionRef
from skilldeck.mcp.log import log

if TYPE_CHECKING:
    from skilldeck.core.telemetry import Telemetry
    from skilldeck.core.workspace import Actions

T = TypeVar("T")


class ClientSessions:
    """The session store and the session of each client.

    Args:
        settings: Loaded settings (where the store is).
        mode: Policy mode of the sessions created here.
        fixed_session: Join this existing session instead of creating one per client.
        door: The workspace's write door, through which sessions are created and ended.
        telemetry: The workspace's telemetry writer, which the store emits to (default: one
            configured by ``settings``).
    """

    def __init__(
        self,
        settings: Settings,
        mode: str,
        fixed_session: str | None,
        door: Actions,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.settings = settings
        self.door = door
        self.telemetry = telemetry
        self.mode = mode
        self.fixed_session = fixed_session
        self._session_lock = threading.Lock()
        self._store: SessionStore | None = None
        self._sessions: dict[str, str] = {}
        self._created: list[str] = []
        self._closed = False
        self._store_problem: str | None = None
        self._labels: dict[str, str] = {}
        if fixed_session is not None:
            self._join(fixed_session)

    def store(self) -> SessionStore:
        """The shared session store (opened on first use).

        A store that cannot be opened (read-only or missing ``SKILLDECK_HOME``, full disk,
        damaged file) is not fatal to the server: skills are still served, and every call
        that needs sessions gets the error below. The next such call tries again, so the
        server recovers once the fault is fixed, without a restart.

        Raises:
            SkilldeckError: EXECUTION_ERROR "sessions are unavailable: ..." (the store's
                diagnostic code kept).
        """
        with self._session_lock:
            if self._store is not None:
                return self._store
            try:
                self._store = SessionStore(
                    self.settings.sessions_db, settings=self.settings, telemetry=self.telemetry
                )
            except SkilldeckError as exc:
                raise self._unavailable(exc, quiet=self.fixed_session is not None) from exc
            if self._store_problem is not None:
                log("the sessions database can be used again")
                self._store_problem = None
            return self._store

    def _unavailable(self, exc: SkilldeckError, *, quiet: bool = False) -> SkilldeckError:
        """The error of a session call while the store cannot be used (logged once, unless
        ``quiet``: a server joining a ``--session`` stops on it, so the error suffices)."""
        if exc.message != self._store_problem and not quiet:
            self._store_problem = exc.message
            log(f"sessions are unavailable (skills are still served): {exc.message}")
        details = {k: v for k, v in exc.details.items() if k in ("path", "diagnostic")}
        return SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"sessions are unavailable: {exc.message}",
            **details,
        )

    def call(self, action: Callable[[], T]) -> T:
        """Run a store operation; a database fault (full disk, read-only file) becomes the
        "sessions are unavailable" error. Bad input (INVALID_PARAM, NOT_FOUND) passes."""
        try:
            return action()
        except SkilldeckError as exc:
            if exc.code is not ErrorCode.EXECUTION_ERROR or exc.message.startswith(
                "sessions are unavailable"
            ):
                raise
            raise self._unavailable(exc) from exc

    def ref(self, session_id: str) -> SessionRef:
        """``session_id`` in the shared store, its faults turned into "sessions are
        unavailable" (:meth:`call`)."""
        return SessionRef(self.store(), session_id, self.call)

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
            if label:
                self._labels.setdefault(client_key, label)
            found = self._sessions.get(client_key)
            if found is not None:
                return found
            label = self._labels.get(client_key, "mcp client")
        session = self.door.create(
            self.store(), actor="agent", mode=self.mode, label=label, guard=self.call
        )
        with self._session_lock:
            self._sessions.setdefault(client_key, session.id)
            self._created.append(session.id)
            return self._sessions[client_key]

    def end(self, client_key: str) -> None:
        """End the session created for a client that disconnected (joined ones stay)."""
        if self.fixed_session is not None:
            return
        with self._session_lock:
            session_id = self._sessions.pop(client_key, None)
            if session_id is None or session_id not in self._created:
                return
            self._created.remove(session_id)
        self.door.end(actor="agent", session=self.ref(session_id))

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
                self.door.end(actor="agent", session=SessionRef(store, session_id))
        with contextlib.suppress(Exception):
            closer = getattr(store, "close", None)
            if callable(closer):
                closer()
