"""Command palette provider: jump to a skill or run an action by name."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from skilldeck.app.deck import DeckHost
from skilldeck.app.labels import markup_free
from skilldeck.core.agents import AGENTS

ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Review mode: all diagnostics", "review", "Every finding across all skills, grouped"),
    ("Sessions and approvals", "sessions", "Pick or create a session, approve or deny tools"),
    ("Force-load highlighted skill", "screen.force_load", "Load it into the session"),
    ("Enable or disable highlighted skill", "screen.toggle_enabled", "Governance registry"),
    ("Explain ranking of highlighted skill", "screen.explain", "Search signals and terms"),
    ("Toggle raw source", "screen.toggle_raw", "Rendered markdown or raw with line numbers"),
    ("Rescan skill folders", "rescan", "Discover everything again"),
    ("Toggle light/dark theme", "toggle_theme", "Switch theme"),
    ("Help", "help", "Keys and markers"),
    ("Usage: loads, silent misses, never used", "usage", "How agents really use the skills"),
    ("Remote skills: review and approve", "remotes", "Remote catalogs' skills, as served now"),
    *(
        (f"As seen by: {a.name}", f"screen.seen_by('{a.id}')", "Only the skills it reads")
        for a in AGENTS
    ),
    ("As seen by: every agent", "screen.seen_by('')", "List every skill again"),
)
"""Palette label, action and help text of each action."""


class SkillCommands(Provider):
    """Skills by name and Skilldeck actions."""

    @property
    def _deck(self) -> DeckHost:
        return cast("DeckHost", self.app)

    def _runner(self, action: str) -> Callable[[], None]:
        async def run() -> None:
            await self.app.run_action(action)

        def schedule() -> None:
            self.app.call_later(run)

        return schedule

    async def discover(self) -> Hits:
        """Actions shown before anything is typed."""
        for label, action, help_text in ACTIONS:
            yield DiscoveryHit(label, self._runner(action), help=help_text)

    async def search(self, query: str) -> Hits:
        """Actions and skills matching ``query``."""
        matcher = self.matcher(query)
        for label, action, help_text in ACTIONS:
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), self._runner(action), help=help_text)
        needle = query.lower().strip()
        for i, skill in enumerate(self._deck.workspace.all_sorted()):
            if i % 500 == 499:
                await asyncio.sleep(0)
            if needle and needle[0] not in skill.name.lower():
                continue
            score = matcher.match(skill.name)
            if score > 0:
                yield Hit(
                    score * 0.9,
                    matcher.highlight(skill.name),
                    partial(self._deck.open_skill, skill),
                    help=f"skill · {skill.source.value} · {markup_free(skill.brief)}",
                )
