"""What a model reads from the server besides a skill: its instructions and search answers.

:class:`~skilldeck.mcp.service.SkillService` builds its ``instructions`` and its
``search_skills`` answer here; like the service, nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skilldeck.core import loader
from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.model import Skill
    from skilldeck.core.search import SearchResponse

DESCRIPTION_CAP = 1024
"""Most characters of one description a search result carries (the spec allows 1,024; a
longer one is cut and marked, so one skill cannot flood an agent's context)."""
INSTRUCTIONS_BUDGET = 2000
"""Characters of skill listing in the server instructions."""
INSTRUCTIONS_SKILLS = 40
"""Skills offered to the listing in the server instructions."""

INTRO = (
    "Skilldeck serves Agent Skills: folders of instructions for specific tasks. Before a "
    "task, call search_skills with a few words describing it (or pick from the listing "
    "below), then load_skill to read the skill's instructions and follow them. Files the "
    "instructions mention are read with read_skill_resource. Call check_tool before using "
    "a tool the operator may restrict; requires_approval means wait for the operator."
)


SKILLS_OFF = (
    "Skills are turned off on this server (feature flag skills_v1 is off): no skill is "
    "listed or loaded."
)


def instructions_text(
    visible: list[Skill],
    budget: int = INSTRUCTIONS_BUDGET,
    *,
    skills_v1: bool = True,
    used: Mapping[str, int] | None = None,
) -> str:
    """The server instructions: how to use the tools plus a short skill listing.

    Only the :data:`INSTRUCTIONS_SKILLS` most useful skills are offered to the listing
    (most loaded lately across sessions, then highest priority, then by name), so a large
    catalog costs no more than a small one; the closing line says how many more there are.

    Args:
        visible: The skills a model may see.
        budget: Characters of listing.
        skills_v1: The feature flag; off says skills are turned off instead.
        used: Skill name -> recent loads (all sessions).
    """
    if not skills_v1:
        return f"{INTRO}\n\n{SKILLS_OFF}"
    total = len(visible)
    head = f"{INTRO}\n\n{total} skill{'s' if total != 1 else ''} available."
    if not total:
        return head
    uses = used or {}
    chosen = sorted(
        visible, key=lambda s: (-uses.get(s.name, 0), -s.priority, s.name.lower(), s.name)
    )
    chosen = chosen[:INSTRUCTIONS_SKILLS]
    listing = loader.render_listing(chosen, budget=budget, fmt="markdown", ranked=True)
    text = listing.text
    if len(listing.included) < total:
        more = total - len(listing.included)
        lines = text.split("\n")
        if listing.omitted and lines[-1].startswith("(") and "left out" in lines[-1]:
            text = "\n".join(lines[:-1]).rstrip("\n")
        text += (
            f"\n\n{more} more skill{'s' if more != 1 else ''} not shown: call "
            "search_skills with the task, or list_skills for the full listing."
        )
    elif listing.shortened:
        text += "\n\nDescriptions are shortened; list_skills gives them in full."
    return f"{head}\n\n{text}"


def search_answer(
    query: str, response: SearchResponse, visible_total: int, semantic: str = "off"
) -> tuple[dict[str, Any], str]:
    """The ``search_skills`` answer: structured results and the text a model reads.

    Args:
        query: The query searched for.
        response: The agent search's response.
        visible_total: Skills a model may see (the total when the response has none).
        semantic: The embedding signal's state (``on``, ``pending``, ``off`` or
            ``unavailable``); the answer's ``mode`` is ``hybrid`` when it is on, else
            ``lexical``.
    """
    results = []
    for result in response.results:
        skill = result.skill
        cut = len(skill.description) > DESCRIPTION_CAP
        description = skill.description[:DESCRIPTION_CAP] + ("…" if cut else "")
        results.append(
            {
                "name": skill.name,
                "description": description,
                "description_truncated": cut,
                "score": round(float(result.score), 4),
                "confident": bool(result.confident),
                "path": str(skill.path),
            }
        )
    confident = bool(response.confident) and bool(results)
    message = None
    if not results:
        message = f"No skill matches {query!r}."
    elif not confident:
        message = (
            f"No confident match for {query!r}: the closest skills are listed, but none "
            "clearly fits. Work without a skill unless one of them obviously applies."
        )
    elif getattr(response, "clustered", False):
        message = "Several skills scored close together; read their descriptions before choosing."
    data: dict[str, Any] = {
        "query": query,
        "results": results,
        "confident": confident,
        "clustered": bool(getattr(response, "clustered", False)),
        "total": int(getattr(response, "total", visible_total)),
        "message": message,
        "mode": "hybrid" if semantic == "on" else "lexical",
        "semantic": semantic,
    }
    lines = [message] if message else []
    for i, item in enumerate(results, 1):
        flag = "" if item["confident"] else " (not confident)"
        lines.append(
            f"{i}. {item['name']} — score {item['score']:.2f}{flag}: {item['description']}"
        )
    if results and confident:
        lines.append(f"Load the best match with load_skill(name={results[0]['name']!r}).")
    return data, "\n".join(lines)


_ASK = (
    "Ask the operator (the person running Skilldeck) if you need it; do not try to change "
    "how this server is configured."
)
_REFUSALS = {
    "exec_disabled": "Running skill code is not enabled on this server. " + _ASK,
    "denied": "The operator denied {what} for this session. Do not retry it.",
    "requires_approval": (
        "{what} is waiting for the operator's approval. Tell the user it needs the "
        "operator's review, and call again only after they approve it."
    ),
    "not_allowed": (
        "The operator has not allowed {what} as its files are now (an edited skill needs a "
        "new review). " + _ASK
    ),
    "disabled": "The operator disabled this skill. " + _ASK,
    "invalid": "This skill is invalid and cannot run. " + _ASK,
    "sandbox_required": "This server runs skill code only in a sandbox it does not have. " + _ASK,
}


def agent_refusal(exc: SkilldeckError, what: str) -> SkilldeckError:
    """A refusal to run skill code, worded for an agent: what to ask the operator for,
    never how to turn execution on. Other errors are returned unchanged.

    Args:
        exc: The core's refusal (``PERMISSION_DENIED`` with a ``reason``).
        what: The thing refused, e.g. ``script run.py of skill demo``.
    """
    template = _REFUSALS.get(str(exc.details.get("reason", "")))
    if exc.code is not ErrorCode.PERMISSION_DENIED or template is None:
        return exc
    keep = {k: v for k, v in exc.details.items() if k not in ("notices",)}
    return SkilldeckError(exc.code, template.format(what=what), **keep)
