"""The preview pane: frontmatter table above the rendered SKILL.md, or the raw source."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual._tree_sitter import get_language
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import ContentSwitcher, Markdown, Static, TextArea
from textual.widgets.text_area import Selection

from skilldeck.app.colors import WARNING
from skilldeck.app.deck import UsesDeck
from skilldeck.app.labels import SOURCE_BADGE, clean, literal, short_path
from skilldeck.app.widgets.use_sparkline import UseSparkline
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal

MARKDOWN_WIDGET_LIMIT = 8 * 1024
"""Bodies up to this many bytes use Textual's Markdown widget (about 1 s at 8 KB here)."""
RICH_MARKDOWN_LIMIT = 64 * 1024
"""Bodies up to this size use Rich's cheaper Markdown renderer; larger ones plain text."""
CACHE_SIZE = 64


LANGUAGES = {
    ".md": "markdown",
    ".py": "python",
    ".sh": "bash",
    ".bash": "bash",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".js": "javascript",
    ".mjs": "javascript",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".xml": "xml",
}


def language_for(name: str) -> str | None:
    """TextArea highlighting language for a file name, when Textual knows it."""
    language = LANGUAGES.get(Path(name).suffix.lower())
    return language if language is not None and get_language(language) is not None else None


def _read(skill: Skill) -> tuple[str, str]:
    from skilldeck.core.discovery import read_body, read_source

    return read_body(skill), read_source(skill)


def frontmatter_table(skill: Skill) -> Table:
    """The compact key/value table shown above the body."""
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True, width=11)
    table.add_column(ratio=1, overflow="fold")

    table.add_row("name", literal(skill.name, style="bold"))
    table.add_row(
        "description",
        literal(" ".join(skill.description.split()))  # one paragraph, never a literal \n
        if skill.description
        else Text("(missing)", style="red"),
    )
    where = Text(SOURCE_BADGE[skill.source], style="cyan")
    where.append(f"  {clean(short_path(skill.base_dir))}", style="dim")
    table.add_row("source", where)
    status = Text()
    if not skill.valid:
        # A skill whose frontmatter does not parse is never offered, enabled or not.
        errors = len(skill.errors)
        status.append("invalid", style="bold red")
        status.append(f" ({errors} error{'' if errors == 1 else 's'}, see Diagnostics)", "red")
        if not skill.enabled:
            status.append(" · disabled (registry)", style="magenta")
    else:
        status.append(
            "enabled" if skill.enabled else "disabled (registry)",
            style="green" if skill.enabled else "magenta",
        )
    if skill.hidden:
        status.append(" · hidden from models", style=WARNING)
    if skill.shadowed:
        status.append(" · shadowed", style=WARNING)
    table.add_row("status", status)
    if skill.shadowed:
        table.add_row("shadowed", shadow_text(skill))
    for label, value in (
        ("version", skill.version),
        ("license", skill.license),
        ("author", skill.author),
        ("owner", skill.owner),
        ("compat", skill.compatibility),
    ):
        if value:
            table.add_row(label, literal(value))
    if skill.tags:
        table.add_row("tags", literal(", ".join(skill.tags)))
    if skill.allowed_tools:
        table.add_row("tools", literal(" ".join(skill.allowed_tools)))
    if skill.triggers:
        parts = [
            *skill.triggers.keywords,
            *skill.triggers.verbs,
            *(f"/{p}/" for p in skill.triggers.patterns),
        ]
        table.add_row("triggers", literal(", ".join(parts)))
    if skill.parameters:
        table.add_row("inputs", parameters_text(skill))
    if skill.examples:
        table.add_row("examples", examples_text(skill))
    if skill.resources:
        more = "+" if skill.resources_truncated else ""
        table.add_row("files", f"{len(skill.resources)}{more} resource file(s)")
    return table


def parameters_text(skill: Skill) -> Text:
    """One line per input: name, type, required or default, what to give."""
    text = Text()
    for n, param in enumerate(skill.parameters):
        if n:
            text.append("\n")
        text.append(clean(param.name), style="bold")
        text.append(f" {clean(param.type)}", style="cyan")
        if param.required:
            text.append(" required", style=WARNING)
        elif param.default is not None:
            text.append(f" = {clean(param.default)}", style="dim")
        if param.description:
            text.append(f"  {clean(param.description)}")
    return text


def examples_text(skill: Skill) -> Text:
    """One line per example: the request in quotes, then what the skill does."""
    text = Text()
    for n, example in enumerate(skill.examples):
        if n:
            text.append("\n")
        text.append(f"“{clean(example.request)}”", style="italic")
        if example.does:
            text.append(f" → {clean(example.does)}", style="dim")
    return text


def shadow_text(skill: Skill) -> Text:
    """Which copy wins over ``skill`` and why: "by ~/x/pdf (a later root overrides …)"."""
    text = Text("by ", style="dim")
    winner = skill.shadowed_by
    text.append(clean(short_path(winner.parent if winner else Path("?"))), style="bold")
    reason = skill.shadow_reason
    # The core writes "shadowed by PATH (WHY)": the path is shown above, keep the why.
    why = reason[reason.rfind("(") + 1 : -1] if reason.endswith(")") and "(" in reason else ""
    if why or reason:
        text.append(f" ({clean(why or reason)})", style="dim")
    return text


class PreviewPane(UsesDeck, Vertical):
    """SKILL.md of the highlighted skill, rendered or raw with line numbers."""

    DEFAULT_CSS = """
    PreviewPane {
        height: 1fr;
    }
    PreviewPane #frontmatter {
        height: auto;
        max-height: 40%;
        padding: 0 1;
        border-bottom: solid $primary-background-lighten-2;
    }
    PreviewPane #frontmatter.-hint {
        max-height: 100%;
        border-bottom: none;
    }
    PreviewPane ContentSwitcher {
        height: 1fr;
    }
    PreviewPane #rendered {
        height: 1fr;
        padding: 0 1;
    }
    PreviewPane #rendered Markdown {
        margin: 0;
        padding: 0;
    }
    PreviewPane #rendered MarkdownFence {
        overflow-x: hidden;
    }
    PreviewPane #rendered MarkdownFence > Label {
        width: 1fr;
        text-wrap: wrap;
    }
    PreviewPane #raw {
        height: 1fr;
        border: none;
    }
    """

    BINDINGS = [
        Binding("r", "raw", "Raw", id="preview.toggle-raw"),
        Binding("r", "rendered", "Rendered", id="preview.toggle-rendered"),
    ]
    """``r`` is labelled with what it switches to (the other binding is hidden)."""

    raw: reactive[bool] = reactive(False)
    """Show the raw source instead of the rendered body."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._skill: Skill | None = None
        self._cache: OrderedDict[tuple[Path, int], tuple[str, str]] = OrderedDict()
        self._pending_line: int | None = None
        self._source_for: tuple[Path, int] | None = None

    @property
    def skill(self) -> Skill | None:
        """The skill shown."""
        return self._skill

    def compose(self) -> ComposeResult:
        yield Static("", id="frontmatter")
        yield UseSparkline(id="use")
        with ContentSwitcher(initial="rendered"):
            with VerticalScroll(id="rendered"):
                yield Markdown("", id="md", open_links=False)
                yield Static("", id="md-plain")
            yield TextArea(
                "",
                id="raw",
                read_only=True,
                show_line_numbers=True,
                soft_wrap=True,  # long lines wrap under their line number, never cut
                language=language_for("SKILL.md"),
            )

    def on_mount(self) -> None:
        self.query_one("#md-plain").display = False

    def show(
        self, skill: Skill | None, line: int | None = None, *, hint: RenderableType | None = None
    ) -> None:
        """Show ``skill`` (None clears the pane); the body loads in a worker.

        Args:
            skill: The skill.
            line: Also switch to the raw view at this 1-based line.
            hint: What to say instead of "No skill selected." when ``skill`` is None.
        """
        same = (
            hint is None
            and skill is not None
            and self._skill is not None
            and skill.path == self._skill.path
            and skill.mtime_ns == self._skill.mtime_ns
        )
        self._skill = skill
        self.query_one(UseSparkline).show_for(skill.name if skill is not None else None)
        if line is not None:
            self.goto_line(line)
        fm = self.query_one("#frontmatter", Static)
        body = self.query_one(ContentSwitcher)
        # No skill, no body view: an empty source view still numbers its one line ("1").
        body.display = skill is not None
        if skill is None:
            self._pending_line = None
            self._set_loading(False)
            fm.add_class("-hint")
            fm.update(hint if hint is not None else Text("No skill selected.", style="dim"))
            self.query_one("#md", Markdown).update("")
            self.query_one("#md-plain", Static).update("")
            self.query_one("#raw", TextArea).load_text("")
            self._source_for = None
            return
        fm.remove_class("-hint")
        fm.update(frontmatter_table(skill))  # cheap, and the status may have changed
        if not same:
            # The body of the previous skill must never sit under this header: cover it
            # until this skill's body is in place.
            self._set_loading(True)
            self._load(skill)

    def stop_loading(self) -> None:
        """Give up a body still being rendered (typing resumed: the Markdown widget's
        mounting and reflows would hold up the next keystrokes, 50-90 ms each on the
        shared corpus, ``tests/benchmarks/bench_felt.py``); the next :meth:`show` of the
        skill renders it again."""
        if self.is_loading:
            self.workers.cancel_group(self, "preview")
            self._skill = None

    def _set_loading(self, loading: bool) -> None:
        self.query_one(ContentSwitcher).loading = loading

    def _wants(self, key: tuple[Path, int]) -> bool:
        """Whether the body of ``key`` (path, mtime) is the one to show now."""
        skill = self._skill
        return skill is not None and (skill.path, skill.mtime_ns) == key

    @property
    def is_loading(self) -> bool:
        """True while the body shown does not belong to :attr:`skill` yet."""
        return bool(self.query_one(ContentSwitcher).loading)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open web links in the browser and the skill's own files in the file viewer."""
        from skilldeck.app.widgets.resources_list import ResourcesList

        event.stop()
        href = event.href.strip()
        if href.startswith(("http://", "https://")):
            self.app.open_url(href)
            return
        target = href.split("#", 1)[0]
        if self._skill is None or not target:
            return
        self.post_message(ResourcesList.Open(self._skill, target))

    def goto_line(self, line: int | None) -> None:
        """Switch to the raw view and put the cursor on ``line`` (1-based)."""
        self.raw = True
        if line is None:
            return
        if self._skill is not None and self._source_for == (self._skill.path, self._skill.mtime_ns):
            self._move_to(line)
        else:
            self._pending_line = line

    def _move_to(self, line: int) -> None:
        area = self.query_one("#raw", TextArea)
        row = max(0, min(line - 1, area.document.line_count - 1))
        end = len(area.document.get_line(row))
        # Select the line with the cursor at its start, so the view is not scrolled sideways.
        area.selection = Selection((row, end), (row, 0))
        area.scroll_cursor_visible(center=True)

    def watch_raw(self, raw: bool) -> None:
        self.query_one(ContentSwitcher).current = "raw" if raw else "rendered"
        self.refresh_bindings()  # the r / F2 labels say what they switch to

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only the view that is not shown."""
        if action == "raw":
            return not self.raw
        if action == "rendered":
            return self.raw
        return True

    def action_raw(self) -> None:
        """Show the raw source with line numbers."""
        self.raw = True

    def action_rendered(self) -> None:
        """Show the rendered markdown."""
        self.raw = False

    def action_toggle_raw(self) -> None:
        """Toggle between the rendered body and the raw source."""
        self.raw = not self.raw

    @work(exclusive=True, group="preview", exit_on_error=False)
    async def _load(self, skill: Skill) -> None:
        key = (skill.path, skill.mtime_ns)
        cached = self._cache.get(key)
        if cached is None:
            try:
                cached = await asyncio.to_thread(_read, skill)
            except SkilldeckError as exc:
                if not self._wants(key):
                    return
                self._set_loading(False)
                self.query_one("#md-plain", Static).update(Text(exc.message, style="red"))
                self.query_one("#md-plain").display = True
                self.query_one("#md").display = False
                self.query_one("#raw", TextArea).load_text("")
                return
            self._cache[key] = cached
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        if not self._wants(key):
            return
        body, source = cached
        body = for_terminal(body, multiline=True)
        self.query_one("#raw", TextArea).load_text(for_terminal(source, multiline=True))
        self._source_for = key
        if self._pending_line is not None:
            self._move_to(self._pending_line)
            self._pending_line = None
        md = self.query_one("#md", Markdown)
        plain = self.query_one("#md-plain", Static)
        size = len(body.encode("utf-8", "replace"))
        self.query_one("#rendered", VerticalScroll).scroll_home(animate=False)
        if size <= MARKDOWN_WIDGET_LIMIT:
            plain.display = False
            md.display = True
            await md.update(body)
        else:
            md.display = False
            await md.update("")
            plain.display = True
            if size <= RICH_MARKDOWN_LIMIT:
                from rich.markdown import Markdown as RichMarkdown  # 20 ms: on first use

                plain.update(RichMarkdown(body))
            else:
                plain.update(Text.assemble((too_large_note(size), "italic dim"), body))
        if self._wants(key):
            self._set_loading(False)


def too_large_note(size: int) -> str:
    """Why a body of ``size`` bytes is shown as plain text, not rendered."""
    return (
        f"Plain text: this body is {size // 1024} KB, over the {RICH_MARKDOWN_LIMIT // 1024} KB "
        "that is rendered as Markdown in time (r: the source with line numbers).\n\n"
    )


def empty_catalog_hint(roots: list[Path]) -> Text:
    """What to tell someone whose skill folders hold no skill yet (shown by
    :meth:`PreviewPane.show` as its ``hint``)."""
    text = Text("No skills found.\n\n", style="bold")
    text.append("Skilldeck looked in (lowest precedence first):\n")
    for root in roots:
        text.append(f"  {clean(short_path(root))}\n", style="cyan")
    text.append("\nTo add a skill, create a folder holding a SKILL.md, for example\n")
    first = roots[-1] if roots else Path("~/.claude/skills")
    text.append(f"  {clean(short_path(first / 'my-skill' / 'SKILL.md'))}\n", style="bold")
    text.append(
        "with YAML frontmatter, then instructions:\n\n"
        "  ---\n  name: my-skill\n  description: What it does. Use when …\n  ---\n"
        "  # My skill\n\n",
        style="dim",
    )
    text.append("ctrl+r rescans; skilldeck --root DIR opens another folder.", style="dim")
    return text


def no_match_hint(query: str) -> Text:
    """What to tell someone whose query matches no skill (shown by :meth:`PreviewPane.show`
    as its ``hint``): the sentence ``skilldeck search`` prints, with the reason when every
    word is too common to search for."""
    from skilldeck.core.search import too_common  # 10 ms: not at launch

    text = Text(f"No skill matches {clean(query.strip())!r}", style="bold")
    why = too_common(query)
    text.append(f": {why}." if why else ".")
    text.append("\n\nEsc clears the search.", style="dim")
    return text
