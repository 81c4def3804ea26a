"""The ``skill://`` resources: listing pages, template completion and reads.

Every skill a model may see is a resource (its SKILL.md) and so is every file inside it,
addressed as ``skill://{name}/{path}``. :class:`~skilldeck.mcp.service.SkillService`
delegates its resource methods here; like the service, nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from skilldeck.core import discovery
from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill
from skilldeck.core.safe_text import for_terminal, is_safe_name
from skilldeck.core.workspace import Workspace

if TYPE_CHECKING:
    from skilldeck.core.loader import Resource

RESOURCE_PAGE = 500
"""Skills per ``resources/list`` page."""


@dataclass(slots=True)
class ResourceContent:
    """One ``skill://`` resource read: text or bytes with a media type."""

    uri: str
    mime: str
    text: str | None = None
    data: bytes | None = None


def page_start(cursor: str | None) -> int:
    """The index a ``resources/list`` cursor points at; INVALID_PARAM for a bad cursor."""
    start = 0
    if cursor:
        try:
            start = max(0, int(cursor)) if len(cursor) <= 20 else -1
        except ValueError:
            start = -1
        if start < 0:
            shown = for_terminal(repr(cursor[:40]))
            raise SkilldeckError(ErrorCode.INVALID_PARAM, f"bad cursor {shown}")
    return start


def resource_page(visible: list[Skill], start: int) -> tuple[list[Skill], str | None]:
    """The skills of the page starting at ``start`` and the cursor of the next (or None)."""
    skills = visible[start : start + RESOURCE_PAGE]
    following = start + RESOURCE_PAGE
    return skills, (str(following) if following < len(visible) else None)


def complete(
    workspace: Workspace,
    settings: Settings,
    visible: Callable[[], list[Skill]],
    argument: str,
    prefix: str,
    known: dict[str, str],
) -> list[str]:
    """Completions of a ``skill://`` template argument: skill names or file paths.

    Args:
        workspace: Where skills are looked up by name.
        settings: Loaded settings (``skills_v1`` off completes no path).
        visible: The skills a model may see (called only to complete a name).
        argument: The template argument, ``name`` or ``path``.
        prefix: What the client typed so far.
        known: Arguments already filled in (``name`` for a path).
    """
    if argument == "name":
        return [s.name for s in visible() if s.name.startswith(prefix)]
    if argument == "path" and settings.skills_v1:
        skill = workspace.by_name(known.get("name", ""))
        if skill is None or not (skill.enabled and skill.valid):
            return []
        files = [skill.path.name, *skill.resources]
        return [f for f in files if f.startswith(prefix)]
    return []


def read_uri(
    uri: str, skill_for: Callable[[str], Skill], read: Callable[[Skill, str], Resource]
) -> ResourceContent:
    """Read ``skill://{name}/SKILL.md`` or ``skill://{name}/{path}``.

    Args:
        uri: The resource URI.
        skill_for: The skill a model may load by that name (raises when it may not).
        read: Reads one file of a skill for an agent (the workspace's write door: the byte
            cap and the ``skill_resource_requested`` event applied there).
    """
    prefix = "skill://"
    if not uri.startswith(prefix):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"not a skill:// URI: {uri!r}")
    name, sep, rel = uri[len(prefix) :].partition("/")
    name, rel = unquote(name), unquote(rel)
    if not name or not sep or not rel:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"expected skill://NAME/PATH, got {uri!r}")
    skill = skill_for(name)
    check_path(rel)
    if rel.lower() == "skill.md":
        return ResourceContent(uri, "text/markdown", text=discovery.read_source(skill))
    resource = read(skill, rel)
    if resource.binary:
        return ResourceContent(uri, resource.mime, data=resource.data)
    return ResourceContent(uri, resource.mime, text=resource.text or "")


def check_path(path: str) -> None:
    """INVALID_PARAM for a resource path with control characters or over 4096 characters
    (no file inside a skill has such a name; NUL would crash the OS call)."""
    if not is_safe_name(path, 4096):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            "path must be 1-4096 characters without control or bidirectional characters",
        )


def resource_uri(name: str, rel_path: str) -> str:
    """The ``skill://`` URI of a file inside a skill."""
    return f"skill://{quote(name, safe='')}/{quote(rel_path, safe='/')}"
