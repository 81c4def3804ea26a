"""The second BM25 weighting of a saved search index (``alt_contrib``: the field weights
the hybrid mode uses, see :class:`~skilldeck.core.search.postings.FieldPostings`), kept in
the saved index's tables (:mod:`.persist`) so a one-shot hybrid search reads it back
instead of computing it.

It is written with the index, or beside it the first time it is computed, as the blob
:data:`ALT` with its weights and CRC in the index's ``meta``; :mod:`.persist` never reads it
with the index. A random ``save`` id in ``meta`` (for an index saved before there were ids,
the CRCs of all its blobs: :func:`save_of`) ties it to the one save of the postings it was
computed from: kept only while that save is the stored one, read only for exactly the
weights asked for, with its CRC, length and finiteness checked; anything else and the
postings compute it.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.store import LocalStore

if TYPE_CHECKING:
    from skilldeck.core.search.index import SearchIndex

ALT = "alt_contrib"
"""The blob of the second field weighting."""


@dataclass(frozen=True, slots=True)
class SavedAlt:
    """The second field weighting of one saved index (``key``, saved as ``save``): read
    back when its weights are the ones asked for, else computed by the postings and kept
    here (:class:`~skilldeck.core.search.postings.SavedWeighting`). A saved index of
    another save, a blob failing its CRC, length or finiteness: not used."""

    store: LocalStore
    key: str
    save: str
    pairs: int

    def load(self, weights: NDArray[np.float64]) -> NDArray[np.float32] | None:
        """The kept weighting for exactly ``weights``, or None."""
        try:
            conn = self.store.connect()
            conn.execute("BEGIN")
            try:
                meta = self._meta(conn)
                alt = meta.get("alt") if meta is not None else None
                if not isinstance(alt, dict) or alt.get("weights") != weights.tolist():
                    return None
                query = "SELECT data FROM index_blobs WHERE key = ? AND name = ?"
                row = conn.execute(query, (self.key, ALT)).fetchone()
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error:
            return None
        blob = row[0] if row is not None else None
        if not isinstance(blob, bytes) or len(blob) != 4 * self.pairs:
            return None
        if zlib.crc32(blob) != alt.get("crc"):
            return None
        contrib = np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)
        return contrib if bool(np.isfinite(contrib).all()) else None

    def keep(self, weights: NDArray[np.float64], contrib: NDArray[np.float32]) -> None:
        """Keep ``contrib`` (for ``weights``) with the saved index, unless another save
        replaced it since; a busy store is left alone."""
        blob = np.asarray(contrib, dtype="<f4").tobytes()
        alt = {"weights": weights.tolist(), "crc": zlib.crc32(blob)}
        try:
            with self.store.write() as conn:
                meta = self._meta(conn)
                if meta is None or len(contrib) != self.pairs:
                    return
                conn.execute(
                    "INSERT OR REPLACE INTO index_blobs (key, name, data) VALUES (?, ?, ?)",
                    (self.key, ALT, blob),
                )
                conn.execute(
                    "UPDATE index_meta SET meta = ? WHERE key = ?",
                    (json.dumps(dict(meta, alt=alt)), self.key),
                )
        except sqlite3.Error:
            return

    def _meta(self, conn: sqlite3.Connection) -> dict[str, Any] | None:
        """The saved index's ``meta`` when it is still the one of :attr:`save`."""
        row = conn.execute("SELECT meta FROM index_meta WHERE key = ?", (self.key,)).fetchone()
        try:
            meta = json.loads(row[0]) if row is not None else None
        except (TypeError, ValueError):
            return None
        if not isinstance(meta, dict) or save_of(meta) != self.save:
            return None
        return meta


def save_of(meta: Mapping[str, Any]) -> str | None:
    """What names one save of an index: its ``save`` id, or for an index saved before
    there were ids, the CRCs of all its blobs."""
    save = meta.get("save")
    if isinstance(save, str):
        return save
    crc = meta.get("crc")
    return f"crc:{json.dumps(crc, sort_keys=True)}" if isinstance(crc, dict) else None


def attach(index: SearchIndex, store: LocalStore, key: str, meta: Mapping[str, Any]) -> None:
    """Let ``index``'s postings, saved under ``key`` with ``meta``, keep their second
    weighting there."""
    save_id = save_of(meta)
    if save_id is not None:
        pairs = len(index.postings.docs)
        index.postings.saved_weighting = SavedAlt(store, key, save_id, pairs)
