"""What screens and dialogs may ask of the app that shows them, without importing it.

Screens receive the :class:`~skilldeck.core.workspace.Workspace` through their
constructor; for the app-wide rest (the session in use, the session store, progress
flags) they see the running app through the :class:`DeckHost` protocol. Nothing here
imports :mod:`skilldeck.app.app`, so the app -> screens -> app import loop is gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.worker import Worker

if TYPE_CHECKING:
    from textual.app import App

    from skilldeck.core.config import Settings
    from skilldeck.core.model import Skill
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.workspace import Workspace


class DeckHost(Protocol):
    """The parts of :class:`~skilldeck.app.app.SkilldeckApp` screens and dialogs use."""

    workspace: Workspace
    session_id: str | None
    deterministic: bool
    debounce: float
    key_guard: float
    discovering: bool
    refreshing: bool
    discovered: int
    stage: str
    catalog_version: int
    store_version: int

    @property
    def settings(self) -> Settings:
        """Loaded settings."""
        ...

    @property
    def store(self) -> SessionStore:
        """The shared session store."""
        ...

    def after_store_change(self) -> None:
        """Refresh views after this process changed the session store."""
        ...

    def open_skill(self, skill: Skill, line: int | None = None, query: str | None = None) -> None:
        """Show ``skill`` on the main screen (with ``query`` in the search box, if given)."""
        ...

    def bump(self) -> None:
        """Tell every screen the workspace changed."""
        ...

    def report_worker_error(self, event: Worker.StateChanged) -> None:
        """Show and log a background task's error (the app keeps running)."""
        ...


class _HasApp(Protocol):
    @property
    def app(self) -> App[Any]: ...


class UsesDeck:
    """Mixin for the screens, dialogs and widgets shown by the Skilldeck app."""

    def on_worker_state_changed(self: _HasApp, event: Worker.StateChanged) -> None:
        """Hand a task's state to the app, which shows and logs an error: every ``@work``
        passes ``exit_on_error=False`` and ``Worker.StateChanged`` does not bubble, so the
        app would not see it otherwise."""
        report = getattr(self.app, "report_worker_error", None)
        if report is not None:
            report(event)

    @property
    def deck(self: _HasApp) -> DeckHost:
        """The running app, seen through :class:`DeckHost`."""
        return cast("DeckHost", self.app)
