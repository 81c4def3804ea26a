"""The Skilldeck Textual application: runs the workspace's stages in workers, owns the
session store and hands the workspace to its screens."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.worker import Worker, WorkerState, get_current_worker

from skilldeck.app import heap
from skilldeck.app.commands import SkillCommands
from skilldeck.app.dialogs.guarded import GUARD_SECONDS, GuardedDialog
from skilldeck.app.labels import short_path
from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal
from skilldeck.core.workspace import Workspace, launch_discovery

if TYPE_CHECKING:
    from skilldeck.core.sessions import Session, SessionStore


ENV_SEMANTIC = "SKILLDECK_TUI_SEMANTIC"

WATCH_QUIET = 0.5
"""Seconds without input before the change check runs (it waits for a pause in typing)."""

EARLY_PAINT_WAIT = 0.3
"""Seconds at most the discovery thread waits for the early rows to be painted before it
builds the catalog: sharing the interpreter with it, the event loop took 100-250 ms more
to paint them. With this wait and the main screen's lighter launch (its footer rebuilt
only when its keys change, the listing ranked once per catalog) launch → first rows went
from 0.73 s to 0.55 s at 10k skills, all stages from 1.52 s to 1.27 s (CPU 0.59 s to 0.50
s and 1.31 s to 1.18 s: ``tests/benchmarks/bench_felt.py``, load average ~1.7)."""


def clean_multiline(text: str) -> str:
    """Notification text with control characters (newlines kept) shown escaped."""
    return for_terminal(str(text), multiline=True)


def screenshot_error(exc: BaseException) -> str:
    """Why a file could not be written, in words (``[Errno 2] No such file…: '/x'`` becomes
    ``/x: No such file or directory``)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{short_path(Path(str(exc.filename)))}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    return str(exc) or type(exc).__name__


class Found(Message):
    """Discovery progress: the skills read so far (posted by the discovery thread, which
    goes on without waiting for the UI to show it)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count


class EarlyRows(Message):
    """The first rows of the name listing, known before discovery ends (the store kept
    them for this very catalog: :func:`~skilldeck.core.workspace.launch_discovery`);
    posted by the discovery thread."""

    def __init__(self, skills: list[Skill], total: int) -> None:
        super().__init__()
        self.skills = skills
        self.total = total
        self.painted = threading.Event()
        """Set once the rows are on the screen (or will not be shown)."""


class SkilldeckApp(App[int]):
    """Browse, search, review and govern Agent Skills.

    Args:
        workspace: The skills and what derives from them (empty until discovery runs).
        watch: Follow changes on disk (skills, registries, the tools and config files):
            the workspace's own change check (:meth:`Workspace.refresh_if_changed`, what
            the MCP server polls too) runs every ``watch_interval`` seconds.
        watch_interval: Seconds between two of those checks.
        poll_interval: Seconds between checks of the session store for outside changes.
        debounce: Seconds of typing quiet before a search runs (0: search every keystroke).
        key_guard: Seconds a dialog that writes ignores keys after it is shown, so keys
            typed before it appeared cannot answer it (0: none).
        deterministic: Hide timings and stop cursor blink (snapshots, screenshots).
        semantic: Add the embedding signal after discovery; it refines results when typing
            pauses. None: only when ``settings.semantic`` and ``SKILLDECK_TUI_SEMANTIC=1``
            (loading the model takes seconds of CPU and hundreds of MB).
    """

    CSS_PATH = "app.tcss"
    TITLE = "Skilldeck"
    COMMANDS = App.COMMANDS | {SkillCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            priority=True,
            id="app.quit",
            tooltip="Quit Skilldeck (exit status 0).",
        ),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False, id="app.toggle-theme"),
        Binding("ctrl+r", "rescan", "Rescan", show=False, id="app.rescan"),
        Binding("f8", "updates", "Updates", show=False, id="app.updates"),
        Binding("f9", "usage", "Usage", show=False, id="app.usage"),
        Binding("f10", "remotes", "Remote skills", show=False, id="app.remotes"),
    ]

    # The app's state is ``var``: a plain ``reactive`` on the App repaints the whole screen
    # on every change (a 9 KB frame, ~15 ms, for each discovery progress tick at 10k
    # skills: ``tests/benchmarks/bench_felt.py``); the screens repaint what shows it.
    catalog_version: var[int] = var(0)
    """Bumped whenever the catalog, lint findings, index or tool availability change."""
    discovering: var[bool] = var(False)
    """True while discovery (or a stage after it) is running."""
    discovered: var[int] = var(0)
    """Skills found so far by the running discovery."""
    stage: var[str] = var("")
    """What the background work is doing now."""
    session_id: var[str | None] = var(None)
    """The session operator actions apply to."""
    store_version: var[int] = var(0)
    """Last audit id seen in the session store (changes by any process)."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        watch: bool = True,
        watch_interval: float = 1.0,
        poll_interval: float = 1.0,
        debounce: float = 0.06,
        key_guard: float = GUARD_SECONDS,
        deterministic: bool = False,
        semantic: bool | None = None,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.watch_files = watch
        self.watch_interval = watch_interval
        self.refreshing = False
        """True while a change on disk is being brought in (set from the checking thread;
        searches then run in a worker, not on the event loop)."""
        self._checking = False
        self._told_restart = False
        self.poll_interval = poll_interval
        self.debounce = debounce
        self.key_guard = key_guard
        self.collector = heap.IdleCollector()
        """Runs full garbage collections when the user pauses (see :mod:`skilldeck.app.heap`)."""
        self.deterministic = deterministic
        if semantic is None:
            semantic = workspace.settings.semantic and os.environ.get(ENV_SEMANTIC, "") == "1"
        self.use_semantic = semantic
        self._store: SessionStore | None = None
        self._watching = False
        self.discoveries = 0
        """Discoveries finished, every stage run (0 until the first one is in)."""

    @property
    def settings(self) -> Settings:
        """Loaded settings."""
        return self.workspace.settings

    # ----------------------------------------------------------------- lifecycle

    def on_mount(self) -> None:
        from skilldeck.app.screens.main_screen import MainScreen

        self.theme = "textual-dark"
        self.collector.start()
        self.set_interval(0.5, self.collector.tick)
        self.push_screen(MainScreen(self.workspace))
        for notice in self.workspace.notices:
            self.notify(notice, title="Skilldeck", severity="warning", timeout=10)
        self.discover()
        if self.poll_interval > 0:
            self.set_interval(self.poll_interval, self._poll_store)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a notification; its text is shown literally (skill names and messages may
        hold ``[`` or control characters), never parsed as markup."""
        super().notify(
            clean_multiline(message),
            title=clean_multiline(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def action_help_quit(self) -> None:
        """ctrl+c does not quit: say which key does (Textual's own hint is markup, which
        :meth:`notify` would show literally)."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit Skilldeck.", title="Do you want to quit?")
                return

    @on(events.DeliveryComplete)
    def _screenshot_saved(self, event: events.DeliveryComplete) -> None:
        """Say where the screenshot went (in place of Textual's markup toast)."""
        if event.name != "screenshot":
            return
        event.prevent_default()
        where = f" to {short_path(event.path)}" if event.path is not None else ""
        self.notify(f"Saved the screenshot{where}.", title="Screenshot")

    @on(events.DeliveryFailed)
    def _screenshot_failed(self, event: events.DeliveryFailed) -> None:
        """Say why the screenshot was not saved (Textual's toast only says that it was not)."""
        if event.name != "screenshot":
            return
        event.prevent_default()
        self.notify(
            f"Could not save the screenshot: {screenshot_error(event.exception)}",
            title="Screenshot",
            severity="error",
            timeout=10,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The app's own workers report their errors like every node's (see
        :class:`~skilldeck.app.worker_errors.WorkerErrors`)."""
        self.report_worker_error(event)

    def report_worker_error(self, event: Worker.StateChanged) -> None:
        """A background task raised: say so on screen and in the log, and keep running.

        Every ``@work`` here passes ``exit_on_error=False``: Textual's default ends the app
        on a worker's error (an unexpected error while a preview or a check ran in the
        background closed the whole TUI), so the error arrives here instead.
        """
        worker = event.worker
        if event.state is not WorkerState.ERROR or worker.error is None:
            return
        error = worker.error
        what = worker.group if worker.group != "default" else worker.name.strip("_")
        self.log.error(f"background task {what} failed", repr(error))
        self.notify(
            f"Background task {what!r} failed: {type(error).__name__}: {error}",
            title="Skilldeck",
            severity="error",
            timeout=10,
        )

    def bump(self) -> None:
        """Tell every screen the catalog state changed."""
        self.catalog_version += 1

    # ----------------------------------------------------------------- discovery

    @work(thread=True, exclusive=True, group="discovery", exit_on_error=False)
    def discover(self) -> None:
        """Scan, lint, index and check tools, in stages; the UI fills in after each."""
        worker = get_current_worker()
        self.call_from_thread(self._set_progress, True, "discovering", 0)

        def progress(count: int) -> None:
            if not worker.is_cancelled:
                self.post_message(Found(count))  # thread-safe, and does not wait

        workspace = self.workspace

        def early(skills: list[Skill], total: int) -> None:
            if not worker.is_cancelled:
                rows = EarlyRows(skills, total)
                self.post_message(rows)
                rows.painted.wait(EARLY_PAINT_WAIT)

        def discover() -> object:
            if self.discoveries:  # a rescan: the catalog is on the screen already
                return workspace.discover(progress)
            return launch_discovery(workspace, progress, early)

        def index() -> None:
            workspace.index()
            # The first one-letter query builds the index's name tables (24 ms at 10k
            # skills, on the event loop when typed): build them here instead.
            workspace.search("a", limit=1)

        stages: tuple[tuple[str, Callable[[], object]], ...] = (
            ("discovering", discover),
            ("linting", workspace.lint),
            ("indexing", index),
            ("checking tools", workspace.tools),
        )
        for name, stage in stages:
            if worker.is_cancelled:
                return
            self.call_from_thread(setattr, self, "stage", name)
            try:
                stage()
            except SkilldeckError as exc:
                self.call_from_thread(
                    self.notify, f"{name}: {exc.message}", title="Skilldeck", severity="error"
                )
            except Exception as exc:  # a broken stage must not take the UI down
                self.call_from_thread(
                    self.notify,
                    f"{name} failed: {type(exc).__name__}: {exc}",
                    title="Skilldeck",
                    severity="error",
                    timeout=10,
                )
            self.call_from_thread(self.bump)
        self.collector.settle_when_idle()
        self.call_from_thread(self._set_progress, False, "", len(workspace.catalog.skills))
        self.call_from_thread(self._discovery_done)
        for diag in workspace.catalog.diagnostics[:5]:
            self.call_from_thread(
                self.notify, f"{diag.code}: {diag.message}", severity="warning", timeout=6
            )

    @on(Found)
    def _found(self, message: Found) -> None:
        if self.discovering:
            self.discovered = message.count

    @on(EarlyRows)
    def _early_rows(self, message: EarlyRows) -> None:
        from skilldeck.app.screens.main_screen import MainScreen

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.show_early(message.skills, message.total)
        self.call_after_refresh(message.painted.set)

    def _set_progress(self, running: bool, stage: str, count: int) -> None:
        self.discovering = running
        self.stage = stage
        self.discovered = count

    def _discovery_done(self) -> None:
        self.discoveries += 1
        if self.watch_files and not self._watching:
            self._watching = True
            self.set_interval(self.watch_interval, self._poll_changes)
        workspace = self.workspace
        if self.use_semantic and workspace.has_index() and not workspace.semantic():
            self._embed()

    @work(thread=True, exclusive=True, group="semantic", exit_on_error=False)
    def _embed(self) -> None:
        self.call_from_thread(setattr, self, "stage", "semantic index")
        try:
            on = self.workspace.enable_semantic()
        except Exception as exc:
            on = False
            self.call_from_thread(
                self.notify, f"semantic search unavailable: {exc}", severity="warning"
            )
        heap.settle()
        self.call_from_thread(setattr, self, "stage", "")
        if on:
            self.call_from_thread(self.bump)

    def action_rescan(self) -> None:
        """Discover everything again."""
        self.notify("Rescanning skill folders…", timeout=2)
        self.discover()

    # ----------------------------------------------------------------- live changes

    def _poll_changes(self) -> None:
        """Check for changes on disk unless a check or a discovery is running, or keys are
        arriving (the check stats every watched file: ~25 ms of a thread at 10k skills,
        which would share the interpreter with the keystrokes' repaints)."""
        if self.collector.quiet_for() < WATCH_QUIET:
            return
        if not self._checking and not self.discovering:
            self._checking = True
            self.check_changes()

    @work(thread=True, group="watch", exit_on_error=False)
    def check_changes(self) -> bool:
        """Bring the workspace up to date when anything it watches changed on disk
        (one ``stat`` per watched path; discovery again only when one differs), then
        repaint. Returns True when something changed."""
        workspace = self.workspace
        changed = False
        try:
            if workspace.changed_on_disk():
                self.refreshing = True
                changed = workspace.refresh_if_changed()
        except SkilldeckError as exc:
            self.call_from_thread(self.notify, exc.message, severity="error")
        except Exception as exc:  # a failed check must not stop the next ones
            self.call_from_thread(self.notify, f"Could not refresh: {exc}", severity="error")
        finally:
            self.refreshing = False
            self._checking = False
        if changed:
            self.call_from_thread(self._changes_applied)
        return changed

    def _changes_applied(self) -> None:
        self.bump()
        if self.workspace.settings_stale and not self._told_restart:
            self._told_restart = True
            self.notify(
                "The config file changed: restart Skilldeck to apply it "
                "(skills, registries and the tools file update live).",
                title="Skilldeck",
                severity="warning",
                timeout=10,
            )

    async def apply_changes(self, paths: list[Path]) -> None:
        """Bring the workspace up to date after SKILL.md files changed, appeared or went
        (discovery again: unchanged skills come from the store), then repaint."""
        self.refreshing = True
        try:
            await asyncio.to_thread(self.workspace.refresh, paths)
        except SkilldeckError as exc:
            self.notify(exc.message, severity="error")
        except Exception as exc:
            names = ", ".join(p.name for p in paths[:3])
            self.notify(f"Could not refresh {names}: {exc}", severity="error")
        finally:
            self.refreshing = False
        self.bump()

    # ----------------------------------------------------------------- sessions

    @property
    def store(self) -> SessionStore:
        """The shared session store (opened on first use)."""
        if self._store is None:
            from skilldeck.core.sessions import SessionStore

            self._store = SessionStore(settings=self.settings, telemetry=self.workspace.telemetry)
        return self._store

    def _poll_store(self) -> None:
        if (
            self._store is None
            and not self.settings.sessions_url
            and not self.settings.sessions_db.exists()
        ):
            return
        self._check_store()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _check_store(self) -> None:
        try:
            version = self.store.last_audit_id()
        except SkilldeckError as exc:
            self.call_from_thread(self.notify, exc.message, severity="error")
            return
        if version != self.store_version:
            self.call_from_thread(setattr, self, "store_version", version)

    def current_session(self) -> Session | None:
        """The selected session, when it still exists and is open."""
        if self.session_id is None:
            return None
        session = self.store.find(self.session_id)
        return session if session is not None and session.is_open else None

    def watch_session_id(self, session_id: str | None) -> None:
        self._update_subtitle()

    def watch_store_version(self, version: int) -> None:
        self._update_subtitle()

    def flags_text(self) -> str:
        """The feature flags that differ from their defaults, for the subtitle
        (``" · skills off"``, ``" · exec on"``; '' when both are at their defaults)."""
        settings = self.settings
        text = "" if settings.skills_v1 else " · skills off"
        return text + (" · exec on" if settings.skills_exec else "")

    def _update_subtitle(self) -> None:
        if self.session_id is None:
            self.sub_title = f"no session{self.flags_text()}"
            return
        self._load_subtitle(self.session_id)

    @work(thread=True, exclusive=True, group="subtitle", exit_on_error=False)
    def _load_subtitle(self, session_id: str) -> None:
        """Read the session in a worker (a PostgreSQL store may be slow or down), then set
        the subtitle on the UI thread."""
        try:
            session = self.store.find(session_id)
        except SkilldeckError:
            session = None
        if session is None:
            text = f"no session{self.flags_text()}"
        else:
            pending = f" · {len(session.pending)} pending" if session.pending else ""
            ended = " · ended" if not session.is_open else ""
            active = f"{len(session.skills)} active"
            text = f"session {session.id} · {session.mode} · {active}{pending}{ended}"
            text += self.flags_text()
        self.call_from_thread(setattr, self, "sub_title", text)

    def after_store_change(self) -> None:
        """Refresh views right after this process changed the store."""
        try:
            self.store_version = self.store.last_audit_id()
        except SkilldeckError as exc:
            self.notify(exc.message, severity="error")
        self._update_subtitle()

    # ----------------------------------------------------------------- navigation

    def open_skill(self, skill: Skill, line: int | None = None, query: str | None = None) -> None:
        """Show ``skill`` on the main screen (at ``line`` of the raw source, if given; with
        ``query`` in the search box, if given)."""
        from skilldeck.app.screens.main_screen import MainScreen

        while not isinstance(self.screen, MainScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.open_skill(skill, line, query=query)

    def action_help(self) -> None:
        """Show the help screen."""
        from skilldeck.app.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_review(self) -> None:
        """Open review mode."""
        from skilldeck.app.screens.review_screen import ReviewScreen

        if not isinstance(self.screen, ReviewScreen):
            self.push_screen(ReviewScreen(self.workspace))

    def action_sessions(self) -> None:
        """Open the sessions and approvals screen."""
        from skilldeck.app.screens.sessions_screen import SessionsScreen

        if not isinstance(self.screen, SessionsScreen):
            self.push_screen(SessionsScreen())

    def action_updates(self) -> None:
        """Open the updates screen (installed skills, review and approve updates)."""
        from skilldeck.app.screens.updates_screen import UpdatesScreen

        if not isinstance(self.screen, UpdatesScreen):
            self.push_screen(UpdatesScreen(self.workspace))

    def action_usage(self) -> None:
        """Open the usage screen (loads, silent misses, never-used skills)."""
        from skilldeck.app.screens.usage_screen import UsageScreen

        if not isinstance(self.screen, UsageScreen):
            self.push_screen(UsageScreen(self.workspace))

    def action_remotes(self) -> None:
        """Open the remote skills screen (origin, review state, preview, approve)."""
        from skilldeck.app.screens.remote_screen import RemoteScreen

        if not isinstance(self.screen, RemoteScreen):
            self.push_screen(RemoteScreen(self.workspace))

    def action_toggle_theme(self) -> None:
        """Switch between the light and dark themes."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    async def on_event(self, event: events.Event) -> None:
        """Note user input, so full garbage collections wait for a pause; drop keys typed
        before the dialog on top answers keys (:class:`GuardedDialog`), before any binding
        or widget sees them (except ``ctrl+q``: quitting is never lost)."""
        if isinstance(event, (events.Key, events.MouseDown)):
            self.collector.touch()
        if isinstance(event, events.Key) and event.key != "ctrl+q":
            screen = self.screen
            if isinstance(screen, GuardedDialog) and screen.typed_while_guarded(event):
                return
        await super().on_event(event)

    def on_unmount(self) -> None:
        self.collector.stop()
        heap.release()
        if self._store is not None:
            self._store.close()
