"""Progressive disclosure: what a model sees of a skill, tier by tier.

* Tier 1, :func:`render_listing` (:mod:`.listing`): names, descriptions and locations of
  the skills a model may use, for its system prompt, within a character budget.
* Tier 2, :func:`load_skill` (:mod:`.instructions`): one skill's instructions (its
  SKILL.md body) with the arguments substituted, within a token cap.
* Tier 3, :func:`read_resource` (:mod:`.resources`): one file from inside a skill's
  folder, on demand.

:mod:`.remote` reads instructions that replace the body (``instructions: {file|url}``);
:mod:`.answer` shapes a load's answer for every face and :mod:`.failures` its error codes;
:mod:`.suggestions` names the nearest skills or files when one does not exist, and
:mod:`.recording` wraps tiers 2 and 3 with their telemetry events.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.loader.answer import (
        content_notes,
        load_answer,
        load_notes,
        tool_availability,
    )
    from skilldeck.core.loader.failures import load_failure
    from skilldeck.core.loader.instructions import LoadResult, arguments_from_parameters, load_skill
    from skilldeck.core.loader.listing import DESCRIPTION_FLOOR, Listing, render_listing
    from skilldeck.core.loader.manifest import (
        Child,
        SkillEntry,
        build_entry,
        children,
        exact_text,
        mime_of,
        prefix_children,
        skill_paths,
        split_uri,
    )
    from skilldeck.core.loader.recording import load_and_record, read_and_record, record_load
    from skilldeck.core.loader.resources import Resource, read_resource
    from skilldeck.core.loader.suggestions import suggest_names, unknown_skill

__all__ = [
    "DESCRIPTION_FLOOR",
    "Child",
    "Listing",
    "LoadResult",
    "Resource",
    "SkillEntry",
    "arguments_from_parameters",
    "build_entry",
    "children",
    "content_notes",
    "exact_text",
    "load_and_record",
    "load_answer",
    "load_failure",
    "load_notes",
    "load_skill",
    "mime_of",
    "prefix_children",
    "read_and_record",
    "read_resource",
    "record_load",
    "render_listing",
    "skill_paths",
    "split_uri",
    "suggest_names",
    "tool_availability",
    "unknown_skill",
]

_NAMES = {
    "content_notes": "answer",
    "load_answer": "answer",
    "load_notes": "answer",
    "load_failure": "failures",
    "tool_availability": "answer",
    "LoadResult": "instructions",
    "arguments_from_parameters": "instructions",
    "load_skill": "instructions",
    "DESCRIPTION_FLOOR": "listing",
    "Listing": "listing",
    "render_listing": "listing",
    "Child": "manifest",
    "SkillEntry": "manifest",
    "build_entry": "manifest",
    "children": "manifest",
    "exact_text": "manifest",
    "mime_of": "manifest",
    "prefix_children": "manifest",
    "skill_paths": "manifest",
    "split_uri": "manifest",
    "load_and_record": "recording",
    "read_and_record": "recording",
    "record_load": "recording",
    "Resource": "resources",
    "read_resource": "resources",
    "suggest_names": "suggestions",
    "unknown_skill": "suggestions",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
