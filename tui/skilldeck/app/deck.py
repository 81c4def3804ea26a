"""What screens and dialogs may ask of the app that shows them, without importing it.

Screens receive the :class:`~skilldeck.core.workspace.Workspace` through their
constructor; for the app-wide rest (the session in use, the session store, progress
flags) they see the running app through the :class:`DeckHost` protocol. Nothing here
imports :mod:`skilldeck.app.app`, so the app -> screens -> app import loop is gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

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

    def open_skill(self, skill: Skill, line: int | None = None) -> None:
        """Show ``skill`` on the main screen."""
        ...

    def bump(self) -> None:
        """Tell every screen the workspace changed."""
        ...


class _HasApp(Protocol):
    @property
    def app(self) -> App[Any]: ...


class UsesDeck:
    """Mixin for screens and dialogs shown by the Skilldeck app."""

    @property
    def deck(self: _HasApp) -> DeckHost:
        """The running app, seen through :class:`DeckHost`."""
        return cast("DeckHost", self.app)
