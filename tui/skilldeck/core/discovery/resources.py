"""The resource files of a skill folder: everything but its SKILL.md, bounded.

The listing is the skill folder's one walk (:func:`~skilldeck.core.skillfolder.walk`)
narrowed to what agents are shown: hidden entries and folders starting with ``_`` are left
out, and so is anything deeper or later than the bounds. Names the walk finds unsafe stay
listed, so validation can name them (``SV601``).
"""

from __future__ import annotations

from skilldeck.core import skillfolder

MAX_RESOURCES = 200
"""Bound on the number of resource files listed per skill."""

MAX_RESOURCE_DEPTH = 6
"""Resource folders deeper than this are not listed."""

ENTRIES_PER_RESOURCE = 8
"""The walk behind a listing stops after this many entries (folders, hidden files) per
resource file it may list."""


def list_resources(
    base_dir: str,
    limit: int = MAX_RESOURCES,
    max_depth: int = MAX_RESOURCE_DEPTH,
    stamps: list[tuple[str, int]] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Files under ``base_dir`` other than the SKILL.md, relative POSIX paths, sorted.

    Hidden entries and folders starting with ``_`` are skipped, symlinked folders are not
    entered (what they lead to inside the skill is listed where it is); at most ``limit``
    files and ``max_depth`` levels are listed.

    Args:
        base_dir: The skill folder.
        limit: Bound on the number of files.
        max_depth: Bound on folder depth.
        stamps: When given, receives ``(folder relative to base_dir, mtime_ns)`` for every
            folder the listing read, ``""`` being ``base_dir`` (the store re-checks them).

    Returns:
        ``(paths, truncated)``.
    """

    def enter(rel: str, depth: int) -> bool:
        return depth < max_depth and rel.rsplit("/", 1)[-1][0] not in "._"

    listing = skillfolder.walk(
        base_dir,
        limit=limit * ENTRIES_PER_RESOURCE,
        enter=enter,
        stamps=[] if stamps is None else stamps,
    )
    paths = [
        entry.rel
        for entry in listing.entries
        if entry.kind != skillfolder.FOLDER_LINK
        and entry.rel.rsplit("/", 1)[-1][0] != "."
        and entry.rel.lower() != "skill.md"
    ]
    return tuple(paths[:limit]), listing.truncated or len(paths) > limit
