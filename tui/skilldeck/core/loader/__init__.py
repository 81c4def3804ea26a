"""Progressive disclosure: what a model sees of a skill, tier by tier.

* Tier 1, :func:`render_listing` (:mod:`.listing`): names, descriptions and locations of
  the skills a model may use, for its system prompt, within a character budget.
* Tier 2, :func:`load_skill` (:mod:`.instructions`): one skill's instructions (its
  SKILL.md body) with the arguments substituted, within a token cap.
* Tier 3, :func:`read_resource` (:mod:`.resources`): one file from inside a skill's
  folder, on demand.

:mod:`.remote` reads instructions that replace the body (``instructions: {file|url}``);
:mod:`.suggestions` names the nearest skills or files when one does not exist, and
:mod:`.recording` wraps tiers 2 and 3 with their telemetry events.
"""

from skilldeck.core.loader.instructions import (
    DEFAULT_TOKEN_CAP,
    LoadResult,
    arguments_from_parameters,
    load_skill,
    split_arguments,
    substitute,
)
from skilldeck.core.loader.listing import (
    DEFAULT_BUDGET,
    DESCRIPTION_FLOOR,
    FORMATS,
    Listing,
    render_listing,
)
from skilldeck.core.loader.recording import load_and_record, read_and_record, record_load
from skilldeck.core.loader.resources import (
    BINARY_SNIFF_BYTES,
    DEFAULT_BYTE_CAP,
    Resource,
    read_resource,
)
from skilldeck.core.loader.suggestions import suggest_names, unknown_skill

__all__ = [
    "BINARY_SNIFF_BYTES",
    "DEFAULT_BUDGET",
    "DEFAULT_BYTE_CAP",
    "DEFAULT_TOKEN_CAP",
    "DESCRIPTION_FLOOR",
    "FORMATS",
    "Listing",
    "LoadResult",
    "Resource",
    "arguments_from_parameters",
    "load_and_record",
    "load_skill",
    "read_and_record",
    "read_resource",
    "record_load",
    "render_listing",
    "split_arguments",
    "substitute",
    "suggest_names",
    "unknown_skill",
]
