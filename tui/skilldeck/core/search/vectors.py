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

A list of keys read whole (every skill of a catalog; at least :data:`MATRIX_MIN`) is also
kept as one matrix (table ``text_matrices``), named by a digest of the model and the keys
in order: since a key names one version of one text, a matrix can only be of the rows it
names, and a changed skill names another matrix. It is checked like the rows (all or
none) and is read instead of them: 10k rows took 65 ms to read and check (profiled), the
matrix 10-27 ms; a one-shot hybrid search CPU p50 0.531 -> 0.484 s, wall 0.529 -> 0.472 s
(25 runs each, alternated, load 1.5-2.3). Writing it costs ~70 ms, once per catalog
state (the first search that finds every row). At most :data:`MATRICES_KEPT` per model
are kept.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.store import PRUNE_EVERY_S, LocalStore

CHUNK = 500
MATRIX_MIN = 256
"""Fewest keys read whole that are kept as one matrix too."""
MATRICES_KEPT = 4
"""Matrices kept per model (the most recently used): a catalog's scopes and recent states."""
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
    # The rows of a list of keys (``digest``: :func:`_digest`) as one raw float32 matrix.
    """CREATE TABLE IF NOT EXISTS text_matrices (
        model TEXT NOT NULL,
        digest TEXT NOT NULL,
        matrix BLOB NOT NULL,
        used_ns INTEGER NOT NULL,
        UNIQUE (model, digest)
    )""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


def load(
    store: LocalStore, model: str, keys: Sequence[str], dim: int
) -> dict[str, NDArray[np.float32]]:
    """The stored vectors of ``keys`` under ``model`` (absent or bad rows left out)."""
    wanted = list(dict.fromkeys(keys))
    digest = _digest(model, wanted) if len(wanted) >= MATRIX_MIN else None
    if digest is not None:
        whole = _load_matrix(store, model, digest, wanted, dim)
        if whole is not None:
            return whole
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
    if digest is not None and len(found) == len(wanted):
        _save_matrix(store, model, digest, np.stack([found[k] for k in wanted]))
    return found


def _digest(model: str, keys: list[str]) -> str:
    return hashlib.sha256("\0".join([model, *keys]).encode()).hexdigest()[:32]


def _load_matrix(
    store: LocalStore, model: str, digest: str, keys: list[str], dim: int
) -> dict[str, NDArray[np.float32]] | None:
    """The rows of ``keys`` from their matrix, when it is stored and every row checks."""
    try:
        store.ensure(TABLES)
        row = (
            store.connect()
            .execute(
                "SELECT matrix, used_ns FROM text_matrices WHERE model = ? AND digest = ?",
                (model, digest),
            )
            .fetchone()
        )
    except sqlite3.Error:
        return None
    if row is None or not isinstance(row[0], bytes) or len(row[0]) != len(keys) * dim * 4:
        return None
    matrix = np.frombuffer(row[0], dtype="<f4").astype(np.float32, copy=False)
    matrix = matrix.reshape(len(keys), dim)
    if not _good(matrix).all():
        return None
    found = dict(zip(keys, matrix, strict=True))
    if type(row[1]) is not int or row[1] < time.time_ns() - int(PRUNE_EVERY_S * 1e9):
        _touch(store, model, keys, digest)
    return found


def _save_matrix(store: LocalStore, model: str, digest: str, matrix: NDArray[np.float32]) -> None:
    """Keep ``matrix`` as the rows of ``digest``, and only the most recently used
    :data:`MATRICES_KEPT` of ``model``; a busy store is left for next time."""
    try:
        with store.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO text_matrices (model, digest, matrix, used_ns) "
                "VALUES (?, ?, ?, ?)",
                (model, digest, np.asarray(matrix, dtype="<f4").tobytes(), time.time_ns()),
            )
            conn.execute(
                "DELETE FROM text_matrices WHERE model = ? AND digest NOT IN (SELECT digest "
                "FROM text_matrices WHERE model = ? ORDER BY used_ns DESC LIMIT ?)",
                (model, model, MATRICES_KEPT),
            )
    except sqlite3.Error:
        return


def _decode(rows: list[tuple[str, bytes, object]], dim: int) -> dict[str, NDArray[np.float32]]:
    """The rows' vectors that are finite and of unit length, by key."""
    matrix = np.frombuffer(b"".join(blob for _, blob, _ in rows), dtype="<f4")
    matrix = matrix.astype(np.float32, copy=False).reshape(len(rows), dim)
    good = _good(matrix)
    return {rows[i][0]: matrix[i] for i in np.flatnonzero(good).tolist()}


def _good(matrix: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Per row: finite and of unit length."""
    with np.errstate(all="ignore"):  # a bad row may overflow: it is left out
        finite = np.isfinite(matrix).all(axis=1)
        unit = np.abs(np.einsum("ij,ij->i", matrix, matrix) - 1.0) <= NORM_TOLERANCE
    return np.asarray(finite & unit, dtype=np.bool_)


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


def _touch(store: LocalStore, model: str, keys: list[str], digest: str | None = None) -> None:
    """Mark rows (and the matrix ``digest``) as used now, so pruning keeps them; a busy
    store is left for next time."""
    now = time.time_ns()
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.executemany(
                "UPDATE text_vectors SET used_ns = ? WHERE model = ? AND key = ?",
                [(now, model, key) for key in keys],
            )
            if digest is not None:
                conn.execute(
                    "UPDATE text_matrices SET used_ns = ? WHERE model = ? AND digest = ?",
                    (now, model, digest),
                )
    except sqlite3.Error:
        return


def prune(store: LocalStore, cutoff_ns: int) -> int:
    """Drop the vectors (and matrices) no search used since ``cutoff_ns``; returns how
    many rows."""
    store.ensure(TABLES)
    with store.write() as conn:
        conn.execute("DELETE FROM text_matrices WHERE used_ns < ?", (cutoff_ns,))
        return conn.execute("DELETE FROM text_vectors WHERE used_ns < ?", (cutoff_ns,)).rowcount
