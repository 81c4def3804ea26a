"""Install, pin, check and update skills from git, with every change reviewed first.

- :mod:`~skilldeck.core.install.git`: safe ``git`` subprocess calls (no hooks, no prompts);
- :mod:`~skilldeck.core.install.lock`: ``skills-lock.toml`` and the tree hash;
- :mod:`~skilldeck.core.install.review`: findings, scripts, tools, diffs;
- :mod:`~skilldeck.core.install.apply`: staged, atomic installs;
- :mod:`~skilldeck.core.install.ops`: add / check / update / remove for every face;
- :mod:`~skilldeck.core.install.sync`: place installed skills in agents' folders;
- :mod:`~skilldeck.core.install.skills_json`: read the ``skills`` installer's ``skills-lock.json``;
- :mod:`~skilldeck.core.install.frozen`: ``install --frozen`` and ``verify`` against a lock;
- :mod:`~skilldeck.core.install.wellknown`: read a well-known skills index, fetch and verify
  its artifacts; :mod:`~skilldeck.core.install.archive`: unpack them safely;
- :mod:`~skilldeck.core.install.publish`: write such an index for a folder of skills.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.install.apply import remove_installed
    from skilldeck.core.install.frozen import apply_frozen, find_lock, frozen_plan, verify
    from skilldeck.core.install.git import is_url, parse_shorthand
    from skilldeck.core.install.lock import LockEntry, Lockfile, read_lock, tree_hash
    from skilldeck.core.install.ops import (
        Candidate,
        Status,
        UpdatePlan,
        apply_update,
        blockers,
        candidates,
        check,
        fetched,
        fetched_index,
        install,
        prepared_updates,
        refresh_pin,
        source_switch,
        state_of,
        target_root,
        update_blockers,
    )
    from skilldeck.core.install.publish import publish as publish_index
    from skilldeck.core.install.reasons import FORCIBLE, Reason
    from skilldeck.core.install.review import Finding, SkillReview
    from skilldeck.core.install.skills_json import read_json_lock
    from skilldeck.core.install.sync import SyncResult, agent_dir, read_record, sync_to
    from skilldeck.core.install.wellknown import IndexEntry, index_url, read_index

__all__ = [
    "FORCIBLE",
    "Candidate",
    "Finding",
    "IndexEntry",
    "LockEntry",
    "Lockfile",
    "Reason",
    "SkillReview",
    "Status",
    "SyncResult",
    "UpdatePlan",
    "agent_dir",
    "apply_frozen",
    "apply_update",
    "blockers",
    "candidates",
    "check",
    "fetched",
    "fetched_index",
    "find_lock",
    "frozen_plan",
    "index_url",
    "install",
    "is_url",
    "parse_shorthand",
    "prepared_updates",
    "publish_index",
    "read_index",
    "read_json_lock",
    "read_lock",
    "read_record",
    "refresh_pin",
    "remove_installed",
    "source_switch",
    "state_of",
    "sync_to",
    "target_root",
    "tree_hash",
    "update_blockers",
    "verify",
]

_NAMES = {
    "remove_installed": "apply",
    "apply_frozen": "frozen",
    "find_lock": "frozen",
    "frozen_plan": "frozen",
    "verify": "frozen",
    "is_url": "git",
    "parse_shorthand": "git",
    "LockEntry": "lock",
    "Lockfile": "lock",
    "read_lock": "lock",
    "tree_hash": "lock",
    "Candidate": "ops",
    "Status": "ops",
    "UpdatePlan": "ops",
    "apply_update": "ops",
    "blockers": "ops",
    "candidates": "ops",
    "check": "ops",
    "fetched": "ops",
    "fetched_index": "ops",
    "install": "ops",
    "prepared_updates": "ops",
    "refresh_pin": "ops",
    "source_switch": "ops",
    "state_of": "ops",
    "target_root": "ops",
    "update_blockers": "ops",
    "publish_index": "publish:publish",
    "FORCIBLE": "reasons",
    "Reason": "reasons",
    "Finding": "review",
    "SkillReview": "review",
    "read_json_lock": "skills_json",
    "SyncResult": "sync",
    "agent_dir": "sync",
    "read_record": "sync",
    "sync_to": "sync",
    "IndexEntry": "wellknown",
    "index_url": "wellknown",
    "read_index": "wellknown",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
