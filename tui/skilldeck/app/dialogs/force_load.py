"""Force-load a skill into a session: ask for arguments, show exactly what the model gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static, TextArea
from textual.widgets.text_area import Selection
from textual.worker import get_current_worker

from skilldeck.app.dialogs.guarded import GuardedDialog
from skilldeck.app.labels import clean
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Severity, Skill
from skilldeck.core.safe_text import for_terminal

if TYPE_CHECKING:
    from skilldeck.core.loader import LoadResult

NEW_SESSION = "__new__"

WARNING_LINES = 3
"""Most lines of warnings and findings shown (one each, cut to the width); past that the
last line counts the rest, which the Diagnostics tab lists."""

COMPACT_BELOW = 30
"""Screens shorter than this get one-line fields and buttons, so the text the model will
receive keeps most of the dialog (at 80x24: 13 lines instead of 4)."""


@dataclass(frozen=True, slots=True)
class ForceLoadOutcome:
    """What was loaded where.

    Attributes:
        session_id: The session the skill is now active in.
        skill: The skill's name.
        arguments: The arguments string given.
        tokens: Estimated tokens the model receives.
        truncated: Whether the body was cut.
    """

    session_id: str
    skill: str
    arguments: str
    tokens: int
    truncated: bool


class ForceLoadDialog(GuardedDialog[ForceLoadOutcome | None]):
    """Arguments in, exact model text out, then confirm (keys typed before it was shown
    are ignored)."""

    DEFAULT_CSS = """
    ForceLoadDialog {
        align: center middle;
    }
    ForceLoadDialog > Vertical {
        width: 92%;
        max-width: 120;
        height: 92%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    ForceLoadDialog #title {
        text-style: bold;
        width: 1fr;
    }
    ForceLoadDialog .row {
        height: auto;
    }
    ForceLoadDialog .row Label {
        width: 11;
        padding: 1 0 0 0;
    }
    ForceLoadDialog Select {
        width: 1fr;
    }
    ForceLoadDialog #arguments {
        width: 1fr;
    }
    ForceLoadDialog #facts {
        height: auto;
        margin-top: 1;
    }
    ForceLoadDialog #text {
        height: 1fr;
        min-height: 4;
        visibility: hidden;  /* until there is a text: an empty one numbers its one line */
    }
    ForceLoadDialog #warnings {
        height: auto;
        color: $warning;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ForceLoadDialog #buttons {
        height: auto;
        align-horizontal: right;
    }
    ForceLoadDialog #buttons Button {
        margin-left: 2;
    }
    ForceLoadDialog.-compact .row Label {
        padding: 0;
    }
    ForceLoadDialog.-compact #facts {
        margin-top: 0;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="force-load.cancel"),
        Binding("ctrl+s", "confirm", "Load into session", id="force-load.confirm", priority=True),
    ]

    def __init__(self, skill: Skill) -> None:
        super().__init__()
        self.skill = skill
        self.result: LoadResult | None = None
        self._plain: str | None = None

    def compose(self) -> ComposeResult:
        sessions = self._session_options()
        current = self.deck.session_id
        values = [value for _label, value in sessions]
        initial = current if current in values else NEW_SESSION
        with Vertical():
            yield Label(
                f"Force-load skill '{clean(self.skill.name)}' as operator", id="title", markup=False
            )
            # Arguments first: Tab goes from them to the session picker.
            with Horizontal(classes="row"):
                yield Label("Arguments")
                yield Input(
                    placeholder="$ARGUMENTS for the skill (optional; enter: next)",
                    id="arguments",
                    # coming back with Tab must not select the text (the next key would
                    # replace what was typed)
                    select_on_focus=False,
                )
            with Horizontal(classes="row"):
                yield Label("Session")
                yield Select(sessions, value=initial, allow_blank=False, id="session")
            yield Static("", id="facts")
            yield TextArea("", read_only=True, show_line_numbers=True, id="text")
            yield Static("", id="warnings")
            with Horizontal(id="buttons"):
                yield Button("Cancel (esc)", id="cancel")
                yield Button(
                    "Load into session (ctrl+s)", id="confirm", variant="primary", disabled=True
                )

    def _session_options(self) -> list[tuple[str, str]]:
        mode = self.deck.settings.session_mode
        options: list[tuple[str, str]] = []
        try:
            for session in self.deck.store.list():
                active = ", ".join(session.active_skills) or "no skills"
                options.append((f"{session.id} · {session.mode} · {active}", session.id))
        except SkilldeckError as exc:
            self.notify(exc.message, severity="error")
        options.append((f"+ new session ({mode} mode)", NEW_SESSION))
        return options

    def on_resize(self) -> None:
        """One-line fields and buttons on a short screen (see :data:`COMPACT_BELOW`)."""
        compact = self.size.height < COMPACT_BELOW
        self.set_class(compact, "-compact")
        for widget in (*self.query(Input), *self.query(Select), *self.query(Button)):
            widget.compact = compact

    def on_mount(self) -> None:
        if self.deck.deterministic:
            self.query_one("#arguments", Input).cursor_blink = False
            self.query_one("#text", TextArea).cursor_blink = False
        self.focus_after_guard(self.query_one("#arguments", Input))
        self._label_confirm()
        self._preview("")

    @on(Input.Changed, "#arguments")
    def _arguments_changed(self, event: Input.Changed) -> None:
        self._preview(event.value)

    @on(Input.Submitted, "#arguments")
    def _arguments_submitted(self) -> None:
        """Enter goes on to the session picker, never loads: what is loaded where is
        confirmed on the Load button (or ctrl+s), which names the session."""
        self.query_one("#session", Select).focus()

    @on(Select.Changed, "#session")
    def _session_changed(self) -> None:
        self._label_confirm()

    def _label_confirm(self) -> None:
        """The Load button names the session it writes to."""
        choice = self.query_one("#session", Select).value
        where = "a new session" if choice == NEW_SESSION else f"session {clean(str(choice))}"
        self.query_one("#confirm", Button).label = f"Load into {where} (ctrl+s)"

    @work(thread=True, exclusive=True, group="force-load-preview", exit_on_error=False)
    def _preview(self, arguments: str) -> None:
        worker = get_current_worker()
        door = self.deck.workspace.actions
        try:
            result = door.preview(self.skill, arguments)
            if self._plain is None:
                self._plain = door.preview(self.skill, "").text
        except SkilldeckError as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._show_error, exc)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, result)

    def _show(self, result: LoadResult) -> None:
        if result.arguments != self.query_one("#arguments", Input).value:
            return
        self.result = result
        facts = Text()
        facts.append("What the model will receive: ", style="bold")
        facts.append(f"~{result.tokens} tokens")
        facts.append(" · ")
        if result.truncated:
            facts.append(
                f"TRUNCATED (body ~{result.body_tokens} tokens > cap "
                f"{self.deck.settings.body_token_cap})",
                style="bold red",
            )
        else:
            facts.append("not truncated", style="green")
        line = _arguments_line(result.text, self._plain) if result.arguments else None
        if line is not None:
            facts.append(f"\narguments placed at line {line}", style="bold")
            facts.append(" (highlighted)", style="dim")
        if self.skill.allowed_tools:
            facts.append("\nallowed-tools join the session allowlist: ", style="bold")
            facts.append(clean(" ".join(self.skill.allowed_tools)))
        self.query_one("#facts", Static).update(facts)
        area = self.query_one("#text", TextArea)
        area.load_text(for_terminal(result.text, multiline=True))
        area.visible = True
        if line is not None:
            end = len(area.document.get_line(line - 1))
            area.selection = Selection((line - 1, end), (line - 1, 0))
            area.scroll_cursor_visible(center=True)
        lines = [*(f"⚠ {clean(w)}" for w in result.warnings), *self._findings()]
        if len(lines) > WARNING_LINES:
            more = len(lines) - WARNING_LINES + 1
            lines[WARNING_LINES - 1 :] = [f"+{more} more on the Diagnostics tab"]
        warnings = self.query_one("#warnings", Static)
        warnings.update(Text("\n".join(lines)))
        warnings.display = bool(lines)  # no blank line taken from the text
        self.query_one("#confirm", Button).disabled = False

    def _findings(self) -> list[str]:
        """The skill's lint and validation warnings and errors, one line each (what the
        Diagnostics tab lists: ``SL302 line 4: pipes a download into a shell``)."""
        lines = []
        for diag in self.deck.workspace.diagnostics_for(self.skill):
            if diag.severity in (Severity.ERROR, Severity.WARNING):
                at = f" line {diag.line}" if diag.line else ""
                lines.append(f"{diag.severity.value} {diag.code}{at}: {clean(diag.message)}")
        return lines

    def _show_error(self, exc: SkilldeckError) -> None:
        self.result = None
        self.query_one("#facts", Static).update(
            Text(f"Cannot load: {exc.code.value}: {clean(exc.message)}", style="bold red")
        )
        area = self.query_one("#text", TextArea)
        area.load_text("")
        area.visible = False  # an empty text still numbers its one line
        self.query_one("#confirm", Button).disabled = True

    def action_cancel(self) -> None:
        """Close without loading."""
        self.dismiss(None)

    def action_confirm(self) -> None:
        """Record the force-load in the session store (actor ``operator``)."""
        result = self.result
        if result is None or self.query_one("#confirm", Button).disabled:
            return
        self.query_one("#confirm", Button).disabled = True
        choice = self.query_one("#session", Select).value
        session_id = choice if isinstance(choice, str) and choice != NEW_SESSION else None
        self._commit(session_id, result)

    @work(thread=True, exclusive=True, group="force-load-commit", exit_on_error=False)
    def _commit(self, session_id: str | None, result: LoadResult) -> None:
        deck = self.deck
        try:
            loaded, session = deck.workspace.actions.force_load(
                self.skill, result.arguments, store=deck.store, session=session_id, source="tui"
            )
        except SkilldeckError as exc:
            self.app.call_from_thread(self._failed, exc.message)
            return
        done = loaded.result
        outcome = ForceLoadOutcome(
            session.id, self.skill.name, done.arguments, done.tokens, done.truncated
        )
        self.app.call_from_thread(self._done, outcome)

    def _failed(self, message: str) -> None:
        self.notify(message, title="Force-load failed", severity="error")
        self.query_one("#confirm", Button).disabled = False

    def _done(self, outcome: ForceLoadOutcome) -> None:
        self.deck.session_id = outcome.session_id
        self.dismiss(outcome)


def _arguments_line(text: str, plain: str | None) -> int | None:
    """1-based line of ``text`` where it first differs from the load without arguments."""
    if plain is None:
        return None
    lines, before = text.splitlines(), plain.splitlines()
    index = next(
        (i for i, (line, old) in enumerate(zip(lines, before, strict=False)) if line != old),
        min(len(lines), len(before)),
    )
    while index < len(lines) and not lines[index].strip():
        index += 1  # the blank line before an appended "ARGUMENTS: ..."
    return index + 1 if index < len(lines) else None
