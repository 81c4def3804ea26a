"""The main screen: search box, results list and the detail panes of the highlighted skill."""

from __future__ import annotations

import asyncio
import time
from contextlib import ExitStack
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import (
    Header,
    Input,
    ProgressBar,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)
from textual.worker import get_current_worker

from skilldeck.app.ranked import RESULT_LIMIT, Hit, Ranked, rank
from skilldeck.app.screens.skill_actions import SkillActions
from skilldeck.app.widgets.deck_footer import DeckFooter
from skilldeck.app.widgets.diagnostics_list import DiagnosticsList
from skilldeck.app.widgets.explain_view import HINT as EXPLAIN_HINT
from skilldeck.app.widgets.explain_view import ExplainView
from skilldeck.app.widgets.preview_pane import PreviewPane, empty_catalog_hint, no_match_hint
from skilldeck.app.widgets.resources_list import ResourcesList
from skilldeck.app.widgets.results_list import ResultsList
from skilldeck.app.widgets.search_box import SearchBox
from skilldeck.app.widgets.status_line import StatusLine
from skilldeck.app.widgets.tools_table import ToolsTable
from skilldeck.app.widgets.toolset_table import ToolsetTable
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Catalog, Skill
from skilldeck.core.workspace import Workspace

DETAIL_DELAY = 0.08
"""Seconds the highlight must rest on a skill before the detail panes follow it."""
TYPING_DETAIL_DELAY = 0.3
"""The same while typing in the search box: rendering a preview between keystrokes costs
more than a keystroke's re-ranking, so it waits for a pause in typing."""

SEARCH_PLACEHOLDERS = (
    "Search skills  (↓ browse · F1 help)",
    "Search skills (↓ browse, F1 help)",
    "Search (↓ browse, F1 help)",
    "Search (↓ list, F1 help)",
    "Search skills",
    "Search",
)
"""The search box's placeholder, longest first: the one that fits is shown."""

FOOTER_WITH_HELP = 90
"""Screens at least this wide list Help in the footer beside F2-F8 and Quit (88 cells
with "Rendered")."""

NARROW_SCREEN = 100
"""Screens narrower than this get the short tab labels."""

FRAME_HOLD = 0.004
"""Seconds repaints wait after a keystroke's list was replaced on the event loop: the
search box would otherwise be painted alone and the list a frame (up to 16.7 ms) later.
The list's, status line's and box's repaint requests arrive within about a millisecond
(``tests/benchmarks/bench_felt.py``, 10k skills)."""

SEMANTIC_PAUSE = 0.4
"""Seconds of typing quiet before results are refined with the (slow) embedding signal."""

SKILL_ACTIONS = {"toggle_raw", "raw", "rendered", "explain", "force_load", "toggle_enabled"}
WRITE_ACTIONS = {"force_load", "toggle_enabled"}
"""Skill actions that write: not on the rows shown before discovery ends."""

TABS = (
    ("tab-preview", "Preview", "inverted_exclamation_mark"),
    ("tab-diagnostics", "Diagnostics", "trade_mark_sign"),
    ("tab-tools", "Tools", "pound_sign"),
    ("tab-files", "Files", "cent_sign"),
    ("tab-explain", "Explain", "infinity"),
)
"""Each detail tab with the character Textual reports for alt+N (macOS terminals send the
Option-key character, and Textual turns ``ESC N`` into it too)."""

TAB_BINDINGS: list[BindingType] = [
    binding
    for n, (tab, label, alt_char) in enumerate(TABS, 1)
    for binding in (
        Binding(str(n), f"tab('{tab}')", label, show=False, id=f"main.{tab}"),
        Binding(
            f"alt+{n},{alt_char}",
            f"tab('{tab}')",
            label,
            show=False,
            priority=True,  # from the search box too
            id=f"main.{tab}-alt",
        ),
    )
]
"""``1``-``5`` pick a tab outside the search box, ``alt+1``-``alt+5`` from anywhere."""


class MainScreen(SkillActions):
    """Search and browse skills: the screen decides what the widgets show (the skill
    actions that ask in a dialog and write are in :class:`SkillActions`)."""

    AUTO_FOCUS = "#search"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Help is in the footer when it fits beside F2-F8 and Quit; on narrower screens
        # check_action hides "help" and the same keys reach the unlisted "app.help" (the
        # search box's placeholder says "F1 help" there).
        Binding("question_mark", "help", "Help", id="main.help"),
        Binding("f1", "help", "Help", id="main.help-f1"),
        Binding("question_mark", "app.help", "Help", show=False, id="main.help-narrow"),
        Binding("f1", "app.help", "Help", show=False, id="main.help-f1-narrow"),
        Binding(
            "slash",
            "focus_search",
            "Search",
            show=False,
            id="main.search",
            tooltip="Put the cursor in the search box",
        ),
        # Letter keys act when a detail pane has focus (in the search box and the results
        # list letters are typed into the query); the function keys work everywhere (the
        # footer shows whichever applies).
        # r / F2 say what they switch to: "Raw" while the rendered body shows, "Rendered"
        # while the raw source shows (check_action hides the other one).
        Binding(
            "r",
            "raw",
            "Raw",
            id="main.toggle-raw",
            tooltip="Show the raw source with line numbers",
        ),
        Binding(
            "r",
            "rendered",
            "Rendered",
            id="main.toggle-rendered",
            tooltip="Show the rendered markdown",
        ),
        Binding("f2", "raw", "Raw", id="main.toggle-raw-f2"),
        Binding("f2", "rendered", "Rendered", id="main.toggle-rendered-f2"),
        Binding(
            "x",
            "explain",
            "Explain",
            id="main.explain",
            tooltip="Why the highlighted skill ranked where it did",
        ),
        Binding("f3", "explain", "Explain", id="main.explain-f3"),
        Binding(
            "v",
            "app.review",
            "Review",
            id="main.review",
            tooltip="All diagnostics across all skills",
        ),
        Binding("f4", "app.review", "Review", id="main.review-f4"),
        Binding(
            "s",
            "app.sessions",
            "Sessions",
            id="main.sessions",
            tooltip="Sessions, approvals and policy mode",
        ),
        Binding("f5", "app.sessions", "Sessions", id="main.sessions-f5"),
        Binding(
            "l",
            "force_load",
            "Load",
            id="main.force-load",
            tooltip="Force-load the highlighted skill into a session",
        ),
        Binding("f6", "force_load", "Load", id="main.force-load-f6"),
        Binding(
            "e",
            "toggle_enabled",
            "Enable",
            id="main.toggle-enabled",
            tooltip="Enable or disable the skill in the governance registry",
        ),
        Binding("f7", "toggle_enabled", "Enable", id="main.toggle-enabled-f7"),
        Binding(
            "f8",
            "app.updates",
            "Update",  # a verb like its neighbours; "Updates" would not fit 80 columns
            id="main.updates-f8",
            tooltip="Installed skills: fetch, review and approve updates",
        ),
        # priority: a key typed right after ↓ lands in the results, not in the query
        Binding("down", "browse", "Browse results", show=False, priority=True, id="main.browse"),
        Binding("escape", "escape", "Clear", show=False, id="main.escape"),
        *TAB_BINDINGS,
    ]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        """The skills shown (read here; the app runs its stages)."""
        self._debounce: Timer | None = None
        self._hold: ExitStack | None = None
        self._wide: bool | None = None
        self._refine: Timer | None = None
        self._shown: Skill | None = None
        self._detailed: Skill | None = None
        self._last_key = 0.0
        self._pending_line: int | None = None
        self._pin: Skill | None = None
        self._stale_details = False
        self._diagnostic_count = 0
        self._listing: tuple[Catalog, Ranked] | None = None
        """The listing (empty query) and the catalog it lists: lint, index and tools
        leave it as it is (10-15 ms at 10k skills on the event loop, once per stage)."""
        self._counts: tuple[int, tuple[int, dict[str, int]]] | None = None
        self._results: ResultsList | None = None
        self.last_ranked: Ranked | None = None
        self.early = False
        """The results list shows the rows kept from the last launch (:meth:`show_early`)
        until discovery's catalog replaces them."""
        self.listed_version = -1
        """The app's ``catalog_version`` the results list was last ranked for (-1: none
        yet); it equals the app's once a change is searched and shown (tests wait on it)."""
        self.seen_by: tuple[str, frozenset[Path]] | None = None
        """"As seen by" filter: an agent's name and the SKILL.md files it lists."""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield SearchBox(
                    placeholders=SEARCH_PLACEHOLDERS,
                    id="search",
                    select_on_focus=False,  # type-ahead from the results appends
                    pass_keys=[alt_char for _tab, _label, alt_char in TABS],
                )
                with Horizontal(id="status-row"):
                    yield StatusLine("", id="status")
                    yield ProgressBar(
                        total=None, show_eta=False, show_percentage=False, id="progress"
                    )
                yield self._results_list(
                    pass_keys=[
                        *(str(n) for n in range(1, len(TABS) + 1)),
                        "question_mark",
                        "slash",
                        *(alt_char for _tab, _label, alt_char in TABS),
                    ],
                )
            with TabbedContent(id="tabs"):
                with TabPane("Preview", id="tab-preview"):
                    yield PreviewPane(id="preview")
                with TabPane("Diagnostics", id="tab-diagnostics"):
                    yield DiagnosticsList(id="diagnostics")
                with TabPane("Tools", id="tab-tools"):
                    yield ToolsTable(id="tools")
                    yield ToolsetTable(id="toolsets")
                with TabPane("Files", id="tab-files"):
                    yield ResourcesList(id="resources")
                with TabPane("Explain", id="tab-explain"):
                    yield ExplainView(id="explain")
        yield DeckFooter()

    def on_mount(self) -> None:
        deck = self.deck
        if deck.deterministic:
            self.query_one("#search", Input).cursor_blink = False
            self.query_one("#raw", TextArea).cursor_blink = False
        # Empty panes first: the catalog watcher below lists the skills at once when
        # discovery finished before this screen mounted (emptied after it, they stayed so).
        self.query_one(ResultsList).show([], 0, self.workspace)
        self.query_one(PreviewPane).show(None)
        self.watch(self.query_one("#search", Input), "value", self._query_changed, init=False)
        self.watch(self.app, "catalog_version", self._catalog_changed)
        self.watch(self.app, "discovering", self._progress_changed)
        self.watch(self.app, "discovered", self._progress_changed, init=False)
        self.watch(self.app, "stage", self._progress_changed, init=False)
        self.watch(self.app, "store_version", self._session_changed, init=False)
        self.watch(self.app, "session_id", self._session_changed, init=False)
        # Tab goes from the results straight into the shown pane (the tab strip is
        # reached with alt+1..5 or the mouse).
        self.query_one("#tabs", TabbedContent).query_one(Tabs).can_focus = False

    # ----------------------------------------------------------------- status

    def _progress_changed(self, _value: object = None) -> None:
        deck = self.deck
        bar = self.query_one("#progress", ProgressBar)
        bar.display = deck.discovering
        if deck.discovering:
            count = deck.discovered or len(self.workspace.catalog.skills)
            self.query_one(StatusLine).show_progress(deck.stage, count, early=self.early)
        elif self.last_ranked is not None:
            self._show_status(self.last_ranked)
        if not deck.discovering and self._detailed is None and self.is_mounted:
            self.show_skill(None)  # the empty-catalog hint, once discovery is done

    def _show_status(self, ranked: Ranked) -> None:
        if self.deck.discovering:
            self._progress_changed()
            return
        self.query_one(StatusLine).show_ranked(
            ranked,
            threshold=self.workspace.settings.confidence_threshold,
            deterministic=self.deck.deterministic,
            stage=self.deck.stage,
            counts=self._listed_counts() if not ranked.query.strip() else (0, {}),
        )

    def _listed_counts(self) -> tuple[int, dict[str, int]]:
        """The workspace's listed counts, kept per catalog version (15 ms at 10k skills:
        every Esc would pay it)."""
        version = self.deck.catalog_version
        if self._counts is None or self._counts[0] != version:
            self._counts = (version, self.workspace.listed_counts())
        return self._counts[1]

    # ----------------------------------------------------------------- search

    @property
    def query_text(self) -> str:
        """The text in the search box."""
        return self.query_one("#search", Input).value

    def _query_changed(self, _value: str) -> None:
        """The query changed: a watcher of the box's value, so it runs inside the key's
        own handling and the re-ranked list is painted in the same frame as the typed
        character (an ``Input.Changed`` message arrives after that frame: one frame,
        15-20 ms, later at 10k skills, ``tests/benchmarks/bench_felt.py``)."""
        if self._shown is not self._detailed:
            # Still typing: the detail panes wait for a pause after this keystroke too.
            self._details(self._shown, TYPING_DETAIL_DELAY)
        preview = self.query_one(PreviewPane)
        if preview.is_loading:
            preview.stop_loading()
            self._detailed = None  # filled again once typing pauses
            self._details(self._shown, TYPING_DETAIL_DELAY)
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        now = time.monotonic()
        quiet = now - self._last_key
        self._last_key = now
        delay = self.deck.debounce
        if delay <= 0 or quiet >= delay:
            self.run_search()
        else:
            self._debounce = self.set_timer(delay, self.run_search)

    @on(ResultsList.TypeAhead)
    def _type_ahead(self, event: ResultsList.TypeAhead) -> None:
        """Letters typed in the results go on the end of the query (as in fzf), and the
        search box takes the focus for the rest."""
        search = self.query_one("#search", SearchBox)
        search.cursor_position = len(search.value)
        search.insert_text_at_cursor(event.character)
        search.focus()

    @on(ResultsList.Escaped)
    def _results_escaped(self) -> None:
        self.action_escape()

    @on(Input.Submitted, "#search")
    def _query_submitted(self) -> None:
        self.query_one(ResultsList).focus()

    def run_search(self, keep: Skill | None = None) -> None:
        """Re-rank for the current query: at once when the index is ready and idle (see
        :meth:`_rank_now`), else in an exclusive thread worker."""
        self._debounce = None
        if self._refine is not None:
            self._refine.stop()
            self._refine = None
        query = self.query_text
        version = self.deck.catalog_version
        ranked = self._rank_now(query)
        if ranked is None:
            self._search(query, keep, False, version)
        else:
            self.workers.cancel_group(self, "search")  # an older answer is stale now
            self._hold_frame()
            self._apply(ranked, keep, version)

    def _hold_frame(self) -> None:
        """Hold repaints for :data:`FRAME_HOLD`, so the search box, the status line and the
        list (each reports its repaint from its own task) are painted in one frame."""
        if self._hold is not None:
            return
        self._hold = hold = ExitStack()
        hold.enter_context(self.app.batch_update())

        def release() -> None:
            self._hold = None
            hold.close()
            self.check_idle()  # the screen repaints what became dirty meanwhile

        self.app.set_timer(FRAME_HOLD, release)  # the app's timer: runs even if we close

    def _rank_now(self, query: str) -> Ranked | None:
        """Rank on the event loop when nothing can make the search wait: the listing of
        an empty query, or the index is loaded and no stage or refresh is running (checked
        under the workspace lock, which every stage takes to swap its result in). None:
        use the worker.

        Measured with ``tests/benchmarks/bench_felt.py`` (10k skills, tmux): the search
        takes 1-2 ms, but a thread worker's round trip put the list one frame after the
        search box's echo, 15-25 ms later; ranked here, both land in the same frame.
        """
        deck = self.deck
        workspace = self.workspace

        def may_wait() -> bool:  # the listing (no query) never reads the index
            busy = deck.discovering or deck.refreshing or not workspace.has_index("all")
            return busy and bool(query.strip())

        if not query.strip() and self._listing is not None:
            catalog, listing = self._listing
            if catalog is workspace.catalog:  # Esc, or a stage after discovery's
                return Ranked(query, listing.hits, listing.total, 0.0)
        if may_wait() or not workspace.lock.acquire(blocking=False):
            return None
        try:
            if may_wait():
                return None
            catalog = workspace.catalog
            ranked = rank(workspace, query, RESULT_LIMIT)
            if not query.strip():  # the same rows until discovery makes a new catalog
                self._listing = (catalog, ranked)
            return ranked
        except Exception:
            return None  # the worker runs it again and reports the error
        finally:
            workspace.lock.release()

    def _refine_search(self) -> None:
        self._refine = None
        if self.last_ranked is not None and self.last_ranked.query == self.query_text:
            self._search(self.query_text, None, True, self.listed_version)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, query: str, keep: Skill | None, semantic: bool, version: int) -> None:
        worker = get_current_worker()
        catalog = self.workspace.catalog  # read first: a newer one only makes a miss
        try:
            ranked = rank(self.workspace, query, RESULT_LIMIT, semantic=semantic)
            if not query.strip():
                self._listing = (catalog, ranked)
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        except Exception as exc:
            self.app.call_from_thread(self.notify, f"search failed: {exc}", severity="error")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._apply, ranked, keep, version)

    def _apply(self, ranked: Ranked, keep: Skill | None, version: int) -> None:
        if ranked.query != self.query_text:
            return  # a newer query is on its way
        if version < self.listed_version:
            return  # a worker's answer for an older catalog, queued after a newer one
        hits = ranked.hits
        total = ranked.total
        if self.seen_by is not None:
            hits = [h for h in hits if h.skill.path in self.seen_by[1]]
            total = len(hits)
        pin = self._pin
        if pin is not None:
            self._pin = None
            keep = pin
            if all(h.skill.path != pin.path for h in hits):
                hits = [Hit(pin), *hits]
                total += 1
        self.last_ranked = ranked
        self.listed_version = version
        if self.early:
            self.early = False
            self.refresh_bindings()  # the skill actions that write are back
        results = self.query_one(ResultsList)
        results.show(hits, total, self.workspace, keep=keep)
        if not hits and self._detailed is None:
            self.query_one(PreviewPane).show(None, hint=self._empty_hint())  # says why
        if self._stale_details:
            self._stale_details = False
            if results.current is self._detailed:
                self.show_skill(results.current)  # same skill, new state (registry, lint)
        self._show_status(ranked)
        if not ranked.semantic and ranked.query.strip() and self.workspace.semantic():
            self._refine = self.set_timer(SEMANTIC_PAUSE, self._refine_search)
        if self._pending_line is not None:
            line, self._pending_line = self._pending_line, None
            self.query_one("#tabs", TabbedContent).active = "tab-preview"
            self.query_one(PreviewPane).show(results.current, line)

    def show_early(self, skills: list[Skill], total: int) -> None:
        """List the first rows of the catalog before discovery ends: the store kept them
        for this very catalog (:func:`~skilldeck.core.workspace.launch_discovery`). The
        status line says so, and the skill actions that write wait for the catalog, which
        replaces the rows 0.4-0.6 s later at 10k skills; first rows came at 0.65 s instead of
        1.07 s there (CPU 0.59 s instead of 0.93 s: ``tests/benchmarks/bench_felt.py``)."""
        if self.workspace.generation or self.query_text.strip() or self.seen_by is not None:
            return  # the catalog (or a search) is on the screen already
        self.early = True
        self.query_one(ResultsList).show([Hit(s) for s in skills], total, self.workspace)
        self._progress_changed()
        self.refresh_bindings()

    def _catalog_changed(self, _version: int) -> None:
        self._stale_details = True
        self.query_one(ResultsList).forget_rows()
        current = self.query_one(ResultsList).current
        if current is not None:
            current = self.workspace.catalog.by_path(current.path)
        self.run_search(keep=current)

    # ----------------------------------------------------------------- detail panes

    @on(ResultsList.SkillHighlighted)
    def _skill_highlighted(self, event: ResultsList.SkillHighlighted) -> None:
        if (event.skill is None) != (self._shown is None):
            self.refresh_bindings()  # skill actions become (un)available
        self._shown = event.skill
        typing = isinstance(self.focused, Input) and self.focused.id == "search"
        self._details(event.skill, TYPING_DETAIL_DELAY if typing else DETAIL_DELAY)

    @work(exclusive=True, group="details", exit_on_error=False)
    async def _details(self, skill: Skill | None, delay: float) -> None:
        """Fill the panes once the highlight rests (typing and held arrows pass first)."""
        await asyncio.sleep(delay)
        if self.app.is_running and self.is_attached:  # not while the app shuts down
            self.show_skill(skill)

    @on(ResultsList.SkillChosen)
    def _skill_chosen(self, event: ResultsList.SkillChosen) -> None:
        self.query_one("#tabs", TabbedContent).active = "tab-preview"

    def show_skill(self, skill: Skill | None) -> None:
        """Fill every detail pane for ``skill``."""
        self._detailed = skill
        workspace = self.workspace
        self.query_one(PreviewPane).show(skill, hint=self._empty_hint())
        diagnostics = workspace.diagnostics_for(skill) if skill else None
        self.query_one(DiagnosticsList).show(diagnostics)
        self._diagnostic_count = len(diagnostics or ())
        self._label_diagnostics_tab()
        availability = workspace.availability.get(skill.path) if skill else None
        self.query_one(ToolsTable).show(availability, loading=self.deck.discovering)
        self._show_toolsets(skill)
        self.query_one(ResourcesList).show(skill)
        tabs = self.query_one("#tabs", TabbedContent)
        if skill and tabs.active == "tab-explain" and self.query_text.strip():
            self._explain(self.query_text, skill)
        else:
            self.query_one(ExplainView).show(Text(EXPLAIN_HINT, style="dim") if skill else Text(""))

    def _show_toolsets(self, skill: Skill | None) -> None:
        """Show the toolset table only for a skill that declares toolsets."""
        table = self.query_one(ToolsetTable)
        table.display = bool(skill and skill.toolsets)
        self.query_one("#tab-tools", TabPane).set_class(table.display, "has-toolsets")
        if skill is not None and skill.toolsets:
            table.show(None)
        self._load_toolsets(skill)

    def _session_changed(self, _value: object = None) -> None:
        """Approval states follow the session store and the session in use."""
        self._load_toolsets(self._detailed)

    def _load_toolsets(self, skill: Skill | None) -> None:
        deck = self.deck
        self.query_one(ToolsetTable).load(skill, deck.settings, deck.session_id, lambda: deck.store)

    def _label_diagnostics_tab(self) -> None:
        """ "Diagnostics (3)", or "Diag (3)" where the five tabs would not fit."""
        name = "Diag" if self.size.width < NARROW_SCREEN else "Diagnostics"
        count = self._diagnostic_count
        label = f"{name} ({count})" if count else name
        tab = self.query_one("#tabs", TabbedContent).get_tab("tab-diagnostics")
        if str(tab.label) != label:
            tab.label = label

    def on_resize(self) -> None:
        """Shorten the tab labels and the footer on narrow terminals."""
        self._label_diagnostics_tab()
        wide = self.size.width >= FOOTER_WITH_HELP
        if wide != self._wide:  # a footer rebuild costs a full frame: only on a change
            self._wide = wide
            self.refresh_bindings()

    async def action_help(self) -> None:
        """Show the help screen (the footer's Help entry)."""
        await self.run_action("app.help")

    def _empty_hint(self) -> Text | None:
        """Where skills were looked for and how to add one, once discovery found none;
        why a query lists no skill."""
        if self.deck.discovering:
            return None
        if not self.workspace.catalog.skills:
            return empty_catalog_hint([root.path for root in self.workspace.roots()])
        if self.query_text.strip() and not self.query_one(ResultsList).hits:
            return no_match_hint(self.query_text)
        return None

    @on(DiagnosticsList.JumpTo)
    def _jump(self, event: DiagnosticsList.JumpTo) -> None:
        self.query_one("#tabs", TabbedContent).active = "tab-preview"
        self.query_one(PreviewPane).goto_line(event.diagnostic.line or 1)
        self.query_one("#raw", TextArea).focus()

    @on(ResourcesList.Open)
    def _open_resource(self, event: ResourcesList.Open) -> None:
        from skilldeck.app.dialogs.resource_dialog import ResourceDialog

        self.app.push_screen(ResourceDialog(event.skill, event.rel_path))

    def open_skill(self, skill: Skill, line: int | None = None, query: str | None = None) -> None:
        """Select ``skill`` and optionally jump to ``line``; the search text stays as the
        user typed it, or becomes ``query`` (control characters as spaces) when given (the
        skill is pinned on top when the query does not match it)."""
        if query is not None:
            shown = "".join(c if c.isprintable() else " " for c in query)
            self.query_one("#search", Input).value = " ".join(shown.split())
        self._pin = skill
        self._pending_line = line
        self.run_search(keep=skill)
        self.query_one(ResultsList).focus()

    # ----------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Grey out skill actions while nothing is highlighted."""
        if action == "help":
            return self.size.width >= FOOTER_WITH_HELP
        if action in ("raw", "rendered"):
            raw = self.query_one(PreviewPane).raw
            if raw != (action == "rendered"):
                return False  # the key says what it switches to
        if action in SKILL_ACTIONS and self.current is None:
            return None
        if action in WRITE_ACTIONS and self.early:
            return None
        if action == "browse":
            focused = self.focused
            return isinstance(focused, SearchBox)  # elsewhere ↓ is the widget's own
        return True

    @property
    def current(self) -> Skill | None:
        """The highlighted skill (asked for each key of the footer: the list is kept, not
        looked up in the DOM)."""
        return self._results.current if self._results is not None else None

    def _results_list(self, pass_keys: list[str]) -> ResultsList:
        self._results = ResultsList(id="results", pass_keys=pass_keys)
        return self._results

    def action_browse(self) -> None:
        """From the search box, move into the results."""
        results = self.query_one(ResultsList)
        self.set_focus(results)  # at once: the next key typed goes to the results
        if self.query_text and results.highlighted == 0 and len(results.hits) > 1:
            return
        if results.highlighted is None and results.hits:
            results.highlighted = 0

    def action_seen_by(self, agent: str) -> None:
        """List only the skills ``agent`` (an id of :data:`skilldeck.core.agents.AGENTS`)
        reads from its own folders; ``""`` lists every skill again."""
        if not agent:
            self.seen_by = None
            self.sub_title = ""
            self.run_search()
            return
        self._find_seen(agent)

    @work(thread=True, exclusive=True, group="seen-by", exit_on_error=False)
    def _find_seen(self, agent: str) -> None:
        from skilldeck.core.agents import AGENTS, agent_view, seen_paths

        spec = next((a for a in AGENTS if a.id == agent), None)
        if spec is None:
            return
        cwd = self.workspace.cwd or Path.cwd()
        view = agent_view(spec, self.workspace.catalog.skills, Path.home(), cwd, {})
        self.app.call_from_thread(self._show_seen_by, spec.name, seen_paths(view))

    def _show_seen_by(self, name: str, paths: frozenset[Path]) -> None:
        self.seen_by = (name, paths)
        self.sub_title = f"as seen by {name} ({len(paths)})"
        self.run_search()

    def action_focus_search(self) -> None:
        """Focus the search box."""
        self.query_one("#search", Input).focus()

    def action_escape(self) -> None:
        """An empty search box with the cursor in it, from anywhere on the screen (the
        first Esc after coming back from another screen too)."""
        search = self.query_one("#search", SearchBox)
        search.clear_query()
        search.focus()

    def action_tab(self, tab: str) -> None:
        """Show one of the detail tabs."""
        self.query_one("#tabs", TabbedContent).active = tab

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-explain" and self.current is not None and self.query_text.strip():
            self._explain(self.query_text, self.current)

    def action_toggle_raw(self) -> None:
        """Toggle the raw source view."""
        self.query_one("#tabs", TabbedContent).active = "tab-preview"
        self.query_one(PreviewPane).action_toggle_raw()

    def action_raw(self) -> None:
        """Show the raw source with line numbers."""
        self.query_one("#tabs", TabbedContent).active = "tab-preview"
        self.query_one(PreviewPane).raw = True

    def action_rendered(self) -> None:
        """Show the rendered markdown."""
        self.query_one("#tabs", TabbedContent).active = "tab-preview"
        self.query_one(PreviewPane).raw = False

    def action_explain(self) -> None:
        """Show why the highlighted skill ranked where it did."""
        skill = self.current
        if skill is None:
            return
        self.query_one("#tabs", TabbedContent).active = "tab-explain"
        self._explain(self.query_text, skill)

    def _explain(self, query: str, skill: Skill) -> None:
        self.query_one(ExplainView).explain(self.workspace, query, skill)
