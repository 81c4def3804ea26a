"""Updates: locked skills and their state; fetch, then review each update and approve or
reject it. The diff and the findings the update adds or removes stand side by side."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.console import Group
from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from skilldeck.app.colors import WARNING, WARNING_STYLE
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean, literal, short_path
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.install import FORCIBLE, Reason

if TYPE_CHECKING:
    from skilldeck.core.install import Finding, Lockfile, Status, UpdatePlan
    from skilldeck.core.tools import ToolRegistry
    from skilldeck.core.workspace import Workspace

LIST_WIDTH = 34
"""Cells of a list row when the list has not been laid out yet."""

STATE_STYLE = {
    "ok": "green",
    "modified": WARNING_STYLE,
    "missing": "bold red",
    "outdated": "cyan",
    "update": "bold cyan",
    "approved": "bold green",
    "rejected": "dim",
}


def advised(reason: Reason) -> str:
    """A refusal reason with this screen's advice: it never overrides a refusal, so a
    reason the user may override sends them to the command line."""
    if reason.code in FORCIBLE:
        return f"{reason.text} (to apply it anyway: skilldeck update --force)"
    return reason.text


@dataclass(slots=True)
class Row:
    """One locked skill as the screen shows it."""

    lock: Lockfile
    status: Status
    plan: UpdatePlan | None = None
    verdict: str = ""

    @property
    def key(self) -> str:
        """Option id: lockfile and skill."""
        return f"{self.lock.path}::{self.status.entry.name}"

    @property
    def label(self) -> str:
        """The state word shown in the list."""
        if self.verdict:
            return self.verdict
        if self.plan is not None and self.plan.has_changes:
            return "update"
        return self.status.state


def tail(path: str, width: int) -> str:
    """``path`` cut from the left to ``width`` cells at a folder boundary when it can be
    (``…/proj/.agents/skills``): the end of a skills path says most about it."""
    if cell_len(path) <= width:
        return path
    cut = path[len(path) - max(1, width - 1) :]
    slash = cut.find("/")
    if 0 <= slash < len(cut) - 1:
        cut = cut[slash:]
    return "…" + cut


def row_text(row: Row, width: int = LIST_WIDTH) -> Text:
    """Two lines of the list: the skill and its state, then its skills folder (ellipsized
    on the left, so no name or path is cut in the middle of a word)."""
    state = f"  {row.label}"
    name = Text(clean(row.status.entry.name), style="bold")
    name.truncate(max(4, width - len(state)), overflow="ellipsis")
    text = Text()
    text.append_text(name)
    text.append(state, style=STATE_STYLE.get(row.label, ""))
    text.append("\n  ")
    text.append(tail(clean(short_path(row.lock.root)), max(8, width - 2)), style="dim")
    return text


def diff_renderable(plan: UpdatePlan | None, row: Row) -> Text:
    """The diff of every changed file, coloured."""
    if plan is None:
        return Text(f"{row.status.detail}\n\nPress f to fetch and review updates.", style="dim")
    if not plan.has_changes:
        return Text("Up to date.", style="green")
    text = Text()
    head = f"{plan.entry.commit[:12] or 'local'} -> {plan.commit[:12] or 'local'}\n"
    text.append(head, style="bold")
    for change in plan.changes:
        text.append(f"\n{change.status}: {clean(change.path)}\n", style="bold")
        for line in change.diff.splitlines():
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            style = "cyan" if line.startswith("@@") else style
            text.append(clean(line) + "\n", style=style)
    return text


def _finding(f: Finding, sign: str, style: str) -> Text:
    where = f"{f.file}:{f.line}" if f.line else f.file
    text = Text(f"{sign} ", style=style)
    text.append(clean(f.code), style="bold")
    text.append(f" {f.severity} ", style="red" if f.severity == "error" else WARNING)
    text.append(clean(f"{where}: {f.message}" if where else f.message))
    return text


def findings_renderable(plan: UpdatePlan | None, reasons: list[str]) -> Group:
    """What the update adds and removes, its scripts, and why it cannot be applied."""
    parts: list[Text] = []
    if plan is None:
        return Group(Text("No update fetched yet.", style="dim"))
    parts.append(Text("New findings", style="bold"))
    parts += [_finding(f, "+", "red") for f in plan.added] or [Text("  none", style="dim")]
    parts.append(Text("Findings gone", style="bold"))
    parts += [_finding(f, "-", "green") for f in plan.removed] or [Text("  none", style="dim")]
    if plan.candidate is not None:
        review = plan.candidate.review
        tools = ", ".join(f"{n} ({s})" for n, s in review.tools) or "none"
        scripts = ", ".join(review.scripts) or "none"
        parts += [Text("Tools", style="bold"), literal(f"  {tools}")]
        parts += [Text("Scripts", style="bold"), literal(f"  {scripts}")]
    if reasons:
        parts.append(Text("Cannot be approved here", style="bold red"))
        parts += [literal(f"  {r}", style="red") for r in reasons]
    return Group(*parts)


class UpdatesScreen(UsesDeck, Screen[None]):
    """The operator's review of skill updates: nothing lands without an approval."""

    DEFAULT_CSS = """
    UpdatesScreen #updates-body { height: 1fr; }
    UpdatesScreen #updates-left { width: 38; max-width: 40%; }
    UpdatesScreen #update-list { height: 1fr; }
    UpdatesScreen #diff-scroll { width: 3fr; border: round $primary-darken-2; }
    UpdatesScreen #findings-scroll { width: 2fr; border: round $primary-darken-2; }
    UpdatesScreen .section { text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="updates.back"),
        Binding("f", "fetch", "Fetch", id="updates.fetch", tooltip="Fetch and plan updates"),
        Binding("a", "approve", "Approve", id="updates.approve"),
        Binding("r", "reject", "Reject", id="updates.reject"),
        Binding("c", "check", "Check", id="updates.check", tooltip="Re-check local state"),
    ]

    def __init__(self, workspace: Workspace, roots: list[Path] | None = None) -> None:
        super().__init__()
        self.workspace = workspace
        self._roots = roots
        self._rows: list[Row] = []
        self._selected: str | None = None
        self._fetched = ExitStack()

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="updates-body"):
            with Vertical(id="updates-left"):
                yield Label("Locked skills", classes="section")
                yield OptionList(id="update-list")
            with VerticalScroll(id="diff-scroll") as diff:
                diff.border_title = "Diff"
                yield Static("", id="diff")
            with VerticalScroll(id="findings-scroll") as findings:
                findings.border_title = "Findings"
                yield Static("", id="update-findings")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "updates"
        self.query_one("#update-list").focus()
        self.action_check()

    def on_unmount(self) -> None:
        self._fetched.close()

    def roots(self) -> list[Path]:
        """The skills folders whose lockfiles are shown (user and project by default)."""
        if self._roots is not None:
            return self._roots
        from skilldeck.core.install import target_root

        cwd = self.workspace.cwd or Path.cwd()
        return list(dict.fromkeys([target_root("project", cwd), target_root("user", cwd)]))

    # ----------------------------------------------------------------- loading

    def action_check(self) -> None:
        """Re-read the lockfiles and each skill's local state (no network)."""
        self._load(fetch=False)

    def action_fetch(self) -> None:
        """Fetch every source and plan the updates (network)."""
        self.notify("Fetching updates…", timeout=2)
        self._load(fetch=True)

    @work(thread=True, exclusive=True, group="updates", exit_on_error=False)
    def _load(self, fetch: bool) -> None:
        from skilldeck.core.install import check, prepared_updates, read_lock

        rows: list[Row] = []
        try:
            for root in self.roots():
                lock = read_lock(root)
                if not lock.entries:
                    continue
                plans: dict[str, UpdatePlan] = {}
                if fetch:
                    planned = prepared_updates(lock, registry=self._registry())
                    found = self._fetched.enter_context(planned)
                    plans = {p.entry.name: p for p in found}
                for status in check(lock):
                    rows.append(Row(lock, status, plans.get(status.entry.name)))
        except SkilldeckError as exc:
            self.app.call_from_thread(self.notify, exc.message, severity="error")
        self.app.call_from_thread(self._loaded, rows)

    def _registry(self) -> ToolRegistry | None:
        """The workspace's tool registry, so reviews say which tools are available."""
        try:
            return self.workspace.registry()
        except (SkilldeckError, OSError):
            return None

    def _loaded(self, rows: list[Row]) -> None:
        self._rows = rows
        listing = self.query_one("#update-list", OptionList)
        if not rows:
            listing.set_options(
                [
                    Option(
                        Text("No locked skills: install with skilldeck add.", style="dim"),
                        disabled=True,
                    )
                ]
            )
            self._show(None)
            return
        width = self._row_width()
        listing.set_options([Option(row_text(r, width), id=r.key) for r in rows])
        keys = [r.key for r in rows]
        index = keys.index(self._selected) if self._selected in keys else 0
        listing.highlighted = index
        self._selected = keys[index]
        self._show(rows[index])

    def _row_width(self) -> int:
        """Cells a list row may use (the list's width less its option padding)."""
        width = self.query_one("#update-list", OptionList).scrollable_content_region.width
        return width - 2 if width > 10 else LIST_WIDTH

    def on_resize(self) -> None:
        """Fit the folder paths to the list's new width."""
        if self._rows:
            self.call_after_refresh(self._loaded, self._rows)

    @property
    def selected(self) -> Row | None:
        """The highlighted row."""
        return next((r for r in self._rows if r.key == self._selected), None)

    def _show(self, row: Row | None) -> None:
        diff = self.query_one("#diff", Static)
        findings = self.query_one("#update-findings", Static)
        if row is None:
            diff.update(Text("Nothing to show.", style="dim"))
            findings.update("")
            return
        from skilldeck.core.install import update_blockers

        reasons = update_blockers(row.plan, force=False) if row.plan else []
        diff.update(diff_renderable(row.plan, row))
        findings.update(findings_renderable(row.plan, [advised(r) for r in reasons]))

    @on(OptionList.OptionHighlighted, "#update-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self._selected = event.option.id
            self._show(self.selected)

    # ----------------------------------------------------------------- actions

    def action_approve(self) -> None:
        """Apply the highlighted update (when it has one and nothing blocks it)."""
        from skilldeck.core.install import update_blockers

        row = self.selected
        if row is None or row.plan is None or not row.plan.has_changes or row.verdict:
            self.notify("Nothing to approve here (press f to fetch updates).", timeout=3)
            return
        reasons = update_blockers(row.plan, force=False)
        if reasons:
            self.notify(escape("; ".join(advised(r) for r in reasons)), severity="error", timeout=6)
            return
        self._apply(row)

    @work(thread=True, exclusive=True, group="updates-apply", exit_on_error=False)
    def _apply(self, row: Row) -> None:
        from skilldeck.core.install import apply_update

        assert row.plan is not None
        try:
            apply_update(row.lock, row.plan)
        except (SkilldeckError, OSError) as exc:
            message = exc.message if isinstance(exc, SkilldeckError) else str(exc)
            self.app.call_from_thread(self.notify, message, severity="error")
            return
        row.verdict = "approved"
        self.app.call_from_thread(self._refresh_row, row, f"Updated {row.status.entry.name}")

    def action_reject(self) -> None:
        """Leave the installed version as it is; the update is dropped from this review."""
        row = self.selected
        if row is None or row.plan is None or not row.plan.has_changes or row.verdict:
            self.notify("Nothing to reject here.", timeout=3)
            return
        row.verdict = "rejected"
        self._refresh_row(row, f"Kept the installed {row.status.entry.name}")

    def _refresh_row(self, row: Row, message: str) -> None:
        listing = self.query_one("#update-list", OptionList)
        index = self._rows.index(row)
        listing.replace_option_prompt_at_index(index, row_text(row, self._row_width()))
        self.notify(message, timeout=3)
        self._show(row)

    def action_close(self) -> None:
        """Back to the previous screen."""
        self.dismiss()
