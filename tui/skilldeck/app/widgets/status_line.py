"""The status line under the search box: matches, timing, and what discovery is doing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.widgets import Static

from skilldeck.app.colors import WARNING

if TYPE_CHECKING:
    from skilldeck.app.ranked import Ranked


Counts = tuple[int, dict[str, int]]
"""How many skills count as skills, and the others by reason
(:meth:`~skilldeck.core.workspace.Workspace.listed_counts`)."""


def listing(counts: Counts, listed: int, spelled: bool = True) -> Text:
    """``3 skills (+1 invalid)``: the count ``skilldeck list`` prints, then the other rows
    the list shows, with their reasons (``spelled``) or as ``(+2 not usable)``."""
    usable, others = counts
    if not usable and not others:
        usable = listed  # no catalog given: count the rows
    text = Text(f"{usable} skill{'' if usable == 1 else 's'}", style="bold")
    if others:
        reasons = ", ".join(f"{n} {why}" for why, n in others.items())
        note = f" (+{reasons})" if spelled else f" (+{sum(others.values())} not usable)"
        text.append(note, style="dim")
    return text


NO_MATCH_SHORT = ("too common to search for", "too common")
"""Shorter forms of :func:`~skilldeck.core.search.too_common`'s sentence for a narrow
status line (the preview pane says it whole)."""


def no_match_notes(ranked: Ranked) -> list[Text]:
    """Why a ranked query matched nothing, longest form first (``[Text()]``: nothing to
    say): every word of it is too common to search for."""
    from skilldeck.core.search import too_common  # 10 ms: not at launch

    why = too_common(ranked.query) if ranked.ranked and not ranked.hits else ""
    if not why:
        return [Text()]
    return [Text(f" · {note}", style=WARNING) for note in (why, *NO_MATCH_SHORT)]


class FirstFit:
    """The first of several one-line texts that fits the width it is drawn at (the last
    one otherwise): the status line is updated without a reflow, so it cannot know its
    width when the text is made."""

    def __init__(self, *choices: Text) -> None:
        self.choices = choices

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for choice in self.choices:
            if choice.cell_len <= options.max_width:
                yield choice
                return
        yield self.choices[-1]


class StatusLine(Static):
    """One line saying how many skills match and how the ranking was made, or, while
    discovery runs, which stage it is in. Its size is fixed, so updates never reflow."""

    def show_progress(self, stage: str, count: int, *, early: bool = False) -> None:
        """Discovery is running: its stage and the skills found so far (``early``: the
        list shows the rows kept from the last launch meanwhile)."""
        text = Text(f"{stage or 'working'}… {count} found", style="italic")
        if not early:
            self.update(text, layout=False)
            return
        note = f"italic {WARNING}"
        self.update(  # the row beside the progress bar is ~28 cells at 120 columns
            FirstFit(
                text + Text(" · list from the last launch, checking", style=note),
                Text("previous list · checking…", style=note),
            ),
            layout=False,
        )

    def show_ranked(
        self,
        ranked: Ranked,
        *,
        threshold: float,
        deterministic: bool,
        stage: str,
        counts: Counts = (0, {}),
    ) -> None:
        """Summarise one ranking.

        Args:
            ranked: The ranking shown in the results list.
            threshold: Top scores below this say "no confident match".
            deterministic: Leave out the timing (tests and screenshots).
            stage: A background stage still running, or "".
            counts: The skills that count and the others by reason: with no query the
                line counts them as ``skilldeck list`` does and says how many more are
                listed.
        """
        heads = [Text(), Text()]  # the count with the reasons spelled out, and short
        if ranked.query.strip():
            for head in heads:
                head.append(f"{ranked.total} match", style="bold")
                head.append("" if ranked.total == 1 else "es", style="bold")
        else:
            for head, spelled in zip(heads, (True, False), strict=True):
                head.append_text(listing(counts, ranked.total, spelled))
        tail, timing = Text(), Text()
        if ranked.ranked and ranked.query.strip() and ranked.hits:
            top = max((h.score or 0.0) for h in ranked.hits)
            if top < threshold:
                # What agents are told too (search --agent, the MCP server).
                tail.append(" · no confident match", style=WARNING)
        if not deterministic:
            timing.append(f" · {ranked.elapsed_ms:.1f} ms", style="dim")
        if not ranked.ranked:
            tail.append(" · filter (index building)", style=WARNING)
        if ranked.semantic:
            tail.append(" · semantic", style="green")
        if stage:
            tail.append(f" · {stage}…", style=f"italic {WARNING}")
        # Longest first; what goes first when the line is narrow: the timing, the reasons,
        # the words of why nothing matched, then the notes.
        variants = [
            Text.assemble(head, why, tail, *ends)
            for why in no_match_notes(ranked)
            for ends in ((timing,), ())
            for head in heads
        ] + [heads[1]]
        self.update(FirstFit(*variants), layout=False)  # fixed size: no reflow
