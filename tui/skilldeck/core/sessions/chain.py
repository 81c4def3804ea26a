"""The audit log's hash chain: how a row is hashed and how a chain is checked.

Every audit row carries ``prev_hash`` (the hash of the row before it; :data:`GENESIS` for
the first) and ``hash``, the SHA-256 of a canonical encoding of ``prev_hash`` and the row's
own fields (:func:`row_hash`). The newest ``(id, hash)``, the *head*, is kept outside the
audit table and moved in the same transaction as every append. Together they make changes
visible: a deleted row breaks the link of the row after it (or, for the newest rows, no
longer matches the head), an edited row no longer matches its hash, and two rows whose
contents were swapped each match a hash written for the other's place.

Pruning deletes only the oldest rows (a prefix of the chain) and then appends a
checkpoint row (action :data:`CHECKPOINT`) whose detail holds the hash of the last row it
deleted; the first row kept links to that hash, so the chain stays verifiable.

What the chain does not do: anyone who can write the database can also recompute every
hash and the head. Such a rewrite is caught only against a head recorded elsewhere
(``skilldeck session verify --head HASH``), as transparency logs anchor theirs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

GENESIS = "0" * 64
"""``prev_hash`` of the first row ever written."""
CHECKPOINT = "audit_pruned"
"""Audit action of the row a prune appends (detail: ``count``, ``last_id``, ``last_hash``)."""
MIN_RETENTION = 86_400.0
"""Shortest retention, in seconds, of anything pruning deletes (a day)."""
HASH_VERSION = "skilldeck-audit-v1"
"""The first field of every hashed row (PostgreSQL's ``skilldeck_row_hash`` writes it too)."""
_MATCH_LIMIT = 200
"""Damaged rows compared pairwise to tell a swap from an edit (beyond this: "edited")."""


def _time_text(value: object) -> str:
    """A stored time as hashed: the shortest round-trip text of the float."""
    if isinstance(value, int | float):
        return repr(float(value))
    return str(value)


def row_hash(
    prev_hash: str | None,
    row_id: int,
    time: object,
    session_id: str | None,
    actor: str,
    action: str,
    subject: str,
    detail: str,
) -> str:
    """The SHA-256 (hex) of one audit row chained to ``prev_hash``.

    ``detail`` is the detail JSON as the database returns it as text (SQLite: the stored
    text; PostgreSQL: ``detail::text``, JSONB's canonical form).
    """
    fields = [HASH_VERSION, prev_hash, int(row_id), _time_text(time), session_id, actor, action]
    payload = json.dumps([*fields, subject, detail], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainRow:
    """One audit row as the chain sees it (``detail`` as text)."""

    id: int
    time: Any
    session_id: str | None
    actor: str
    action: str
    subject: str
    detail: str
    prev_hash: str | None
    hash: str | None

    def computed(self, prev_hash: str | None = None, row_id: int | None = None) -> str:
        """This row's hash, computed (optionally as if at another place in the chain)."""
        return row_hash(
            self.prev_hash if prev_hash is None else prev_hash,
            self.id if row_id is None else row_id,
            self.time,
            self.session_id,
            self.actor,
            self.action,
            self.subject,
            self.detail,
        )

    def values(self) -> tuple[Any, ...]:
        """The stored columns in order: id, time, session, actor, action, subject, detail,
        prev_hash, hash."""
        return (
            self.id,
            self.time,
            self.session_id,
            self.actor,
            self.action,
            self.subject,
            self.detail,
            self.prev_hash,
            self.hash,
        )

    @property
    def intact(self) -> bool:
        """Whether the row still matches the hash written with it."""
        return self.hash is not None and self.prev_hash is not None and self.computed() == self.hash


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One break in the chain.

    Attributes:
        id: The audit id where the break shows (for ``head``: the recorded head id).
        kind: ``missing`` (rows deleted, or the row before rewritten), ``edited``,
            ``reordered`` (rows swapped or moved), ``unchained`` (a row written without a
            hash, behind Skilldeck's back), ``head`` (the recorded head does not match the
            newest row) or ``anchor`` (a head recorded earlier is not in the chain).
        message: What was found, in one sentence.
    """

    id: int
    kind: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"id": self.id, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class AuditVerification:
    """What :meth:`SessionStore.verify_audit` found.

    Attributes:
        ok: The chain holds (and the anchor, when given, is in it).
        rows: Rows checked.
        first_id: Oldest id kept (None when the log is empty).
        head_id: The head recorded outside the rows (None when it is missing).
        head_hash: Its hash: record it elsewhere to check against later.
        problems: Every break found, in id order.
        anchor: The head hash given to check, if any.
        anchor_id: Where that hash was found (a pruned row: the checkpoint's last id).
    """

    ok: bool
    rows: int
    first_id: int | None
    head_id: int | None
    head_hash: str | None
    problems: tuple[AuditProblem, ...] = ()
    anchor: str | None = None
    anchor_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "ok": self.ok,
            "rows": self.rows,
            "first_id": self.first_id,
            "head": {"id": self.head_id, "hash": self.head_hash},
            "anchor": None if self.anchor is None else {"hash": self.anchor, "id": self.anchor_id},
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass(slots=True)
class _Walk:
    """State of one pass over the rows, oldest first."""

    count: int = 0
    first: ChainRow | None = None
    last: ChainRow | None = None
    link: str | None = None  # hash the next row must name as prev_hash
    hashes: dict[str, int] = field(default_factory=dict)
    checkpoints: dict[str, int] = field(default_factory=dict)
    damaged: list[ChainRow] = field(default_factory=list)
    unlinked: list[tuple[ChainRow, ChainRow]] = field(default_factory=list)

    def step(self, row: ChainRow) -> None:
        """Take the next row."""
        self.count += 1
        intact = row.intact
        if not intact:
            self.damaged.append(row)
        if self.first is None:
            self.first = row
        elif row.prev_hash != self.link and self.last is not None:
            self.unlinked.append((row, self.last))
        if row.hash:
            self.hashes.setdefault(row.hash, row.id)
            self.link = row.hash
        if intact and row.action == CHECKPOINT and row.session_id is None:
            _note_checkpoint(self.checkpoints, row)
        self.last = row


def _note_checkpoint(checkpoints: dict[str, int], row: ChainRow) -> None:
    try:
        detail = json.loads(row.detail)
        last_hash, last_id = detail["last_hash"], int(detail["last_id"])
    except (ValueError, TypeError, KeyError):
        return
    if isinstance(last_hash, str) and last_id < row.id:
        checkpoints[last_hash] = last_id


def _start_problem(walk: _Walk, explained: set[int]) -> list[AuditProblem]:
    """The oldest row must follow the genesis or a prune checkpoint kept in the log."""
    first = walk.first
    if first is None or first.id in explained or first.prev_hash == GENESIS:
        return []
    pruned_up_to = walk.checkpoints.get(first.prev_hash or "")
    if pruned_up_to is not None and pruned_up_to < first.id:
        return []
    message = f"rows before id {first.id} were deleted without a prune checkpoint"
    return [AuditProblem(first.id, "missing", message)]


def _swap_partner(row: ChainRow, others: list[ChainRow]) -> tuple[int, bool] | None:
    """The id of the place ``row``'s content was written for, when it is another's, and
    whether the whole row (with its hashes) moved rather than only its content."""
    for other in others:
        if other.id == row.id:
            continue
        if row.hash and row.computed(row_id=other.id) == row.hash:
            return other.id, True
        if other.hash and row.computed(other.prev_hash or "", other.id) == other.hash:
            return other.id, False
    return None


def _damage_problems(walk: _Walk) -> tuple[list[AuditProblem], set[int]]:
    """Rows that do not match their own hash (unchained, swapped or edited), and the ids
    whose broken link that already explains (unchained rows, whole rows moved)."""
    found: list[AuditProblem] = []
    explained: set[int] = set()
    candidates = walk.damaged[:_MATCH_LIMIT]
    for row in walk.damaged:
        if row.hash is None or row.prev_hash is None:
            message = f"row {row.id} carries no hash: it was written behind Skilldeck's back"
            found.append(AuditProblem(row.id, "unchained", message))
            explained.add(row.id)
            continue
        partner = _swap_partner(row, candidates)
        if partner is not None:
            message = f"row {row.id} holds the entry written as row {partner[0]} (rows reordered)"
            found.append(AuditProblem(row.id, "reordered", message))
            if partner[1]:
                explained.add(row.id)
        else:
            message = f"row {row.id} no longer matches its hash: its content was edited"
            found.append(AuditProblem(row.id, "edited", message))
    return found, explained


def _link_problems(walk: _Walk, explained: set[int]) -> list[AuditProblem]:
    """A row whose ``prev_hash`` is not the hash of the row before it."""
    found: list[AuditProblem] = []
    for row, before in walk.unlinked:
        if row.id in explained:
            continue
        elsewhere = walk.hashes.get(row.prev_hash or "")
        if elsewhere is not None:
            message = (
                f"row {row.id} was written after the row now at id {elsewhere}, "
                f"not after row {before.id} (rows reordered)"
            )
            found.append(AuditProblem(row.id, "reordered", message))
        else:
            message = (
                f"the chain breaks between id {before.id} and id {row.id}: a row there was "
                f"deleted, or row {before.id} was rewritten"
            )
            found.append(AuditProblem(row.id, "missing", message))
    return found


def _head_problems(walk: _Walk, head: tuple[int, str] | None) -> list[AuditProblem]:
    """The head kept outside the rows must name the newest row."""
    last = walk.last
    if head is None:
        message = "the chain head is missing: it was deleted behind Skilldeck's back"
        return [AuditProblem(0, "head", message)]
    head_id, head_hash = head
    if last is None:
        if head_id == 0 and head_hash == GENESIS:
            return []
        message = f"every row up to the head (id {head_id}) is missing: the log was emptied"
        return [AuditProblem(head_id, "missing", message)]
    if (last.id, last.hash) == (head_id, head_hash):
        return []
    if head_id > last.id:
        message = f"rows after id {last.id} up to the head (id {head_id}) are missing"
        return [AuditProblem(head_id, "missing", message)]
    if head_id < last.id:
        message = f"rows after the head (id {head_id}) up to id {last.id} were added behind "
        return [AuditProblem(head_id, "head", message + "Skilldeck's back")]
    message = f"the newest row (id {last.id}) does not match the head: it was rewritten"
    return [AuditProblem(head_id, "head", message)]


def _anchor(walk: _Walk, anchor: str) -> tuple[int | None, list[AuditProblem]]:
    """Where a head recorded earlier is in the chain, or the problem of its absence."""
    if anchor in walk.hashes:
        return walk.hashes[anchor], []
    if anchor in walk.checkpoints:
        return walk.checkpoints[anchor], []
    if anchor == GENESIS:
        return 0, []
    oldest = f" (the oldest row kept is id {walk.first.id})" if walk.first else ""
    message = (
        f"head {anchor[:16]}… is not in the chain: the log was rewritten after it was "
        f"recorded, or the rows up to it were pruned{oldest}"
    )
    return None, [AuditProblem(0, "anchor", message)]


def verify_chain(
    rows: Iterable[ChainRow], head: tuple[int, str] | None, anchor: str | None = None
) -> AuditVerification:
    """Check a whole audit log, oldest row first.

    Args:
        rows: Every audit row, in id order.
        head: The ``(id, hash)`` recorded outside the rows, or None when it is missing.
        anchor: A head hash recorded earlier that must still be in the chain.
    """
    walk = _Walk()
    for row in rows:
        walk.step(row)
    problems, explained = _damage_problems(walk)
    problems += _start_problem(walk, explained) + _link_problems(walk, explained)
    problems.sort(key=lambda p: p.id)
    problems += _head_problems(walk, head)
    anchor_id: int | None = None
    if anchor is not None:
        anchor_id, missing = _anchor(walk, anchor)
        problems += missing
    return AuditVerification(
        ok=not problems,
        rows=walk.count,
        first_id=walk.first.id if walk.first else None,
        head_id=head[0] if head else None,
        head_hash=head[1] if head else None,
        problems=tuple(problems),
        anchor=anchor,
        anchor_id=anchor_id,
    )
