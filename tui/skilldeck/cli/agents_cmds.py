"""``skilldeck agents``: what each coding agent on this machine sees of the skills.

For Claude Code, Codex, Cursor, Gemini CLI, GitHub Copilot and OpenCode: the skill folders
their documentation names (user and project), the precedence and listing limits it
states, which catalog skills each reads and from which folder, which it does not (another
agent's folder, shadowed, disabled in the registry), and which its listing budget would
truncate or cut (:mod:`skilldeck.core.agents`). Answers "I installed it, why does my agent
not know it?".
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.cli.usage_cmds import WIDTH
from skilldeck.core.agents import AgentView, agent_views
from skilldeck.core.safe_text import for_terminal

AGENTS_SCHEMA = 1
"""Version of the JSON form of ``skilldeck agents``."""


def register(sub: Any) -> None:
    """Register ``agents``."""
    p = sub.add_parser(
        "agents",
        help="which skills each coding agent sees, from which folder, and which it misses",
        description="For Claude Code, Codex, Cursor, Gemini CLI, GitHub Copilot and "
        "OpenCode: their documented skill folders (user and project), precedence and "
        "listing limits; which catalog skills each sees and from which folder, which it "
        "does not (another agent's folder, shadowed, disabled) and which its listing "
        "budget would truncate or cut. --format json: {schema, agents: [...]}.",
    )
    p.set_defaults(func=cmd_agents)


def cmd_agents(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck agents``: exit 0."""
    fmt = ctx.output_format()
    home, cwd = Path.home(), Path.cwd()
    views = agent_views(ctx.workspace().catalog.skills, home, cwd)
    if fmt == "json":
        ctx.emit_json({"schema": AGENTS_SCHEMA, "agents": [v.to_dict(home) for v in views]})
        return 0
    for view in views:
        for line in render(view, home):
            ctx.echo(line)
    return 0


def _short(path: Path, home: Path) -> str:
    text = str(path)
    prefix = str(home)
    if text == prefix or text.startswith(prefix + "/"):
        text = "~" + text[len(prefix) :]
    return for_terminal(text)


def _wrap(head: str, items: list[str]) -> list[str]:
    """``head`` then ``items`` joined with commas, wrapped to :data:`WIDTH` columns."""
    return textwrap.wrap(
        f"{head} {', '.join(items)}", WIDTH, subsequent_indent=" " * 6, break_on_hyphens=False
    )


def render(view: AgentView, home: Path) -> list[str]:
    """The text form of one agent's view."""
    spec = view.spec
    state = "installed" if view.installed(home) else "not found on this machine"
    lines = [f"{spec.name} ({state})"]
    lines += _wrap("  precedence:", [spec.precedence])
    present = [f"{_short(p, home)} ({scope})" for p, scope in view.folders if p.is_dir()]
    lines += _wrap("  folders:", present or ["none of its folders exists"])
    seen = view.seen()
    shown = [
        f"{for_terminal(s.name)}{' (truncated)' if s.truncated else ''} <- {_short(s.folder, home)}"
        for s in seen
    ]
    lines += _wrap(f"  sees {len(seen)}:", shown or ["nothing"])
    for status in ("cut", "shadowed", "disabled"):
        group = [s for s in view.skills if s.status == status]
        if group:
            items = [
                f"{for_terminal(s.name)} ({for_terminal(s.reason.replace(str(home), '~'))})"
                for s in group
            ]
            lines += _wrap(f"  {status} {len(group)}:", items)
    if view.missing:
        items = [
            f"{for_terminal(m['name'])} ({_short(Path(m['folder']), home)})" for m in view.missing
        ]
        lines += _wrap(f"  does not see {len(view.missing)}:", items)
    return [*lines, ""]
