"""The typed way for screens and dialogs to reach the Skilldeck app."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App

    from skilldeck.app.app import SkilldeckApp


class _HasApp(Protocol):
    @property
    def app(self) -> App[Any]: ...


class UsesDeck:
    """Mixin for screens and dialogs shown by :class:`~skilldeck.app.app.SkilldeckApp`."""

    @property
    def deck(self: _HasApp) -> SkilldeckApp:
        """The app, typed."""
        from skilldeck.app.app import SkilldeckApp

        assert isinstance(self.app, SkilldeckApp)
        return self.app
