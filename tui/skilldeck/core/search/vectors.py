"""Skill embeddings kept in the local store (table ``skill_vectors``, declared here:
:data:`TABLES`), one row per model id and skill version, so a skill is embedded once and a
one-shot search embeds only its query.

A row's ``key`` names one version of one skill's embedded text (see
:meth:`~skilldeck.core.search.embedding.EmbeddingSignal.vector_keys`: a digest of the
SKILL.md frontmatter hash and the skill name, which decide that text); ``vector`` is raw
little-endian float32, read back with ``numpy.frombuffer`` and checked (length, finite,
unit norm): a row failing a check is ignored and its skill embedded again. ``used_ns``
is refreshed at most daily for the rows a search uses, and rows unused for
:data:`~skilldeck.core.store.PRUNE_AFTER_S` are pruned with the store (:func:`prune`).

Measured on this machine (warm page cache): reading 372 vectors 2-3 ms, 10k vectors
30-40 ms; writing 372 about 10 ms.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.store import PRUNE_EVERY_S, LocalStore

CHUNK = 500
"""Keys per ``IN (...)`` look-up (well under SQLite's bound on parameters)."""
NORM_TOLERANCE = 1e-3

TABLES = (
    # A skill's embedding under one model: ``key`` names the version of the skill's
    # embedded text, ``vector`` is raw float32.
    """CREATE TABLE IF NOT EXISTS skill_vectors (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        vector BLOB NOT NULL,
        used_ns INTEGER NOT NULL,
        PRIMARY KEY (model, key)
    ) WITHOUT ROWID""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


def load(
    store: LocalStore, model: str, keys: Sequence[str], dim: int
) -> dict[str, NDArray[np.float32]]:
    """The stored vectors of ``keys`` under ``model`` (absent or bad rows left out)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, NDArray[np.float32]] = {}
    stale: list[str] = []
    cutoff = time.time_ns() - int(PRUNE_EVERY_S * 1e9)
    try:
        store.ensure(TABLES)
        conn = store.connect()
        for start in range(0, len(wanted), CHUNK):
            part = wanted[start : start + CHUNK]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                "SELECT key, vector, used_ns FROM skill_vectors "
                f"WHERE model = ? AND key IN ({marks})",
                (model, *part),
            )
            for key, blob, used_ns in rows:
                vector = _decode(blob, dim)
                if vector is not None:
                    found[key] = vector
                    if type(used_ns) is not int or used_ns < cutoff:
                        stale.append(key)
    except sqlite3.Error as exc:
        store.notice(f"stored skill vectors could not be read ({exc}); embedding again")
        return found
    if stale:
        _touch(store, model, stale)
    return found


def _decode(blob: object, dim: int) -> NDArray[np.float32] | None:
    if not isinstance(blob, bytes) or len(blob) != dim * 4:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all() or abs(float(vector @ vector) - 1.0) > NORM_TOLERANCE:
        return None
    return vector


def save(store: LocalStore, model: str, vectors: Mapping[str, NDArray[np.float32]]) -> bool:
    """Keep ``vectors`` (key -> unit row) under ``model``; False when the store refuses."""
    now = time.time_ns()
    rows = [(model, key, np.asarray(v, dtype="<f4").tobytes(), now) for key, v in vectors.items()]
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO skill_vectors (model, key, vector, used_ns) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
    except sqlite3.Error:
        return False  # a cache: the vectors are embedded again next time
    return True


def _touch(store: LocalStore, model: str, keys: list[str]) -> None:
    """Mark rows as used now (so pruning keeps them); a busy store is left for next time."""
    now = time.time_ns()
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.executemany(
                "UPDATE skill_vectors SET used_ns = ? WHERE model = ? AND key = ?",
                [(now, model, key) for key in keys],
            )
    except sqlite3.Error:
        return


def prune(store: LocalStore, cutoff_ns: int) -> int:
    """Drop the vectors no search used since ``cutoff_ns``; returns how many."""
    store.ensure(TABLES)
    with store.write() as conn:
        return conn.execute("DELETE FROM skill_vectors WHERE used_ns < ?", (cutoff_ns,)).rowcount
