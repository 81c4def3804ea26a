"""Review mode: every finding of every skill, grouped by rule or by skill, filterable."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from skilldeck.app.colors import WARNING
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import clean
from skilldeck.app.widgets.diagnostics_list import SEVERITY_GLYPH, SEVERITY_STYLE
from skilldeck.core.model import Diagnostic, Severity, Skill
from skilldeck.core.workspace import Workspace

if TYPE_CHECKING:
    pass

BADGE_STYLE = {Severity.ERROR: "red", Severity.WARNING: WARNING, Severity.INFO: "blue"}
"""Colour of each severity's count in the header."""

ROW_LIMIT = 500
"""Finding rows shown at once; narrow with the filters to see the rest."""

Finding = tuple[Skill, Diagnostic]


def rule_names() -> dict[str, str]:
    """Lint rule names by code (empty when the lint module is unavailable)."""
    try:
        from skilldeck.core.lint import RULES
    except ImportError:
        return {}
    return {code: rule.name for code, rule in RULES.items()}


class ReviewScreen(UsesDeck, Screen[None]):
    """Review lint and validation findings across the whole catalog."""

    DEFAULT_CSS = """
    ReviewScreen #findings {
        scrollbar-gutter: stable;  /* rows are measured and drawn at the same width */
    }
    ReviewScreen #findings > .option-list--option-disabled {
        color: $text;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="review.back"),
        Binding("f1", "app.help", "Help", id="review.help"),
        Binding("g", "toggle_group", "Group by", id="review.group"),
        Binding("1", "toggle_severity('error')", "Errors", id="review.errors"),
        Binding("2", "toggle_severity('warning')", "Warnings", id="review.warnings"),
        Binding("3", "toggle_severity('info')", "Info", id="review.info"),
        Binding("slash", "filter_code", "Filter code", id="review.filter"),
    ]

    group_by: reactive[str] = reactive("rule")
    """``rule`` or ``skill``."""
    severities: reactive[frozenset[Severity]] = reactive(
        frozenset({Severity.ERROR, Severity.WARNING, Severity.INFO})
    )
    """Severities shown."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        """The skills shown (read here; the app runs its stages)."""
        self._findings: list[Finding] = []
        self._rows: list[Finding | None] = []
        self._names = rule_names()

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="review-bar"):
            yield Static("", id="review-counts")
            yield Input(placeholder="code: SL1, SV…", id="code-filter")
        yield Static("", id="review-filters")
        yield OptionList(id="findings")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "review mode"
        if self.deck.deterministic:
            self.query_one("#code-filter", Input).cursor_blink = False
        self.watch(self.app, "catalog_version", self._reload)
        self.query_one("#findings").focus()

    def _reload(self, _version: int = 0) -> None:
        self._collect()

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def _collect(self) -> None:
        findings = self.workspace.findings()
        self.app.call_from_thread(self._collected, findings)

    def _collected(self, findings: list[Finding]) -> None:
        self._findings = findings
        self._render_rows()

    def watch_group_by(self) -> None:
        self._render_rows()

    def watch_severities(self) -> None:
        self._render_rows()

    @on(Input.Changed, "#code-filter")
    def _filter_changed(self) -> None:
        self._render_rows()

    @on(Input.Submitted, "#code-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#findings").focus()

    def _visible(self) -> list[Finding]:
        code = self.query_one("#code-filter", Input).value.strip().upper()
        return [
            (s, d)
            for s, d in self._findings
            if d.severity in self.severities
            and (not code or d.code.upper().startswith(code) or code in d.code.upper())
        ]

    def _render_rows(self) -> None:
        if not self.is_mounted:
            return
        visible = self._visible()
        groups: dict[str, list[Finding]] = defaultdict(list)
        for skill, diag in visible:
            key = diag.code if self.group_by == "rule" else f"{skill.name}\0{skill.path}"
            groups[key].append((skill, diag))
        options: list[Option] = []
        rows: list[Finding | None] = []
        shown = 0
        for key in sorted(
            groups,
            key=lambda k: (-len(groups[k]), k) if self.group_by == "rule" else (k.lower(), k),
        ):
            members = groups[key]
            options.append(Option(self._header(key, members), disabled=True))
            rows.append(None)
            for skill, diag in sorted(members, key=lambda f: (f[0].name, f[1].line or 0)):
                if shown >= ROW_LIMIT:
                    break
                options.append(Option(self._row(skill, diag)))
                rows.append((skill, diag))
                shown += 1
            if shown >= ROW_LIMIT:
                break
        if len(visible) > shown:
            options.append(
                Option(
                    Text(
                        f"+{len(visible) - shown} more findings: filter by "
                        "severity or code to see them",
                        style="italic dim",
                    ),
                    disabled=True,
                )
            )
            rows.append(None)
        if not options:
            message = (
                "No findings match the filters."
                if self._findings
                else "No findings: every skill validates and lints clean."
            )
            options.append(Option(Text(message, style="dim"), disabled=True))
            rows.append(None)
        self._rows = rows
        findings = self.query_one("#findings", OptionList)
        findings.set_options(options)
        first = next((i for i, r in enumerate(rows) if r is not None), None)
        findings.highlighted = first
        self._update_counts(visible)

    def _header(self, key: str, members: list[Finding]) -> Text:
        text = Text()
        worst = min((d.severity for _s, d in members), key=lambda s: s.rank)
        if self.group_by == "rule":
            text.append(clean(key), style=SEVERITY_STYLE[worst])
            name = self._names.get(key)
            if name:
                text.append(f" {name}", style="bold")
        else:
            name, _sep, _path = key.partition("\0")
            text.append(clean(name), style="bold")
            skill = members[0][0]
            text.append(f"  {skill.source.value}", style="dim")
        text.append(f"  ({len(members)})", style="dim")
        return text

    def _row(self, skill: Skill, diag: Diagnostic) -> Table:
        """One finding: what and where on the left, the message wrapped beside it (every
        word kept, continuation lines under the message's first column)."""
        where = Text("  ")
        where.append(f"{SEVERITY_GLYPH[diag.severity]} ", style=SEVERITY_STYLE[diag.severity])
        if self.group_by == "rule":
            where.append(clean(skill.name), style="bold")
        else:
            where.append(f"{diag.code:<6}", style=SEVERITY_STYLE[diag.severity])
        where.append(f" L{diag.line}" if diag.line else " -", style="dim")
        row = Table.grid(padding=(0, 0, 0, 2), expand=True)
        row.add_column(no_wrap=True, max_width=max(12, self.size.width // 2))
        row.add_column(ratio=1, overflow="fold")
        row.add_row(where, Text(clean(diag.message)))
        return row

    def _update_counts(self, visible: list[Finding]) -> None:
        """The badges count what the list shows (the filters applied)."""
        shown = {sev: 0 for sev in Severity}
        for _skill, diag in visible:
            shown[diag.severity] += 1
        skills = len({s.path for s, _d in visible})
        text = Text()
        text.append(f"{len(visible)} finding{'' if len(visible) == 1 else 's'}", style="bold")
        text.append(f" · {skills} skill{'' if skills == 1 else 's'}  ")
        for sev in (Severity.ERROR, Severity.WARNING, Severity.INFO):
            on_ = sev in self.severities
            text.append(
                f"{SEVERITY_GLYPH[sev]} {shown[sev]}", style=BADGE_STYLE[sev] if on_ else "dim"
            )
            text.append("  ")
        if len(visible) < len(self._findings):
            text.append(f"of {len(self._findings)}", style="dim")
        self.query_one("#review-counts", Static).update(text)
        self.query_one("#review-filters", Static).update(self._filters_line())

    def _filters_line(self) -> Text:
        """The filter keys, then hints while they fit the width (never cut in a word)."""
        parts: list[Text] = []
        for sev, key in ((Severity.ERROR, "1"), (Severity.WARNING, "2"), (Severity.INFO, "3")):
            on_ = sev in self.severities
            parts.append(
                Text(
                    f"[{key}] {'☑' if on_ else '☐'} {sev.value}",
                    style=SEVERITY_STYLE[sev] if on_ else "dim",
                )
            )
        parts.append(Text(f"[g] grouped by {self.group_by}", style="bold"))
        parts.append(Text("enter: open at line", style="dim"))
        width = self.query_one("#review-filters", Static).content_region.width or self.size.width
        line = Text(no_wrap=True)
        for part in parts:
            gap = "  " if line else ""
            if line and line.cell_len + len(gap) + part.cell_len > width:
                break
            line.append(gap)
            line.append_text(part)
        return line

    def on_resize(self) -> None:
        """Fit the filter line to the new width."""
        if self.is_mounted:
            self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        self.query_one("#review-filters", Static).update(self._filters_line())

    @on(OptionList.OptionSelected, "#findings")
    def _open(self, event: OptionList.OptionSelected) -> None:
        row = self._rows[event.option_index] if event.option_index < len(self._rows) else None
        if row is not None:
            skill, diag = row
            self.deck.open_skill(skill, diag.line or 1)

    def action_toggle_group(self) -> None:
        """Group by rule or by skill."""
        self.group_by = "skill" if self.group_by == "rule" else "rule"

    def action_toggle_severity(self, severity: str) -> None:
        """Show or hide one severity."""
        sev = Severity(severity)
        self.severities = (
            (self.severities - {sev}) if sev in self.severities else (self.severities | {sev})
        )

    def action_filter_code(self) -> None:
        """Focus the code filter."""
        self.query_one("#code-filter", Input).focus()

    def action_close(self) -> None:
        """Back to the main screen."""
        if self.focused is self.query_one("#code-filter", Input):
            self.query_one("#findings").focus()
            return
        self.dismiss(None)
