"""Discovery: find skills in every root, read them (through the local store) and resolve
name clashes.

:mod:`.pipeline` is the walk and load :func:`discover` makes (:func:`scan_roots`,
:func:`fingerprint`, :func:`load_found` for a one-shot search); :mod:`.scan` walks a root
with ``os.scandir``, :mod:`.frontmatter` reads a SKILL.md's frontmatter, :mod:`.catalog`
ranks roots and marks shadowed skills and :mod:`.records` turns a skill into a store row
and back.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.discovery.frontmatter import (
        SKILL_FILE,
        parse_bytes,
        parse_skill_file,
        read_body,
        read_source,
    )
    from skilldeck.core.discovery.pipeline import (
        Root,
        RootScan,
        default_roots,
        discover,
        fingerprint,
        load_found,
        scan_roots,
    )

__all__ = [
    "SKILL_FILE",
    "Root",
    "RootScan",
    "default_roots",
    "discover",
    "fingerprint",
    "load_found",
    "parse_bytes",
    "parse_skill_file",
    "read_body",
    "read_source",
    "scan_roots",
]

_NAMES = {
    "SKILL_FILE": "frontmatter",
    "parse_bytes": "frontmatter",
    "parse_skill_file": "frontmatter",
    "read_body": "frontmatter",
    "read_source": "frontmatter",
    "Root": "pipeline",
    "RootScan": "pipeline",
    "default_roots": "pipeline",
    "discover": "pipeline",
    "fingerprint": "pipeline",
    "load_found": "pipeline",
    "scan_roots": "pipeline",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
