"""The results list: one row per skill with markers, name, source badge and brief."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import events
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Spacing
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.visual import Padding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from skilldeck.app.labels import SOURCE_BADGE, clean
from skilldeck.app.ranked import Hit
from skilldeck.app.widgets.search_box import escape_merged
from skilldeck.core.model import Skill, Source
from skilldeck.core.workspace import Workspace

MORE_ID = "__more__"
FIRST_ROWS = 30
"""Rows added at once (at least a screenful); the rest follow when typing pauses for
:data:`REST_DELAY`."""
REST_DELAY = 0.3
STRIP_CACHE_SIZE = 4000
"""Rendered rows kept across result lists (a keystroke mostly re-orders known rows)."""

NARROW_ROW = 40
"""Rows narrower than this leave out the source badge and empty marker cells."""

BADGE_STYLE = {
    Source.BUNDLED: "bold $text-primary",
    Source.USER: "bold $text-success",
    Source.PROJECT: "bold $text-secondary",
    Source.EXPLICIT: "bold",
}
"""Badge colours: the ``$text-*`` shades are made readable on the theme's background (the
plain ``$accent`` orange was hard to read on the light theme's grey). No badge is orange or
a shade of it: orange means a warning."""

MARKERS = (
    ("✖", "$error", "errors"),
    ("▲", "$warning", "warnings"),
    ("⊘", "$secondary", "disabled"),
    ("◐", "$text-muted", "shadowed"),
    ("⚠", "$warning", "required tools missing"),
)
"""Glyph, style and meaning of each row marker, in display order."""


def row_markers(skill: Skill, state: Workspace, compact: bool = False) -> Content:
    """The marker column of a row: five fixed cells, or (``compact``) two cells holding
    the first marker that applies, so narrow lists keep room for the name."""
    errors, warnings = state.counts(skill)
    flags = (
        errors > 0,
        warnings > 0,
        not skill.enabled,
        skill.shadowed,
        state.tools_complete(skill) is False,
    )
    if compact:
        for on, (glyph, style, _meaning) in zip(flags, MARKERS, strict=True):
            if on:
                return Content.assemble((glyph, style), " ")
        return Content("  ")
    parts: list[str | tuple[str, str]] = [
        (glyph, style) if on else " "
        for on, (glyph, style, _meaning) in zip(flags, MARKERS, strict=True)
    ]
    return Content.assemble(*parts)


class Row(Content):
    """A result row whose lines are already cut to the list's width: its height is its
    line count. (Content measures its height by wrapping itself, about 0.4 ms a row: 120
    ms of the event loop while discovery fills the list at start-up, 10k skills.)"""

    def get_height(self, rules: RulesMap, width: int) -> int:
        """The number of lines (no wrapping to measure)."""
        return self.plain.count("\n") + 1


def render_row(hit: Hit, state: Workspace, width: int = 80) -> Content:
    """The two-line prompt of one result, each line cut to ``width`` cells; a ranked row
    ends its first line with the score (0-1)."""
    skill = hit.skill
    name_style = "bold" if skill.enabled and not skill.shadowed else "dim strike"
    score = "" if hit.score is None else f" {hit.score:.2f}"
    # Narrow lists keep the name whole: the source shows in the preview header anyway.
    narrow = width < NARROW_ROW
    badge = "" if narrow else f" {SOURCE_BADGE[skill.source]}"
    head = Content.assemble(
        row_markers(skill, state, compact=narrow),
        "" if narrow else " ",
        (clean(skill.name), name_style),
        (badge, BADGE_STYLE[skill.source]),
    ).truncate(max(1, width - len(score)), ellipsis=True)
    if score:
        pad = max(0, width - len(score) - head.cell_length)
        head = Content.assemble(head, " " * pad, (score, "$text-muted"))
    brief = Content.assemble(
        "  ",
        (clean(skill.brief), "$text-muted") if skill.brief else ("(no description)", "$error"),
    ).truncate(width, ellipsis=True)
    row = Content("\n").join([head, brief])
    return Row(row.plain, list(row.spans), row.cell_length)


class ResultsList(OptionList):
    """Search results; the highlighted row drives the detail panes.

    Printable keys typed here belong to the search (as in fzf): the list announces them
    with :class:`TypeAhead` instead of letting them reach the screen's letter bindings,
    so a query typed after browsing never runs a skill action.
    """

    DEFAULT_CSS = """
    ResultsList, ResultsList:focus {
        height: 1fr;
        border: none;
        padding: 0;
        /* the scrollbar's column is kept whether it shows or not: rows cut to the width
           before it appeared would otherwise wrap (score on a second line) */
        scrollbar-gutter: stable;
    }
    ResultsList > .option-list--option {
        padding: 0 1 0 0;
    }
    """

    class SkillHighlighted(Message):
        """The highlighted skill changed (None when the list is empty)."""

        def __init__(self, skill: Skill | None) -> None:
            super().__init__()
            self.skill = skill

    class SkillChosen(Message):
        """Enter or a click on a row."""

        def __init__(self, skill: Skill) -> None:
            super().__init__()
            self.skill = skill

    class TypeAhead(Message):
        """A printable key typed in the list: it belongs in the search box."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    class Escaped(Message):
        """Esc in the list: the screen empties the search box and puts the cursor there
        (announced in typing order, so letters typed right after it follow it)."""

    def __init__(self, *, id: str | None = None, pass_keys: Iterable[str] = ()) -> None:
        """Args:
        id: The widget id.
        pass_keys: Printable keys left to the screen's bindings (tab digits, ``?``)
            instead of being typed into the search.
        """
        super().__init__(id=id)
        self._pass_keys = frozenset(pass_keys)
        self._hits: list[Hit] = []
        self._current: Skill | None = None
        self._total = 0
        self._state: Workspace | None = None
        self._rendered_width = 0
        self._generation = 0
        self._option_cache: dict[tuple[Path, int, bool, int, int], Option] = {}
        self._strip_cache: dict[tuple[Option, Style, Spacing, int], list[Strip]] = {}

    @property
    def hits(self) -> list[Hit]:
        """Rows shown, in order."""
        return self._hits

    @property
    def current(self) -> Skill | None:
        """The highlighted skill."""
        return self._current

    def show(
        self, hits: list[Hit], total: int, state: Workspace, keep: Skill | None = None
    ) -> None:
        """Replace the rows.

        Args:
            hits: Rows to show.
            total: How many matched in all (``total - len(hits)`` become "+N more").
            state: For markers.
            keep: Highlight this skill again when it is still in the list.
        """
        self._hits = hits
        self._total = total
        self._state = state
        self._generation += 1
        index = 0 if hits else None
        if keep is not None:
            for i, hit in enumerate(hits):
                if hit.skill.path == keep.path:
                    index = i
                    break
        # Rows past the first screenful are added once typing pauses, so a keystroke
        # repaints quickly even when many new rows have to be rendered.
        first = max(FIRST_ROWS, self.size.height // 2 + 2, (index or 0) + 1)
        with self.prevent(OptionList.OptionHighlighted):
            self.set_options([self._option(hit, state) for hit in hits[:first]])
            if len(hits) <= first:
                self._add_more_row()
            self.highlighted = index
            if index is not None:
                self.scroll_to_highlight()
        if len(hits) > first:
            generation = self._generation
            self.set_timer(REST_DELAY, lambda: self._add_rest(generation, first))
        self._announce()

    def _add_rest(self, generation: int, start: int) -> None:
        if generation != self._generation or self._state is None:
            return  # a newer result list replaced this one
        with self.prevent(OptionList.OptionHighlighted):
            self.add_options([self._option(hit, self._state) for hit in self._hits[start:]])
            self._add_more_row()

    def _add_more_row(self) -> None:
        if self._total > len(self._hits):
            more = Content.styled(
                f"  +{self._total - len(self._hits)} more: type to narrow the search",
                "italic $text-muted",
            )
            self.add_option(Option(more, id=MORE_ID, disabled=True))

    def _option(self, hit: Hit, state: Workspace) -> Option:
        """The row for ``hit``, reused while the skill and the width stay the same."""
        width = self._row_width()
        score = -1 if hit.score is None else round(hit.score * 100)
        key = (hit.skill.path, hit.skill.mtime_ns, hit.skill.enabled, width, score)
        option = self._option_cache.get(key)
        if option is None:
            option = Option(render_row(hit, state, width), id=str(hit.skill.path))
            if len(self._option_cache) > 5000:
                self._option_cache.clear()
            self._option_cache[key] = option
        return option

    def _get_option_render(self, option: Option, style: Style) -> list[Strip]:
        """Rendered lines of ``option``, drawn once per option, style and width.

        OptionList forgets its renders whenever the options are replaced, which is on every
        keystroke here. The rows themselves are reused (see :meth:`_option`), so their
        renders are kept too and only the click metadata (the row's index) is applied per
        list.
        """
        if option.id == MORE_ID or option._divider:
            return super()._get_option_render(option, style)
        padding = self.get_component_styles("option-list--option").padding
        width = self.scrollable_content_region.width - self._get_left_gutter_width()
        key = (option, style, padding, width)
        plain = self._strip_cache.get(key)
        if plain is None:
            visual = self._get_visual(option)
            if padding:
                visual = Padding(visual, padding)
            plain = [
                strip.extend_cell_length(width, style.rich_style)
                for strip in visual.to_strips(self, visual, width, None, style)
            ]
            if len(self._strip_cache) >= STRIP_CACHE_SIZE:
                self._strip_cache.clear()
            self._strip_cache[key] = plain
        index_key = (option, style, padding)
        strips = self._option_render_cache.get(index_key)
        if strips is None:
            meta = {"option": self._option_to_index[option]}
            strips = [strip.apply_meta(meta) for strip in plain]
            self._option_render_cache[index_key] = strips
        return strips

    def forget_rows(self) -> None:
        """Drop cached rows (markers may have changed: lint, tools, registry)."""
        self._option_cache.clear()
        self._strip_cache.clear()

    def _row_width(self) -> int:
        width = self.scrollable_content_region.width
        return max(20, width - 1) if width else 80

    def on_resize(self) -> None:
        """Cut the rows again for the new width."""
        width = self._row_width()
        if self._state is None or width == self._rendered_width:
            return
        self._rendered_width = width
        self.forget_rows()
        if self._hits:
            self.show(self._hits, self._total, self._state, keep=self._current)

    def _announce(self) -> None:
        index = self.highlighted
        skill = self._hits[index].skill if index is not None and index < len(self._hits) else None
        if skill is not self._current:
            self._current = skill
            self.post_message(self.SkillHighlighted(skill))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Tell the screen which skill is highlighted."""
        event.stop()
        self._announce()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Tell the screen a skill was chosen."""
        event.stop()
        if event.option_index < len(self._hits):
            self.post_message(self.SkillChosen(self._hits[event.option_index].skill))

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Printable keys are typed into the search, except the ``pass_keys``."""
        return character is not None and character.isprintable() and key not in self._pass_keys

    def on_key(self, event: events.Key) -> None:
        """Send printable keys to the search box (through the screen), Esc too."""
        merged = escape_merged(event, self._pass_keys)
        if event.key == "escape" or merged:
            event.stop()
            event.prevent_default()
            self.post_message(self.Escaped())
            if merged and event.character:
                self.post_message(self.TypeAhead(event.character))
            return
        if event.character is not None and self.check_consume_key(event.key, event.character):
            event.stop()
            event.prevent_default()
            self.post_message(self.TypeAhead(event.character))

    def action_last(self) -> None:
        """Highlight the last real row."""
        if self._hits:
            self.highlighted = len(self._hits) - 1
