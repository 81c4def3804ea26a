"""Remote skills (F10): the skills of the remote catalogs, their origin and review state,
a preview of exactly what the remote serves, and the operator's approval of it.

The list comes from the workspace's remote source (``Workspace.remotes``): each skill's
name (``label:name``), its remote, its review state (``approved``, ``changed`` since the
approval, ``unreviewed``) and description. Enter fetches the highlighted skill as it is
now (its SKILL.md verified against the entry's digest) and shows its digest, what changed
since it was approved, its files and its SKILL.md. ``a`` approves exactly the digest shown
(the rule of ``skilldeck remote approve``): a remote that serves something else by then
gets nothing approved, and the skill must be previewed again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label, Static, TextArea

from skilldeck.app.colors import WARNING_STYLE
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.safe_text import for_terminal

if TYPE_CHECKING:
    from skilldeck.core.remote import RemoteEntry
    from skilldeck.core.workspace import Workspace

REVIEW_STYLE = {"approved": "green", "changed": "bold red", "unreviewed": WARNING_STYLE}
"""How each review state is shown."""


class RemoteScreen(UsesDeck, Screen[None]):
    """The remote catalogs' skills: list, preview, approve."""

    DEFAULT_CSS = """
    RemoteScreen #remote-body {
        height: 1fr;
    }
    RemoteScreen #remote-notes, RemoteScreen #remote-facts {
        height: auto;
        padding: 0 1;
    }
    RemoteScreen #remote-skills {
        height: 1fr;
        max-height: 12;
    }
    RemoteScreen .section {
        padding: 0 1;
        text-style: bold;
        color: $text-muted;
    }
    RemoteScreen #remote-text {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="remote.back"),
        Binding("f1", "app.help", "Help", id="remote.help"),
        Binding("f10", "close", "Back", show=False, id="remote.close-f10"),
        Binding("enter", "preview", "Preview", id="remote.preview"),
        Binding("a", "approve", "Approve shown", id="remote.approve"),
        Binding("ctrl+r", "reload", "Reload", id="remote.reload"),
    ]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.entries: list[tuple[RemoteEntry, str]] = []
        """The skills listed, with their review state, in the table's order."""
        self.shown: tuple[str, str] | None = None
        """``(name, digest)`` of the skill previewed: what ``a`` approves."""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Vertical(id="remote-body"):
            yield Static(Text("Asking the remote catalogs…", style="dim"), id="remote-notes")
            yield DataTable[Text](id="remote-skills", cursor_type="row", zebra_stripes=True)
            yield Label("Preview (enter: fetch, verify · a: approve it)", classes="section")
            yield Static("", id="remote-facts")
            yield TextArea("", id="remote-text", read_only=True, soft_wrap=True)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "remote skills"
        table = self.query_one("#remote-skills", DataTable)
        table.add_columns("name", "remote", "review", "description")
        table.focus()
        self._list(refresh=False)

    def action_close(self) -> None:
        """Back to the previous screen."""
        self.dismiss()

    def action_reload(self) -> None:
        """Ask the remotes again now."""
        self._list(refresh=True)

    # ------------------------------------------------------------------ the list

    @work(thread=True, exclusive=True, group="remote-list", exit_on_error=False)
    def _list(self, refresh: bool) -> None:
        remotes = self.workspace.remotes
        try:
            reviewed = remotes.reviewed(refresh=refresh)
            notes = remotes.notes()
        except SkilldeckError as exc:
            reviewed, notes = [], [exc.message]
        rows = [(entry, review.state) for entry, review in reviewed]
        self.app.call_from_thread(self._show_list, rows, notes, remotes.configured)

    def _show_list(
        self, rows: list[tuple[RemoteEntry, str]], notes: list[str], configured: bool
    ) -> None:
        self.entries = rows
        table = self.query_one("#remote-skills", DataTable)
        keep = table.cursor_row
        table.clear()
        for entry, state in rows:
            table.add_row(
                Text(clean(entry.qualified), style="bold"),
                Text(clean(entry.label)),
                Text(state, style=REVIEW_STYLE.get(state, "")),
                Text(clean(entry.description[:100])),
            )
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        text = Text(f"{len(rows)} remote skill{'s' if len(rows) != 1 else ''}", style="bold")
        if not configured:
            text = Text("No remote catalog is configured ([remotes.LABEL] in config.toml).")
        for note in notes:
            text.append(f"\n{clean(note)}", style=WARNING_STYLE)
        self.query_one("#remote-notes", Static).update(text)

    def highlighted(self) -> str | None:
        """The name of the highlighted remote skill, or None."""
        row = self.query_one("#remote-skills", DataTable).cursor_row
        return self.entries[row][0].qualified if 0 <= row < len(self.entries) else None

    # ------------------------------------------------------------------ preview, approve

    def action_preview(self) -> None:
        """Fetch the highlighted skill as it is now and show it (its digest is the one
        ``a`` approves)."""
        name = self.highlighted()
        if name is not None:
            self.shown = None
            self.query_one("#remote-facts", Static).update(Text(f"Fetching {clean(name)}…"))
            self._preview(name)

    @on(DataTable.RowSelected, "#remote-skills")
    def _selected(self) -> None:
        self.action_preview()

    @work(thread=True, exclusive=True, group="remote-preview", exit_on_error=False)
    def _preview(self, name: str) -> None:
        try:
            loaded = self.workspace.remotes.show(name)
        except SkilldeckError as exc:
            self.app.call_from_thread(self._preview_failed, name, exc)
            return
        entry, review = loaded.entry, loaded.review
        facts = Text()
        facts.append(clean(entry.qualified), style="bold")
        facts.append(f"  {clean(entry.uri)}\n")
        facts.append(f"digest remote-sha256:{entry.digest}", style="bold")
        facts.append(" (SKILL.md verified)\nreview: ")
        facts.append(review.state, style=REVIEW_STYLE.get(review.state, ""))
        for change, path in review.changes:
            facts.append(f"\n  {change} {clean(path)}")
        files = ", ".join(clean(f.rel) for f in entry.files)
        facts.append(f"\nfiles: {files}", style="dim")
        tools = entry.frontmatter.get("allowed-tools")
        if tools:
            facts.append(f"\nallowed-tools granted once approved: {clean(tools)}")
        text = for_terminal(loaded.data.decode("utf-8", "replace"), multiline=True)
        self.app.call_from_thread(self._show_preview, name, entry.digest, facts, text)

    def _show_preview(self, name: str, digest: str, facts: Text, text: str) -> None:
        self.shown = (name, digest)
        self.query_one("#remote-facts", Static).update(facts)
        self.query_one("#remote-text", TextArea).load_text(text)

    def _preview_failed(self, name: str, exc: SkilldeckError) -> None:
        self.shown = None
        message = Text(f"Cannot show {clean(name)}: {exc.code.value}: {clean(exc.message)}")
        self.query_one("#remote-facts", Static).update(message)
        self.query_one("#remote-text", TextArea).load_text("")

    def action_approve(self) -> None:
        """Approve the previewed skill at the digest shown (nothing when none is shown or
        the highlighted skill is another)."""
        name = self.highlighted()
        if self.shown is None or name != self.shown[0]:
            self.notify("Preview the skill first (enter): approval binds to what you saw.")
            return
        self._approve(*self.shown)

    @work(thread=True, exclusive=True, group="remote-approve", exit_on_error=False)
    def _approve(self, name: str, digest: str) -> None:
        try:
            approval = self.workspace.remotes.approve(name, digest)
        except SkilldeckError as exc:
            self.app.call_from_thread(self._approve_failed, exc)
            return
        verb = "Approved" if approval.added else "Already approved"
        self.app.call_from_thread(self.notify, f"{verb}: {clean(name)} at {digest[:12]}…")
        self._list(refresh=False)

    def _approve_failed(self, exc: SkilldeckError) -> None:
        self.shown = None  # what is served now must be seen before it can be approved
        self.notify(clean(exc.message), title="Not approved", severity="error", timeout=10)
