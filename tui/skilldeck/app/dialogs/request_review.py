"""Read a requested script (or toolset module) and what its approval pins (the digest of
every file of the skill, and which files changed since the request) before approving it.

Approving approves exactly what was shown: only while every file read in the dialog had
the requested digest; a skill changed since the request can only be denied."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Static, TextArea

from skilldeck.app.colors import WARNING
from skilldeck.app.dialogs.guarded import GuardedDialog
from skilldeck.app.labels import clean, literal
from skilldeck.app.widgets.preview_pane import language_for
from skilldeck.core.execution import FileRequest, FileReview, review_file_request

APPROVE, DENY = "approve", "deny"
"""What the dialog answers (None: the operator decided nothing)."""


def review_facts(review: FileReview) -> Table:
    """The digest lines and what they mean for the approval."""
    request = review.request
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True, width=9)
    table.add_column(ratio=1, overflow="fold")
    table.add_row("requested", Text(f"skill-sha256:{request.digest}"))
    if review.error is not None:
        table.add_row("on disk", literal(review.error, style="bold red"))
    elif review.matches:
        same = f"✔ same digest: all {review.files} files of the skill are as requested"
        table.add_row("on disk", Text(same, "green"))
    else:
        table.add_row("on disk", Text(f"skill-sha256:{review.disk_digest}", style="bold red"))
        table.add_row("changed", changes_text(review))
    if review.paths and request.path in review.paths:
        where = review.paths.index(request.path) + 1
        shown = Text(f"{where}/{len(review.paths)} {clean(request.path)}")
        shown.append("   [ ] other files of the skill", style="dim")
        table.add_row("file", shown)
    size = f"{review.size} bytes"
    if review.error is None and not review.binary:
        size += f" · {review.lines} lines"
        if review.truncated:
            size += f" · only the first {len(review.text.encode())} bytes are shown"
    table.add_row("size", Text(size if review.error is None else "-"))
    return table


def changes_text(review: FileReview) -> Text:
    """The files that differ from the requested digest, one per line."""
    if review.changes is None:
        return Text("the requested file list is not known on this machine", style=WARNING)
    text = Text()
    for i, (change, path) in enumerate(review.changes):
        text.append(("\n" if i else "") + f"{change:<8}", style="bold red")
        text.append(clean(path))
    return text


def review_warning(review: FileReview) -> Text | None:
    """What must stop the operator before approving, or None."""
    if review.error is not None:
        return Text(
            "The file cannot be read, so it cannot be reviewed: deny the request, or fix the "
            "skill and let the agent ask again.",
            style="bold red",
        )
    notes: list[str] = []
    if not review.matches:
        notes.append(
            "CHANGED since the request: what is shown is not what was requested, so it "
            "cannot be approved. Deny, and let the agent ask again."
        )
    if review.binary:
        notes.append("The file is binary: its content is not shown.")
    if review.escaped:
        notes.append(
            "The file holds control or bidirectional characters (shown escaped, e.g. \\x1b, "
            "<U+202E>): they can make code read differently from what runs."
        )
    return Text("\n".join(notes), style="bold red") if notes else None


class RequestReviewDialog(GuardedDialog[str | None]):
    """The text and SHA-256 of a requested file, then approve, deny or cancel.

    Dismisses with :data:`APPROVE`, :data:`DENY` or None.
    """

    DEFAULT_CSS = """
    RequestReviewDialog {
        align: center middle;
    }
    RequestReviewDialog > Vertical {
        width: 94%;
        max-width: 130;
        height: 94%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    RequestReviewDialog #title {
        text-style: bold;
    }
    RequestReviewDialog #facts {
        height: auto;
    }
    RequestReviewDialog #warning {
        height: auto;
        display: none;
    }
    RequestReviewDialog #warning.shown {
        display: block;
    }
    RequestReviewDialog TextArea {
        height: 1fr;
    }
    RequestReviewDialog #buttons {
        height: 1;
        align-horizontal: right;
    }
    RequestReviewDialog Button {
        margin-left: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="review.cancel"),
        Binding("a", "approve", "Approve", id="review.approve"),
        Binding("d", "deny", "Deny", id="review.deny"),
        Binding("right_square_bracket", "other_file(1)", "Next file", id="review.next_file"),
        Binding("left_square_bracket", "other_file(-1)", "Previous file", id="review.prev_file"),
    ]

    def __init__(self, request: FileRequest, session_id: str | None = None) -> None:
        super().__init__()
        self.request = request
        """The pending request shown."""
        self.session_id = session_id
        self.review: FileReview | None = None
        """The requested file as read (None until the read finishes)."""
        self.shown = request.path
        """The file of the skill on screen (the approval pins them all)."""
        self.unlike_request = False
        """A file was read from a skill without the requested digest: no approval."""

    def _title(self) -> str:
        request = self.request
        title = f"Approve {request.kind} {clean(request.ref)}?"
        if self.session_id:
            title += f"  (session {clean(self.session_id)})"
        return title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title(), id="title", markup=False)
            yield Static(Text("reading the file…", style="dim"), id="facts")
            yield Static("", id="warning")
            yield TextArea(
                "", read_only=True, show_line_numbers=True, soft_wrap=False, id="content"
            )
            with Horizontal(id="buttons"):
                yield Button("Cancel (esc)", id="cancel", compact=True)
                yield Button("Deny (d)", id="deny", variant="error", compact=True)
                yield Button(
                    "Approve (a)", id="approve", variant="success", disabled=True, compact=True
                )

    def on_mount(self) -> None:
        area = self.query_one("#content", TextArea)
        if self.deck.deterministic:
            area.cursor_blink = False
        # arrows and page keys scroll the text; a, d and escape decide (once keys typed
        # before the dialog was shown have been ignored)
        self.focus_after_guard(area)
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _read(self) -> None:
        skill = self.deck.workspace.by_name(self.request.skill)
        review = review_file_request(replace(self.request, path=self.shown), skill)
        self.app.call_from_thread(self._show, review)

    def action_other_file(self, step: int) -> None:
        """Show the next (or previous) file of the skill: the approval covers every one."""
        paths = self.review.paths if self.review is not None else ()
        if self.shown not in paths:
            return
        self.shown = paths[(paths.index(self.shown) + step) % len(paths)]
        self._read()

    def _show(self, review: FileReview) -> None:
        if review.request.path == self.request.path:
            self.review = review
        if review.error is None and not review.matches:
            self.unlike_request = True
        self.query_one("#facts", Static).update(review_facts(review))
        warning = review_warning(review)
        box = self.query_one("#warning", Static)
        box.update(warning or "")
        box.set_class(warning is not None, "shown")
        area = self.query_one("#content", TextArea)
        if review.binary:
            area.load_text(f"(binary file, {review.size} bytes: not shown)")
        elif review.error is None:
            area.language = language_for(review.request.path)
            area.load_text(review.text)
        self.query_one("#approve", Button).disabled = not self._approvable()
        self.refresh_bindings()

    def _approvable(self) -> bool:
        """The requested file was read, and everything shown had the requested digest."""
        review = self.review
        return review is not None and review.error is None and not self.unlike_request

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Approving waits until the file has been read (and could be); nothing runs
        while keys typed before the dialog was shown are ignored."""
        if self.guarded:
            return False
        if action == "approve":
            return self._approvable()
        return True

    def action_approve(self) -> None:
        """Approve the request (pins the requested digest: the files shown)."""
        if self._approvable():
            self.dismiss(APPROVE)

    def action_deny(self) -> None:
        """Deny the request."""
        self.dismiss(DENY)

    def action_cancel(self) -> None:
        """Decide nothing."""
        self.dismiss(None)
