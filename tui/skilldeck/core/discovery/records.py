"""A parsed skill as a row of the store's ``skills`` table (declared here: :data:`TABLES`),
and back.

A row is keyed by the real path of the SKILL.md and holds the file's ``(mtime_ns, size)``
when parsed, its frontmatter hash and a JSON record: the frontmatter (the fields are
extracted from it again, which is cheap and cannot disagree), the parse diagnostics, the
validation diagnostics of each validator (profile and code version), the resource listing
and the mtimes of the folders it was read from. Only plain JSON is stored; a
skill whose frontmatter holds other YAML values (dates, sets, binary) is not stored and
is parsed every time. The content-model findings (``SD120``-``SD122``) are made again from
the frontmatter, so a row written before they existed still carries them. A row whose
values have the wrong types or whose JSON does not decode is dropped: its skill is parsed
again and the row rewritten.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.discovery.fields import CONTENT_CODES, extract
from skilldeck.core.model import Diagnostic, Severity, Skill, Source
from skilldeck.core.store import LocalStore, is_disk_full

RACY_NS = 2_000_000_000
"""A file or folder modified this close to when it was read may change again within the
same timestamp tick: its stamp is not stored, so the next run reads it again."""

_HASH_LEN = 64  # sha256 in hex

MAX_CHECKS = 4
"""Validation results kept per row (one per profile in use)."""


@dataclass(slots=True)
class Entry:
    """A skill with what the store keeps beside it.

    Attributes:
        skill: The skill; its ``diagnostics`` are the parse (``SD1xx``) ones only.
        checks: Validated diagnostics by validator key.
        stamps: ``(folder relative to the skill, mtime_ns)`` of each folder its resource
            listing read (``-1``: not to be trusted).
        md_path: The SKILL.md path as reached when parsed (the row is only reused there).
    """

    skill: Skill
    checks: dict[str, list[Diagnostic]] = field(default_factory=dict)
    stamps: list[tuple[str, int]] = field(default_factory=list)
    md_path: str = ""


class _Bad(Exception):
    """A stored value of the wrong type."""


def encode(entry: Entry, read_ns: int) -> tuple[int, int, str, str] | None:
    """``(mtime_ns, size, hash, record)`` of the row for ``entry`` (read at ``read_ns``),
    or None when it cannot be stored as plain JSON."""
    skill = entry.skill
    if not _plain(skill.frontmatter):
        return None
    record = {
        "md": entry.md_path,
        "frontmatter": skill.frontmatter,
        "field_lines": skill.field_lines,
        "body": [skill.body_line, skill.body_offset],
        "resources": skill.resources,
        "truncated": skill.resources_truncated,
        "stamps": [(rel, m if m < read_ns - RACY_NS else -1) for rel, m in entry.stamps],
        "diagnostics": _diag_rows(skill.diagnostics, skill.path),
        "checks": {k: _diag_rows(v, skill.path) for k, v in entry.checks.items()},
    }
    mtime = skill.mtime_ns if skill.mtime_ns < read_ns - RACY_NS else -1
    return mtime, skill.size, skill.content_hash, json.dumps(record)


def decode(
    row: tuple[Any, ...], path: Path, source: Source, root: Path | None, rel_id: str
) -> Entry | None:
    """The entry of a stored ``(path, mtime_ns, size, hash, record)`` row for the SKILL.md at
    ``path``, or None when the row does not decode or has values of the wrong types.

    The fields are extracted from the stored frontmatter again (as parsing does: the
    frontmatter is stored only when JSON gives it back unchanged).
    """
    try:
        return _decode(row, path, source, root, rel_id)
    except (_Bad, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def _decode(
    row: tuple[Any, ...], path: Path, source: Source, root: Path | None, rel_id: str
) -> Entry:
    _key, mtime, size, content_hash, text = row
    data = json.loads(_str(text))
    if type(data) is not dict or len(_str(content_hash)) != _HASH_LEN:
        raise _Bad
    body_line, body_offset = data["body"]
    base = path.parent
    skill = Skill(
        base.name,
        "",
        path,
        base,
        source,
        root,
        rel_id,
        frontmatter=_dict(data["frontmatter"]),
        field_lines=_lines(data["field_lines"]),
        body_line=_int(body_line),
        body_offset=_int(body_offset),
        resources=_strs(data["resources"]),
        resources_truncated=_bool(data["truncated"]),
        mtime_ns=_int(mtime),
        size=_int(size),
        content_hash=_str(content_hash),
    )
    extract(skill, skill.frontmatter)
    fresh = [d for d in skill.diagnostics if d.code in CONTENT_CODES]
    stored = _diags(data["diagnostics"], path)
    skill.diagnostics = stored + [d for d in fresh if d not in stored]
    checks = {_str(k): _diags(v, path) for k, v in _dict(data["checks"]).items()}
    stamps = [(_str(rel), _int(m)) for rel, m in data["stamps"]]
    return Entry(skill, checks, stamps, _str(data["md"]))


def stamps_hold(base_dir: str, stamps: list[tuple[str, int]]) -> bool:
    """True when every folder of a resource listing still has its stored mtime."""
    for rel, mtime in stamps:
        try:
            if (
                mtime < 0
                or os.stat(os.path.join(base_dir, rel) if rel else base_dir).st_mtime_ns != mtime
            ):
                return False
        except OSError:
            return False
    return bool(stamps)


def add_check(entry: Entry, key: str, diags: list[Diagnostic]) -> None:
    """Keep ``diags`` as the result of validator ``key`` (the oldest others go)."""
    entry.checks.pop(key, None)
    while len(entry.checks) >= MAX_CHECKS:
        del entry.checks[next(iter(entry.checks))]
    entry.checks[key] = diags


# --- plain values ------------------------------------------------------------------------


def _plain(value: Any, depth: int = 0) -> bool:
    """True when JSON gives ``value`` back unchanged (and it is not absurdly deep)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 50:
        return False
    if kind is list:
        return all(_plain(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False


def _diag_rows(diags: list[Diagnostic], path: Path) -> list[list[Any]]:
    """Diagnostics as rows; their path is 0 when it is the skill's own SKILL.md."""
    return [
        [
            d.code,
            d.severity.value,
            d.message,
            0 if d.path == path else (None if d.path is None else str(d.path)),
            d.line,
            d.column,
        ]
        for d in diags
    ]


def _diags(rows: Any, path: Path) -> list[Diagnostic]:
    if type(rows) is not list:
        raise _Bad
    out = []
    for code, severity, message, where, line, column in rows:
        if (line is not None and type(line) is not int) or (
            column is not None and type(column) is not int
        ):
            raise _Bad
        at = path if where == 0 else None if where is None else Path(_str(where))
        out.append(Diagnostic(_str(code), Severity(severity), _str(message), at, line, column))
    return out


def _str(value: Any) -> str:
    if type(value) is not str:
        raise _Bad
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise _Bad
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Bad
    return value


def _dict(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise _Bad
    return value


def _strs(value: Any) -> tuple[str, ...]:
    if type(value) is not list:
        raise _Bad
    for item in value:
        if type(item) is not str:
            raise _Bad
    return tuple(value)


def _lines(value: Any) -> dict[str, int]:
    if type(value) is not dict:
        raise _Bad
    for item in value.values():
        if type(item) is not int:
            raise _Bad
    return value


# --- the skills table ----------------------------------------------------------------------

TABLES = (
    # One parsed skill, keyed by the real path of its SKILL.md, with the file's stat when
    # parsed and its frontmatter hash; ``record`` is JSON (fields, resources and the
    # folder mtimes they were listed at, parse diagnostics, validated diagnostics by
    # validator). A row whose stat differs is parsed again (skilldeck.core.discovery).
    """CREATE TABLE IF NOT EXISTS skills (
        path TEXT PRIMARY KEY,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        hash TEXT NOT NULL,
        record TEXT NOT NULL
    )""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""

_SELECT_CHUNK = 500
_UPSERT = (
    "INSERT OR REPLACE INTO skills (path, mtime_ns, size, hash, record) VALUES (?, ?, ?, ?, ?)"
)


def read_rows(store: LocalStore, keys: list[str]) -> dict[str, tuple[Any, ...]]:
    """The stored ``(path, mtime_ns, size, hash, record)`` of each of ``keys`` with a row.

    A store that cannot be read is rebuilt (a notice says so) and gives nothing: every
    skill is parsed. A busy one gives nothing either.
    """
    out: dict[str, tuple[Any, ...]] = {}
    keys = [key for key in keys if storable(key)]
    try:
        store.ensure(TABLES)
        conn = store.connect()
        for start in range(0, len(keys), _SELECT_CHUNK):
            chunk = keys[start : start + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT path, mtime_ns, size, hash, record FROM skills WHERE path IN ({marks})"
            for row in conn.execute(query, chunk):
                out[row[0]] = row
    except sqlite3.Error as exc:
        if not _transient(exc):
            store.heal(f"reading skills failed ({exc})")
        return {}
    return out


def write_rows(store: LocalStore, rows: list[tuple[str, int, int, str, str]]) -> Diagnostic | None:
    """Store ``rows`` in one transaction; a catalog diagnostic (SD206) when it fails.

    A store found unusable is rebuilt and written once more.
    """
    if not rows:
        return None
    problem: sqlite3.Error | None = None
    for attempt in range(2):
        try:
            store.ensure(TABLES)
            with store.write() as conn:
                conn.executemany(_UPSERT, rows)
            return None
        except sqlite3.Error as exc:
            problem = exc
            if _transient(exc) or attempt:
                break
            store.heal(f"writing skills failed ({exc})")
    full = problem is not None and is_disk_full(problem)
    reason = "the disk is full" if full else str(problem)
    message = f"local store not updated ({reason}); skills were read from their files"
    return Diagnostic("SD206", Severity.WARNING, message, store.path)


def prune(store: LocalStore) -> int:
    """Drop the rows of SKILL.md files that no longer exist; returns how many."""
    store.ensure(TABLES)
    conn = store.connect()
    gone = [p for (p,) in conn.execute("SELECT path FROM skills") if not os.path.exists(p)]
    if gone:
        with store.write() as tx:
            tx.executemany("DELETE FROM skills WHERE path = ?", [(p,) for p in gone])
    return len(gone)


def storable(key: str) -> bool:
    """True when ``key`` (a path) can be a row key: file names that are not UTF-8 decode
    to lone surrogates, which SQLite cannot store; such skills are parsed every time."""
    if key.isascii():
        return True
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _transient(exc: sqlite3.Error) -> bool:
    """A busy or full store: nothing wrong with the file itself."""
    text = str(exc).lower()
    return is_disk_full(exc) or "locked" in text or "busy" in text
