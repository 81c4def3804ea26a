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

from skilldeck.core.install.frozen import (
    Drift,
    FrozenPlan,
    apply_frozen,
    find_lock,
    frozen_plan,
    verify,
)
from skilldeck.core.install.lock import LOCK_NAME, LockEntry, Lockfile, read_lock, tree_hash
from skilldeck.core.install.ops import (
    STATES,
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
from skilldeck.core.install.review import FileChange, Finding, SkillReview
from skilldeck.core.install.skills_json import JSON_LOCK_NAME, read_json_lock
from skilldeck.core.install.wellknown import Index, IndexEntry, index_url, read_index

__all__ = [
    "JSON_LOCK_NAME",
    "LOCK_NAME",
    "STATES",
    "Candidate",
    "Drift",
    "FileChange",
    "Finding",
    "FrozenPlan",
    "Index",
    "IndexEntry",
    "LockEntry",
    "Lockfile",
    "SkillReview",
    "Status",
    "UpdatePlan",
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
    "prepared_updates",
    "read_index",
    "read_json_lock",
    "read_lock",
    "refresh_pin",
    "source_switch",
    "state_of",
    "target_root",
    "tree_hash",
    "update_blockers",
    "verify",
]
