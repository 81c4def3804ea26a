"""Install, pin, check and update skills from git, with every change reviewed first.

- :mod:`~skilldeck.core.install.git`: safe ``git`` subprocess calls (no hooks, no prompts);
- :mod:`~skilldeck.core.install.lock`: ``skills-lock.toml`` and the tree hash;
- :mod:`~skilldeck.core.install.review`: findings, scripts, tools, diffs;
- :mod:`~skilldeck.core.install.apply`: staged, atomic installs;
- :mod:`~skilldeck.core.install.ops`: add / check / update / remove for every face;
- :mod:`~skilldeck.core.install.sync`: place installed skills in agents' folders.
"""

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
    install,
    prepared_updates,
    source_switch,
    state_of,
    target_root,
    update_blockers,
)
from skilldeck.core.install.review import FileChange, Finding, SkillReview

__all__ = [
    "LOCK_NAME",
    "STATES",
    "Candidate",
    "FileChange",
    "Finding",
    "LockEntry",
    "Lockfile",
    "SkillReview",
    "Status",
    "UpdatePlan",
    "apply_update",
    "blockers",
    "candidates",
    "check",
    "fetched",
    "install",
    "prepared_updates",
    "read_lock",
    "source_switch",
    "state_of",
    "target_root",
    "tree_hash",
    "update_blockers",
]
