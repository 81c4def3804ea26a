"""``skilldeck context "user message"``: what to inject into a model's prompt for one
message (the four disclosure tiers of :mod:`skilldeck.core.context`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext
from skilldeck.core import sessions
from skilldeck.core.context import build_context, recent_use
from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.context import SkillContext

MAX_SKILLS_LIMIT = 50


def register(sub: Any) -> None:
    """Register ``context``."""
    p = sub.add_parser(
        "context",
        help="what to inject into a model's prompt for one user message",
        description="Decide what an agent should inject for MESSAGE: nothing (skills off "
        "or none available), a breadcrumb '[N skills available]' (nothing matches), the "
        "listing of names and brief descriptions (the user asks what the agent can do, or "
        "the matching skills declare no triggers), or the full instructions of the top "
        "matches (a skill is mentioned, or its triggers match). Matches rank by explicit "
        "mention, exact trigger phrase, recent use in --session, then search score. With "
        "--format json: tier, reason, skills [{name, reason, score, instructions}] and "
        "text, the exact string to inject.",
    )
    p.add_argument("message", help="the user message")
    p.add_argument(
        "--max-skills",
        type=int,
        default=3,
        metavar="N",
        help="most skills whose instructions are injected (default 3)",
    )
    p.add_argument(
        "--session",
        metavar="ID",
        default=None,
        help="rank skills used recently in this session first (among equal matches)",
    )
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        metavar="CHARS",
        help="character budget of the text (default: the prompt_char_budget setting)",
    )
    p.set_defaults(func=cmd_context)


def cmd_context(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck context MESSAGE``: exit 0 with the answer, 2 for bad usage."""
    fmt = ctx.output_format()
    if not 1 <= args.max_skills <= MAX_SKILLS_LIMIT:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"--max-skills must be 1-{MAX_SKILLS_LIMIT}")
    if args.budget is not None and args.budget < 0:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "--budget must be 0 or more")
    recent = _recent(ctx, args.session) if args.session else None
    answer = build_context(
        ctx.workspace(),
        args.message,
        max_skills=args.max_skills,
        budget=args.budget,
        recent=recent,
        actor="cli",
    )
    if fmt == "json":
        data = answer.to_dict()
        data["message"] = args.message
        data["session"] = args.session
        ctx.emit_json(data)
        return 0
    _print_text(ctx, answer)
    return 0


def _recent(ctx: CliContext, session_id: str) -> dict[str, float]:
    """When each skill was last used in the session (NOT_FOUND for an unknown one)."""
    with sessions.SessionStore(settings=ctx.settings) as store:
        return recent_use(store.get(session_id))


def _print_text(ctx: CliContext, answer: SkillContext) -> None:
    """The tier and why, each skill and why, then the text to inject. Everything from
    skills goes through :meth:`CliContext.echo` (control characters shown escaped)."""
    ctx.echo(f"tier: {ctx.paint(answer.tier, 'bold')} ({answer.reason})")
    for i, skill in enumerate(answer.skills, 1):
        score = "" if skill.score is None else f"  score {skill.score:.2f}"
        ctx.echo(f"  {i}. {skill.name}{score}  {ctx.paint(skill.reason, 'dim')}")
    if not answer.text:
        return
    ctx.echo(ctx.paint(f"--- text to inject ({len(answer.text)} characters) ---", "dim"))
    ctx.echo(answer.text)
