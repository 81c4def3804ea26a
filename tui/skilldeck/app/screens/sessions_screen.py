"""Sessions: pick or create one, approve or deny tools, switch policy mode, read the audit."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from skilldeck.app.colors import WARNING, WARNING_STYLE
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean, literal
from skilldeck.app.widgets.fitted_input import FittedInput
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import FileRequest, approval_as_shown, parse_file_request
from skilldeck.core.sessions import MODES, run_outcome
from skilldeck.core.workspace import SessionRef

if TYPE_CHECKING:
    from skilldeck.core.sessions import AuditEntry, Session

MODE_MEANING = {
    "strict": "Only tools allowed by active skills or approved by you may run.",
    "approval": "Tools outside the allow-lists wait in the queue for your approval.",
    "permissive": "Every tool is allowed (and logged) without asking you.",
}
TOOL_PLACEHOLDERS = (
    "tool, e.g. Bash or github.* (enter: approve or deny)",
    "tool, e.g. Bash or github.*",
    "tool name or pattern",
    "tool",
)
"""The tool box's placeholder, longest first: the one that fits is shown."""

ENDED_FOLD = "__ended__"
"""Id of the sessions list's row that folds the ended sessions."""

MODE_STYLE = {"strict": "bold red", "approval": WARNING_STYLE, "permissive": "bold green"}


def _clock(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def session_row(session: Session, current: str | None) -> Text:
    """One line of the sessions list."""
    text = Text()
    text.append("● " if session.id == current else "  ", style="bold green")
    text.append(clean(session.id), style="bold")
    text.append(f" {session.mode}", style=MODE_STYLE.get(session.mode, ""))
    names = ", ".join(session.active_skills) if session.skills else "no skills"
    text.append(f" · {clean(names)}", style="dim")
    if session.pending:
        text.append(f" · {len(session.pending)} pending", style=WARNING_STYLE)
    if not session.is_open:
        text.append(" · ended", style="dim")
    return text


def short_entry(entry: str) -> str:
    """An approval entry as listed: a script or toolset with its skill digest cut to 12
    digits."""
    request = parse_file_request(entry)
    if request is None:
        return entry
    kind = request.entry.split("(", 1)[0]
    return f"{kind}({request.ref}@skill-sha256:{request.digest[:12]}…)"


def session_facts(session: Session) -> Table:
    """The detail table of one session."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True, width=10)
    table.add_column(ratio=1, overflow="fold")
    table.add_row("session", literal(session.id, style="bold"))
    if session.label:
        table.add_row("label", literal(session.label))
    table.add_row("mode", literal(session.mode, style=MODE_STYLE.get(session.mode, "")))
    table.add_row("created", literal(f"{_clock(session.created)} by {session.created_by or '?'}"))
    if not session.is_open:
        table.add_row("ended", _clock(session.ended))
    skills = Text()
    for i, active in enumerate(session.skills):
        if i:
            skills.append(", ")
        skills.append(clean(active.name), style="bold")
        skills.append(f" ({clean(active.actor)})", style="dim")
    table.add_row("skills", skills if session.skills else Text("none active", style="dim"))
    table.add_row("allowlist", literal(" ".join(session.allowed_tools) or "-"))
    approved = " ".join(short_entry(e) for e in session.approved)
    table.add_row("approved", literal(approved or "-", style="green"))
    table.add_row("denied", literal(" ".join(short_entry(e) for e in session.denied) or "-", "red"))
    return table


def pending_row(entry: str) -> Text:
    """One pending request: a tool as written, a script or toolset file with its short hash."""
    request = parse_file_request(entry)
    if request is None:
        return literal(entry, style=WARNING_STYLE)
    text = Text()
    text.append(f"{request.kind} ", style=WARNING)
    text.append(clean(request.ref), style=WARNING_STYLE)
    text.append(f" skill-sha256:{request.digest[:12]}…", style="dim")
    return text


def outcome_text(entry: AuditEntry) -> Text:
    """How a run ended, from its ``script_exit`` row, in the words ``skilldeck session
    show`` prints: ``exit 0`` (green); ``exit 3``, ``timed out`` or ``failed (why)`` (red)."""
    words, ok = run_outcome(entry.detail)
    return literal(words, style="green" if ok else "bold red")


def audit_table(entries: list[AuditEntry]) -> Table:
    """The newest audit rows, newest first; with an outcome column (a run's exit code)
    when a run ended among them."""
    runs = any(entry.action == "script_exit" for entry in entries)
    table = Table(box=None, expand=True, padding=(0, 1), header_style="bold")
    table.add_column("time", no_wrap=True)
    table.add_column("actor", no_wrap=True)
    table.add_column("action", no_wrap=True)
    if runs:  # beside the action: the subject is what a narrow screen cuts
        table.add_column("outcome", no_wrap=True)
    table.add_column("subject", ratio=1)
    for entry in reversed(entries):
        cells = [Text(_clock(entry.time)[11:]), literal(entry.actor), literal(entry.action)]
        if runs:
            cells.append(outcome_text(entry) if entry.action == "script_exit" else Text(""))
        table.add_row(*cells, literal(entry.subject))
    return table


class SessionsScreen(UsesDeck, Screen[None]):
    """The operator's manual override for agent sessions."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="sessions.back"),
        Binding("f1", "app.help", "Help", id="sessions.help"),
        Binding("n", "new_session", "New", id="sessions.new"),
        Binding(
            "u",
            "use_session",
            "Use",
            id="sessions.use",
            tooltip="Make the highlighted session the current one",
        ),
        Binding("a", "approve", "Approve", id="sessions.approve"),
        Binding("d", "deny", "Deny", id="sessions.deny"),
        Binding("m", "cycle_mode", "Mode", id="sessions.mode"),
        Binding("k", "end_session", "End", id="sessions.end"),
        Binding(
            "t",
            "focus_tool",
            "Tool…",
            id="sessions.tool",
            tooltip="Type a tool name to approve or deny",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._sessions: list[Session] = []
        self._selected: str | None = None
        self.show_ended = False
        """Whether the ended sessions are unfolded in the list."""
        self.listening = False
        """True once the live listener waits for changes newer than the screen loaded
        (stores that announce changes only; tests wait on it)."""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="sessions-body"):
            with Vertical(id="sessions-left"):
                yield Label("Sessions (open first, newest first)", classes="section")
                yield OptionList(id="session-list")
            with Vertical(id="session-detail"):
                with VerticalScroll(id="facts-scroll"):
                    yield Static("", id="session-facts")
                yield Label(
                    "Pending (tab here, then enter read · a approve · d deny)", classes="section"
                )
                yield OptionList(id="pending")
                with Horizontal(id="tool-row"):
                    yield FittedInput(placeholders=TOOL_PLACEHOLDERS, id="tool")
                    yield Button("Approve", id="approve", variant="success")
                    yield Button("Deny", id="deny", variant="error")
                yield Label("Audit log", classes="section")
                with VerticalScroll(id="audit-scroll"):
                    yield Static("", id="audit")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "sessions"
        self._selected = self.deck.session_id
        if self.deck.deterministic:
            self.query_one("#tool", Input).cursor_blink = False
        self.watch(self.app, "store_version", self._reload)
        # Tab goes from the sessions straight to their pending requests (the facts
        # scroll with the mouse).
        self.query_one("#facts-scroll").can_focus = False
        self.query_one("#session-list").focus()
        if not self.deck.deterministic:
            self._listen()

    # ----------------------------------------------------------------- loading

    def _reload(self, _version: int = 0) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="sessions-live", exit_on_error=False)
    def _listen(self) -> None:
        """While the screen is shown, wait for changes the store announces (PostgreSQL
        LISTEN/NOTIFY: a request made on another host shows within a second) and bump the
        app's ``store_version``, which reloads this screen. Stores that do not announce
        changes are left to the app's regular poll."""
        worker = get_current_worker()
        try:
            store = self.deck.store
            if not store.live:
                return
            mark = store.last_audit_id()
        except SkilldeckError:
            return  # the first load reports the problem
        self.listening = True
        while not worker.is_cancelled:
            try:
                current = store.wait_for_change(mark, timeout=1.0)
            except SkilldeckError as exc:
                self.app.call_from_thread(self.notify, exc.message, severity="error")
                continue
            if current != mark and not worker.is_cancelled:
                mark = current
                self.app.call_from_thread(setattr, self.deck, "store_version", current)

    @work(thread=True, exclusive=True, group="sessions", exit_on_error=False)
    def _load(self) -> None:
        try:
            store = self.deck.store
            sessions = store.list(include_ended=True)
            audit = store.audit(self._selected, limit=None) if self._selected else []
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        self.app.call_from_thread(self._loaded, sessions, audit[-200:])

    def _loaded(self, sessions: list[Session], audit: list[AuditEntry]) -> None:
        self._sessions = sessions
        ids = [s.id for s in sessions]
        if self._selected not in ids:
            first = next((s for s in sessions if s.is_open), sessions[0] if sessions else None)
            self._selected = first.id if first is not None else None
            if self._selected is not None:
                self._load()
        listing = self.query_one("#session-list", OptionList)
        if any(s.id == self._selected and not s.is_open for s in sessions):
            self.show_ended = True  # the session in use or looked at is an ended one
        if sessions:
            listing.set_options(self._session_options(sessions))
            shown = [option.id for option in listing.options]
            if self._selected in shown:
                with self.prevent(OptionList.OptionHighlighted):
                    listing.highlighted = shown.index(self._selected)
        else:
            listing.set_options(
                [
                    Option(
                        Text("No sessions yet: press n to create one.", style="dim"), disabled=True
                    )
                ]
            )
        self._show_detail(self.selected, audit)

    def _session_options(self, sessions: list[Session]) -> list[Option]:
        """Open sessions first; the ended ones under one row that enter folds and
        unfolds (:attr:`show_ended`)."""
        current = self.deck.session_id
        opened = [s for s in sessions if s.is_open]
        ended = [s for s in sessions if not s.is_open]
        options = [Option(session_row(s, current), id=s.id) for s in opened]
        if ended:
            sign, verb = ("▾", "hide") if self.show_ended else ("▸", "show")
            fold = Text(f"{sign} {len(ended)} ended (enter: {verb})", style="dim")
            options.append(Option(fold, id=ENDED_FOLD))
            if self.show_ended:
                options += [Option(session_row(s, current), id=s.id) for s in ended]
        return options

    @property
    def selected(self) -> Session | None:
        """The highlighted session."""
        for session in self._sessions:
            if session.id == self._selected:
                return session
        return None

    def _show_detail(self, session: Session | None, audit: list[AuditEntry]) -> None:
        facts = self.query_one("#session-facts", Static)
        pending = self.query_one("#pending", OptionList)
        if session is None:
            facts.update(Text("No session selected.", style="dim"))
            pending.set_options([])
            self.query_one("#audit", Static).update("")
            return
        facts.update(session_facts(session))
        if session.pending:
            # The highlight stays on the request looked at when the store reloads (it
            # went back to the first row, and d then denied another request).
            looked_at = pending.highlighted_option.id if pending.highlighted_option else None
            pending.set_options([Option(pending_row(tool), id=tool) for tool in session.pending])
            keep = session.pending.index(looked_at) if looked_at in session.pending else 0
            with self.prevent(OptionList.OptionHighlighted):
                pending.highlighted = keep
        else:
            pending.set_options([Option(Text("nothing waiting", style="dim"), disabled=True)])
        self.query_one("#audit", Static).update(audit_table(audit))

    @on(OptionList.OptionHighlighted, "#session-list")
    def _session_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id == ENDED_FOLD:
            return
        if event.option.id and event.option.id != self._selected:
            self._selected = event.option.id
            self._load()

    @on(OptionList.OptionSelected, "#session-list")
    def _session_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == ENDED_FOLD:
            self.show_ended = not self.show_ended
            listing = self.query_one("#session-list", OptionList)
            with self.prevent(OptionList.OptionHighlighted):
                listing.set_options(self._session_options(self._sessions))
                listing.highlighted = [o.id for o in listing.options].index(ENDED_FOLD)
            return
        if event.option.id:
            self._selected = event.option.id
            self.action_use_session()

    @on(OptionList.OptionSelected, "#pending")
    def _pending_selected(self, event: OptionList.OptionSelected) -> None:
        request = parse_file_request(event.option.id or "")
        if request is not None:
            self._review(request)

    # ----------------------------------------------------------------- actions

    def _tool_choice(self) -> str | None:
        """The highlighted request while the pending list has focus, else the typed tool;
        None when neither is (the sessions list has focus: no request is looked at)."""
        pending = self.query_one("#pending", OptionList)
        if self.focused is pending:
            option = pending.highlighted_option
            return option.id if option is not None and option.id else None
        return self.query_one("#tool", Input).value.strip() or None

    def action_new_session(self) -> None:
        """Create a session (default mode) and make it current."""
        self._change("create", None)

    def action_use_session(self) -> None:
        """Make the highlighted session the one operator actions apply to."""
        if self._selected is None:
            return
        self.deck.session_id = self._selected
        self.notify(f"Using session {self._selected}", timeout=3)
        self._load()

    def action_approve(self) -> None:
        """Approve the typed tool, or the highlighted pending one."""
        self._decide("approve")

    def action_deny(self) -> None:
        """Deny the typed tool, or the highlighted pending one."""
        self._decide("deny")

    def _decide(self, verdict: str, tool: str | None = None, asked: bool = False) -> None:
        """Approve or deny ``tool`` (default: :meth:`_tool_choice`) after a confirmation
        that names it and the session (``asked``: the tool dialog named them already; a
        confirmation then comes only when other pending requests are covered too)."""
        from skilldeck.app.dialogs.confirm import ConfirmDialog
        from skilldeck.core.sessions import tool_matches

        tool = tool or self._tool_choice()
        if tool is None:
            pending = self.query_one("#pending", OptionList)
            if pending.option_count and not pending.get_option_at_index(0).disabled:
                pending.focus()
                self.notify("Highlight the request in Pending, then press a or d again.", timeout=4)
            else:
                self.notify("Nothing pending: press t to type a tool.", severity="warning")
            return
        request = parse_file_request(tool)
        if request is not None and verdict == "approve":
            self._review(request)  # a file is approved only after reading it
            return
        session = self.selected
        others = [
            t
            for t in (session.pending if session is not None else [])
            if t != tool and tool_matches(tool, t)
        ]
        if asked and not others:
            self._change(verdict, tool)
            return
        verb = "Approve" if verdict == "approve" else "Deny"
        where = f" in session {clean(self._selected or '?')}"
        question = f"{verb} {clean(tool)}{where}?"
        if others:  # approving "Bash" also settles a pending "Bash(git push:*)"
            listed = ", ".join(clean(t) for t in others)
            question += (
                f"\n\nIt covers, and so also "
                f"{'approves' if verdict == 'approve' else 'denies'}, the pending "
                f"request(s): {listed}."
            )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._change(verdict, tool)

        self.app.push_screen(
            ConfirmDialog(question, confirm=verb, title=f"{verb} {clean(tool)}"), done
        )

    def _review(self, request: FileRequest) -> None:
        """Show the requested file and its hash; approve or deny as the operator answers."""
        from skilldeck.app.dialogs.request_review import RequestReviewDialog

        def done(verdict: str | None) -> None:
            if verdict in ("approve", "deny"):
                self._change(verdict, request.entry)

        self.app.push_screen(RequestReviewDialog(request, self._selected), done)

    def action_cycle_mode(self) -> None:
        """strict → approval → permissive → strict; a step that widens access (strict →
        approval → permissive) asks first."""
        from skilldeck.app.dialogs.confirm import ConfirmDialog

        session = self.selected
        if session is None:
            return
        index = MODES.index(session.mode) if session.mode in MODES else 0
        mode = MODES[(index + 1) % len(MODES)]
        if MODES.index(mode) < index:
            self._change("mode", mode)  # narrower: no question
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._change("mode", mode)

        self.app.push_screen(
            ConfirmDialog(
                f"Switch session {clean(session.id)} from {session.mode} to {mode}?\n\n"
                f"{MODE_MEANING[mode]}",
                confirm="Switch",
                title="Widen the policy",
            ),
            done,
        )

    def action_end_session(self) -> None:
        """End the highlighted session, after confirmation."""
        from skilldeck.app.dialogs.confirm import ConfirmDialog

        session = self.selected
        if session is None or not session.is_open:
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._change("end", None)

        self.app.push_screen(
            ConfirmDialog(
                f"End session {session.id}? Tool checks will answer no_session from now on.",
                confirm="End",
                title="End session",
            ),
            done,
        )

    def action_focus_tool(self) -> None:
        """Type a tool name."""
        self.query_one("#tool", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Approve or deny buttons."""
        if event.button.id == "approve":
            self.action_approve()
        elif event.button.id == "deny":
            self.action_deny()

    @on(Input.Submitted, "#tool")
    def _tool_submitted(self, event: Input.Submitted) -> None:
        """Enter in the tool box asks whether to approve or deny what was typed (an empty
        box goes on to the pending list)."""
        from skilldeck.app.dialogs.tool_decision import ToolDecisionDialog

        tool = event.value.strip()
        if not tool:
            self.query_one("#pending").focus()
            return
        if self._selected is None:
            self.notify("No session: press n to create one.", severity="warning")
            return

        def done(verdict: str | None) -> None:
            if verdict in ("approve", "deny"):
                self._decide(verdict, tool, asked=True)
                # decided: the letter keys act on the lists again
                self.call_after_refresh(self.query_one("#pending").focus)

        self.app.push_screen(ToolDecisionDialog(tool, self._selected), done)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys belong to the tool box while it has focus."""
        if isinstance(self.focused, Input) and action not in ("close",):
            return None
        if (
            action in ("approve", "deny", "cycle_mode", "end_session", "use_session")
            and self._selected is None
        ):
            return None
        return True

    def action_close(self) -> None:
        """Back to the main screen (or out of the tool box)."""
        if isinstance(self.focused, Input):
            self.query_one("#session-list").focus()
            return
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="sessions-change", exit_on_error=False)
    def _change(self, what: str, value: str | None) -> None:
        store, door = self.deck.store, self.deck.workspace.actions
        session_id = self._selected
        try:
            if what == "create":
                session_id = door.create(store, actor="operator").id
                message = f"Created session {session_id}"
            elif session_id is None:
                return
            elif what in ("approve", "deny") and value:
                here = SessionRef(store, session_id)
                if what == "approve":
                    door.approve(self._as_shown(value), actor="operator", session=here)
                else:
                    door.deny(value, actor="operator", session=here)
                message = f"{'Approved' if what == 'approve' else 'Denied'} {value}"
            elif what == "mode" and value:
                door.set_mode(value, actor="operator", session=SessionRef(store, session_id))
                message = f"Mode is now {value}"
            elif what == "end":
                door.end(actor="operator", session=SessionRef(store, session_id))
                message = f"Ended session {session_id}"
            else:
                return
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
            return
        self.app.call_from_thread(self._changed, what, session_id, message)

    def _as_shown(self, entry: str) -> str:
        """A tool as typed; a file request only while its skill still has the requested
        digest, the one the review dialog showed."""
        request = parse_file_request(entry)
        if request is None:
            return entry
        return approval_as_shown(request, self.deck.workspace.by_name(request.skill))

    def _changed(self, what: str, session_id: str | None, message: str) -> None:
        if what == "create":
            self._selected = session_id
            self.deck.session_id = session_id
        if what in ("approve", "deny"):
            self.query_one("#tool", Input).value = ""
        self.notify(message, timeout=3)
        self.deck.after_store_change()
        self._load()
