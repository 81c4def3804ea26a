"""Entry points: :func:`make_app` (shared by the CLI, tests and scripts) and :func:`run_app`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.dialogs.guarded import GUARD_SECONDS
from skilldeck.core.config import Settings, load_settings
from skilldeck.core.workspace import Workspace

if TYPE_CHECKING:
    from skilldeck.core.store import LocalStore


def make_app(
    roots: list[Path] | None = None,
    *,
    settings: Settings | None = None,
    profile: str = "default",
    watch: bool = True,
    watch_interval: float = 1.0,
    poll_interval: float = 1.0,
    debounce: float = 0.06,
    key_guard: float = GUARD_SECONDS,
    deterministic: bool = False,
    semantic: bool | None = None,
    store: LocalStore | None = None,
) -> SkilldeckApp:
    """Build the app over ``roots`` (None: the default discovery roots).

    Args:
        roots: Explicit skill roots (``--root``), or None.
        settings: Settings; loaded from ``SKILLDECK_HOME`` when omitted.
        profile: Validation profile.
        watch: Follow changes on disk live (skills, registries, tools and config files).
        watch_interval: Seconds between two checks for changes on disk.
        poll_interval: Seconds between session-store change checks (0: never).
        debounce: Typing quiet time before a search (0: search on every keystroke).
        key_guard: Seconds a writing dialog ignores keys after it is shown (0: none).
        deterministic: Hide timings and cursor blink (snapshots and screenshots).
        semantic: Embedding signal on/off (None: ``settings.semantic`` and
            ``SKILLDECK_TUI_SEMANTIC=1``; slow to start).
        store: The local store (default: the one under ``SKILLDECK_HOME``).

    Returns:
        The app, not yet running.
    """
    resolved = [p.expanduser().resolve() for p in roots] if roots else None
    workspace = Workspace(
        settings or load_settings(), resolved, profile=profile, store=store, watch=watch
    )
    return SkilldeckApp(
        workspace,
        watch=watch,
        watch_interval=watch_interval,
        poll_interval=poll_interval,
        debounce=debounce,
        key_guard=key_guard,
        deterministic=deterministic,
        semantic=semantic,
    )


def run_app(roots: list[Path] | None = None, profile: str = "default") -> int:
    """Run the terminal UI until the user quits; returns the exit status (0 on ctrl+q)."""
    app = make_app(roots, profile=profile)
    result = app.run()
    if app.return_code:
        return app.return_code
    return result or 0
