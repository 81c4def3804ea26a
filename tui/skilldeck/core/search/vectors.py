"""Embeddings kept in the local store (table ``text_vectors``, declared here:
:data:`TABLES`), one row per model id and version of an embedded text (a skill's, an example
request's), so a text is embedded once and a one-shot search embeds only its query.

A row's ``key`` names one version of one skill's embedded text (see
:meth:`~skilldeck.core.search.embedding.EmbeddingSignal.vector_keys`: a digest of the
SKILL.md frontmatter hash and the skill name, which decide that text); ``vector`` is raw
little-endian float32, read back with ``numpy.frombuffer`` and checked (length, finite,
unit norm): a row failing a check is ignored and its skill embedded again. ``used_ns``
is refreshed at most daily for the rows a search uses, and rows unused for
:data:`~skilldeck.core.store.PRUNE_AFTER_S` are pruned with the store (:func:`prune`).

A plain rowid table, not ``WITHOUT ROWID``: a 1,536-byte vector is more than such a
table keeps in a 4 KB page, so each row took an overflow page (10k vectors: 47 MB, 99 ms
of CPU to look up; here 21 MB and 28-40 ms). Rows are checked all at once (10k rows: 85 ms
one by one, 14 ms so, profiled). A one-shot hybrid search at 10k skills reads all of them:
``tests/benchmarks/bench_semantic.py --size 10000``.
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
    # A text's embedding under one model: ``key`` names the version of the embedded text,
    # ``vector`` is raw float32.
    """CREATE TABLE IF NOT EXISTS text_vectors (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        vector BLOB NOT NULL,
        used_ns INTEGER NOT NULL,
        UNIQUE (model, key)
    )""",
    "DROP TABLE IF EXISTS skill_vectors",  # the old layout (one overflow page a row)
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


def load(
    store: LocalStore, model: str, keys: Sequence[str], dim: int
) -> dict[str, NDArray[np.float32]]:
    """The stored vectors of ``keys`` under ``model`` (absent or bad rows left out)."""
    wanted = list(dict.fromkeys(keys))
    rows: list[tuple[str, bytes, object]] = []
    try:
        store.ensure(TABLES)
        conn = store.connect()
        for start in range(0, len(wanted), CHUNK):
            part = wanted[start : start + CHUNK]
            marks = ",".join("?" * len(part))
            rows.extend(
                row
                for row in conn.execute(
                    "SELECT key, vector, used_ns FROM text_vectors "
                    f"WHERE model = ? AND key IN ({marks})",
                    (model, *part),
                )
                if isinstance(row[1], bytes) and len(row[1]) == dim * 4
            )
    except sqlite3.Error as exc:
        store.notice(f"stored skill vectors could not be read ({exc}); embedding again")
    found = _decode(rows, dim)
    cutoff = time.time_ns() - int(PRUNE_EVERY_S * 1e9)
    stale = [k for k, _, used in rows if k in found and (type(used) is not int or used < cutoff)]
    if stale:
        _touch(store, model, stale)
    return found


def _decode(rows: list[tuple[str, bytes, object]], dim: int) -> dict[str, NDArray[np.float32]]:
    """The rows' vectors that are finite and of unit length, by key."""
    matrix = np.frombuffer(b"".join(blob for _, blob, _ in rows), dtype="<f4")
    matrix = matrix.astype(np.float32, copy=False).reshape(len(rows), dim)
    with np.errstate(all="ignore"):  # a bad row may overflow: it is left out
        good = np.isfinite(matrix).all(axis=1)
        good &= np.abs(np.einsum("ij,ij->i", matrix, matrix) - 1.0) <= NORM_TOLERANCE
    return {rows[i][0]: matrix[i] for i in np.flatnonzero(good).tolist()}


def save(store: LocalStore, model: str, vectors: Mapping[str, NDArray[np.float32]]) -> bool:
    """Keep ``vectors`` (key -> unit row) under ``model``; False when the store refuses."""
    now = time.time_ns()
    rows = [(model, key, np.asarray(v, dtype="<f4").tobytes(), now) for key, v in vectors.items()]
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO text_vectors (model, key, vector, used_ns) "
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
                "UPDATE text_vectors SET used_ns = ? WHERE model = ? AND key = ?",
                [(now, model, key) for key in keys],
            )
    except sqlite3.Error:
        return


def prune(store: LocalStore, cutoff_ns: int) -> int:
    """Drop the vectors no search used since ``cutoff_ns``; returns how many."""
    store.ensure(TABLES)
    with store.write() as conn:
        return conn.execute("DELETE FROM text_vectors WHERE used_ns < ?", (cutoff_ns,)).rowcount
