"""The status line under the search box: matches, timing, and what discovery is doing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from skilldeck.app.ranked import Ranked


class StatusLine(Static):
    """One line saying how many skills match and how the ranking was made, or, while
    discovery runs, which stage it is in. Its size is fixed, so updates never reflow."""

    def show_progress(self, stage: str, count: int) -> None:
        """Discovery is running: its stage and the skills found so far."""
        self.update(Text(f"{stage or 'working'}… {count} skills", style="italic"), layout=False)

    def show_ranked(
        self, ranked: Ranked, *, threshold: float, deterministic: bool, stage: str
    ) -> None:
        """Summarise one ranking.

        Args:
            ranked: The ranking shown in the results list.
            threshold: Top scores below this say "no confident match".
            deterministic: Leave out the timing (tests and screenshots).
            stage: A background stage still running, or "".
        """
        text = Text()
        noun = "skill" if ranked.total == 1 else "skills"
        if ranked.query.strip():
            text.append(f"{ranked.total} match", style="bold")
            text.append("" if ranked.total == 1 else "es", style="bold")
        else:
            text.append(f"{ranked.total} {noun}", style="bold")
        if ranked.ranked and ranked.query.strip() and ranked.hits:
            top = max((h.score or 0.0) for h in ranked.hits)
            if top < threshold:
                # What agents are told too (search --agent, the MCP server).
                text.append(" · no confident match", style="yellow")
        if not deterministic:
            text.append(f" · {ranked.elapsed_ms:.1f} ms", style="dim")
        if not ranked.ranked:
            text.append(" · filter (index building)", style="yellow")

        if ranked.semantic:
            text.append(" · semantic", style="green")
        if stage:
            text.append(f" · {stage}…", style="italic yellow")
        self.update(text, layout=False)  # fixed size: no reflow
