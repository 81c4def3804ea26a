"""Entry points: :func:`make_app` (shared by the CLI, tests and scripts) and :func:`run_app`."""

from __future__ import annotations

from pathlib import Path

from skilldeck.app.app import SkilldeckApp
from skilldeck.app.state import DeckState
from skilldeck.core.config import Settings, load_settings


def make_app(
    roots: list[Path] | None = None,
    *,
    settings: Settings | None = None,
    profile: str = "default",
    watch: bool = True,
    poll_interval: float = 1.0,
    debounce: float = 0.06,
    deterministic: bool = False,
    semantic: bool | None = None,
) -> SkilldeckApp:
    """Build the app over ``roots`` (None: the default discovery roots).

    Args:
        roots: Explicit skill roots (``--root``), or None.
        settings: Settings; loaded from ``SKILLDECK_HOME`` when omitted.
        profile: Validation profile.
        watch: Follow file changes live.
        poll_interval: Seconds between session-store change checks (0: never).
        debounce: Typing quiet time before a search (0: search on every keystroke).
        deterministic: Hide timings and cursor blink (snapshots and screenshots).
        semantic: Embedding signal on/off (None: ``settings.semantic`` and
            ``SKILLDECK_TUI_SEMANTIC=1``; slow to start).

    Returns:
        The app, not yet running.
    """
    state = DeckState(settings=settings or load_settings(), profile=profile, roots=roots)
    return SkilldeckApp(
        state,
        watch=watch,
        poll_interval=poll_interval,
        debounce=debounce,
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
