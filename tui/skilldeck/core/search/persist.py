"""The search index kept in the local store, so a one-shot search never rebuilds it.

:func:`load_or_build` returns an index over exactly the skills it is given:

* the store holds an index for the key whose documents are these skills (same SKILL.md
  paths, same content hashes, sizes and modification times: :func:`stamp`): its arrays
  are read back and only the tables made from skill metadata (names, triggers,
  priorities) are rebuilt; no body is read;
* some skills appeared, changed or vanished: only those are analysed (their bodies read),
  the postings are rebuilt once from the saved ones, and the result is saved;
* there is none, too much changed (more than a quarter of the skills, counting earlier
  updates since the last full build) or anything saved does not decode: a full build,
  saved.

What is saved (tables ``index_meta`` and ``index_blobs``, declared here: :data:`TABLES`):
a JSON ``meta`` (format, a fingerprint of the text analysis, field weights, sizes, a CRC-32
of every blob) and raw little-endian arrays read back with ``numpy.frombuffer`` and a dtype
from the fixed table :data:`ARRAYS` (never ``np.load``, never pickle), plus word and path
lists as NUL-separated text. Every length is checked against ``meta``, every blob against
its CRC, and the arrays against each other (ids in range, postings sorted, counts adding
up) before use; a failing check is reported with :meth:`LocalStore.notice` and the index is
rebuilt. Saving is one write transaction and loading reads in one snapshot, so the TUI,
MCP servers and the CLI can share the store (the last writer wins).

The second BM25 weighting that embeddings use is one more blob, read only by a search
that uses it (:mod:`.saved_weighting`); a random ``save`` id in ``meta`` names each save.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.config import Settings
from skilldeck.core.model import Skill
from skilldeck.core.search import bm25
from skilldeck.core.search.analysis import FIELDS, SurfaceWords, body_bytes_for
from skilldeck.core.search.columns import decode_columns, encode_columns
from skilldeck.core.search.index import FIELD_WEIGHTS, SearchIndex
from skilldeck.core.search.postings import FieldPostings
from skilldeck.core.search.saved_weighting import ALT, attach
from skilldeck.core.store import LocalStore

FORMAT = 3
"""Layout of the saved index; a saved index of another format is rebuilt."""

ARRAYS: dict[str, str] = {
    "docs": "<i4",
    "masks": "|u1",
    "contrib": "<f4",
    "indptr": "<i8",
    "df": "<i4",
    "doc_len": "<i4",
    "surface_counts": "<i4",
    "priority": "<i8",
    **{f"tf{f}": "|u1" for f in range(len(FIELDS))},
}
"""Every array blob and its dtype: the only dtypes ever read back."""
TEXTS = ("vocab", "surface_words", "paths", "stamps")
"""Blobs holding NUL-separated text."""
COLUMNS = "columns"
"""The JSON blob of per-document metadata a search reads: names, required tools and
triggers (see :func:`load_saved`)."""
REBUILD_SHARE = 0.25
"""Share of changed skills (since the last full build) above which the index is rebuilt."""
REBUILD_MIN = 8

TABLES = (
    # A persisted search index, one per workspace ``key`` (its roots and profile):
    # ``meta`` is JSON (format, analysis fingerprint, field weights, sizes, a CRC-32 per
    # blob).
    """CREATE TABLE IF NOT EXISTS index_meta (
        key TEXT PRIMARY KEY,
        meta TEXT NOT NULL,
        updated_ns INTEGER NOT NULL
    )""",
    # The index's arrays as raw little-endian bytes (read back with numpy.frombuffer and a
    # dtype from a fixed list, never unpickled) and its word and path lists (NUL-separated
    # text). No per-skill rows: an update re-reads only the changed skills' bodies and
    # rebuilds the postings from these arrays.
    """CREATE TABLE IF NOT EXISTS index_blobs (
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (key, name)
    )""",
)
"""The store tables this module owns (see :meth:`LocalStore.ensure`)."""


class Undecodable(ValueError):
    """A saved index that cannot be used (the message says why)."""


@dataclass(slots=True)
class Saved:
    """A decoded, checked saved index (before it is matched against the skills)."""

    meta: dict[str, Any]
    index: SearchIndex
    paths: bytes
    stamps: bytes
    columns: bytes
    priority: NDArray[np.int64]
    meta_text: str


def stamp(skill: Skill) -> str:
    """What tells one version of an indexed skill from another: its SKILL.md's content
    hash (which may cover only the frontmatter), size and modification time, and a CRC of
    its tags (the registry adds tags without touching the file)."""
    tags = zlib.crc32("\0".join(skill.tags).encode("utf-8", "replace"))
    return f"{skill.content_hash}:{skill.size}:{skill.mtime_ns}:{tags:x}"


def analysis_fingerprint() -> str:
    """Hash of what decides the saved terms: this format, the BM25 constants, the fields
    and the source of the text analysis (an edited tokeniser invalidates saved indexes)."""
    digest = hashlib.sha256(f"{FORMAT}|{FIELDS}|{bm25.K1}|{bm25.B}|{bm25.MAX_TF}".encode())
    here = Path(__file__).parent
    for name in ("text.py", "analysis.py"):
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------- load or build


def load_or_build(
    skills: Sequence[Skill],
    store: LocalStore | None,
    key: str,
    settings: Settings | None = None,
    *,
    semantic: bool | None = None,
    fingerprint: str | None = None,
) -> SearchIndex:
    """An index over exactly ``skills`` (in this order), from ``store`` when it can be.

    Args:
        skills: The documents (the workspace passes every skill, shadowed ones included);
            results reference these very objects.
        store: The local store, or None to just build.
        key: Which saved index (a workspace's roots and profile).
        settings: Settings (confidence threshold, semantic on/off).
        semantic: Force the embedding signal on or off (default: ``settings.semantic``).
        fingerprint: The :func:`~skilldeck.core.discovery.fingerprint` of the catalog
            ``skills`` come from, kept with the saved index for :func:`load_saved` (None:
            not known, the saved index then answers only through this function).
    """
    settings = settings or Settings()
    paths = [str(s.path) for s in skills]
    if store is None or len(set(paths)) != len(paths):
        return SearchIndex.build(skills, settings=settings, semantic=semantic)
    saved = _load(store, key, settings)
    index, changed = _reuse(saved, skills, paths) if saved is not None else (None, True)
    if index is None:
        index = SearchIndex.build(skills, settings=settings, semantic=False)
    index.vector_store = store  # skill vectors are kept beside the index (see .vectors)
    if changed:
        save(index, store, key, fingerprint)
    elif saved is not None:
        attach(index, store, key, saved.meta)
        if saved.meta.get("fingerprint") != fingerprint:
            _refingerprint(store, key, saved, fingerprint)
    if (settings.semantic if semantic is None else semantic) and skills:
        index.enable_semantic()
    return index


def _reuse(
    saved: Saved, skills: Sequence[Skill], paths: list[str]
) -> tuple[SearchIndex | None, bool]:
    """The saved index brought up to ``skills`` (None when a full build is better), and
    whether it differs from the saved one."""
    index, meta = saved.index, saved.meta
    n = len(skills)
    if not _body_size_fits(index.body_bytes, n):
        return None, True
    stamps = [stamp(s) for s in skills]
    hashed = all(s.content_hash for s in skills)
    if hashed and saved.paths == _text(paths) and saved.stamps == _text(stamps):
        index.attach(skills)  # the common case: nothing changed (two comparisons)
        return index, False
    old_paths = _split(saved.paths, len(saved.index.postings.doc_len[0]), "paths")
    old_stamps = _split(saved.stamps, len(old_paths), "stamps")
    old_of = {p: i for i, p in enumerate(old_paths)}
    remap = np.full(len(old_paths), -1, dtype=np.int32)
    fresh: list[int] = []
    for doc, (skill, path) in enumerate(zip(skills, paths, strict=True)):
        old = old_of.get(path)
        if old is None or not skill.content_hash or old_stamps[old] != stamps[doc]:
            fresh.append(doc)
        else:
            remap[old] = doc
    gone = len(old_of.keys() - set(paths))
    drift = int(meta["drift"]) + len(fresh) + gone
    if (fresh or gone) and drift > max(REBUILD_MIN, REBUILD_SHARE * n):
        return None, True
    index.reindex(skills, remap, fresh)
    index.drift = drift
    return index, True


def _body_size_fits(saved: int, count: int) -> bool:
    """Bodies cut at ``saved`` bytes still suit ``count`` skills (within 20%)."""
    wanted = body_bytes_for(count)
    return 0.8 * wanted <= saved <= 1.25 * wanted


def load_saved(
    store: LocalStore,
    key: str,
    fingerprint: str,
    settings: Settings,
    documents: Callable[[list[str]], Sequence[Skill]],
) -> SearchIndex | None:
    """The saved index of ``key`` when it was made from the catalog ``fingerprint``,
    answering without the catalog: None when there is none, it is of another catalog or
    it does not decode (the caller then takes the full path, which rebuilds and reports).

    Names, paths, required tools, priorities and triggers come from the saved columns;
    ``documents(paths)`` gives the skill objects, which a search touches only for the
    results it returns (so a sequence loading each on first access keeps a one-shot
    search from materialising the catalog).

    Measured on the 10k synthetic catalog (/tmp/c10k, warm page cache): reading the blobs
    27-41 ms, decoding and checking them 25-29 ms, paths and columns 2 ms; the full path
    spent ~330 ms building the catalog's 10k skills before its index load.
    """
    try:
        found = _read(store, key)
        if found is None or _meta(found[0]).get("fingerprint") != fingerprint:
            return None
        saved = _decode(found[0], found[1], settings)
        n = saved.meta["n_docs"]
        paths = _split(saved.paths, n, "paths")
        names, needs, triggers = decode_columns(saved.columns, n)
        hashes = [s.split(":", 1)[0] for s in _split(saved.stamps, n, "stamps")]
    except (sqlite3.Error, ValueError, TypeError, KeyError, IndexError, OverflowError):
        return None
    index = saved.index
    index.attach_columns(documents(paths), names, paths, needs, saved.priority, triggers)
    attach(index, store, key, saved.meta)
    # the embedding signal finds stored vectors by frontmatter hash: no skill is loaded
    index.vector_store, index.doc_hashes = store, hashes
    return index


# ---------------------------------------------------------------------- saving


def save(index: SearchIndex, store: LocalStore, key: str, fingerprint: str | None = None) -> bool:
    """Write ``index`` under ``key`` in one transaction; False when the store refuses.

    ``fingerprint`` names the catalog the index was made from (see :func:`load_saved`).
    """
    blobs = _encode(index)
    postings = index.postings
    alt: dict[str, Any] | None = None
    if postings.alt_contrib is not None and postings.alt_weights is not None:
        blobs[ALT] = _raw(postings.alt_contrib, "<f4")
        alt = {"weights": postings.alt_weights.tolist(), "crc": zlib.crc32(blobs[ALT])}
    meta = {
        "format": FORMAT,
        "save": secrets.token_hex(8),
        "fingerprint": fingerprint,
        "analysis": analysis_fingerprint(),
        "weights": [float(w) for w in postings.weights],
        "bodies": bool(index.bodies),
        "body_bytes": int(index.body_bytes),
        "n_docs": len(index.skills),
        "vocab_size": int(postings.vocab_size),
        "n_pairs": len(postings.docs),
        "n_surface": len(index.surface_df.words),
        "tf_len": [len(t) for t in postings.tfs],
        "drift": int(index.drift),
        "crc": {name: zlib.crc32(data) for name, data in blobs.items() if name != ALT},
        "alt": alt,
    }
    rows = [(key, name, data) for name, data in blobs.items()]
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.execute("DELETE FROM index_blobs WHERE key = ?", (key,))
            conn.executemany("INSERT INTO index_blobs (key, name, data) VALUES (?, ?, ?)", rows)
            conn.execute(
                "INSERT OR REPLACE INTO index_meta (key, meta, updated_ns) VALUES (?, ?, ?)",
                (key, json.dumps(meta), time.time_ns()),
            )
    except sqlite3.Error:
        return False
    attach(index, store, key, meta)
    store.prune_if_due()
    return True


def _refingerprint(store: LocalStore, key: str, saved: Saved, fingerprint: str | None) -> None:
    """Mark the saved index of ``key`` as made from the catalog ``fingerprint`` (its
    documents did not change); a no-op when another process saved since."""
    meta = dict(saved.meta, fingerprint=fingerprint)
    try:
        store.ensure(TABLES)
        with store.write() as conn:
            conn.execute(
                "UPDATE index_meta SET meta = ? WHERE key = ? AND meta = ?",
                (json.dumps(meta), key, saved.meta_text),
            )
    except sqlite3.Error:
        pass


def prune(store: LocalStore, cutoff_ns: int) -> int:
    """Drop the saved indexes not updated since ``cutoff_ns``; returns how many."""
    store.ensure(TABLES)
    query = "SELECT key FROM index_meta WHERE updated_ns < ?"
    stale = [(k,) for (k,) in store.connect().execute(query, (cutoff_ns,))]
    if stale:
        with store.write() as tx:
            tx.executemany("DELETE FROM index_blobs WHERE key = ?", stale)
            tx.executemany("DELETE FROM index_meta WHERE key = ?", stale)
    return len(stale)


def _encode(index: SearchIndex) -> dict[str, bytes | memoryview]:
    p = index.postings
    arrays: dict[str, NDArray[Any]] = {
        "docs": p.docs,
        "masks": p.masks,
        "contrib": p.contrib,
        "indptr": p.indptr,
        "df": p.df,
        "doc_len": p.doc_len,
        "surface_counts": index.surface_df.counts,
        "priority": index.priority,
        **{f"tf{f}": p.tfs[f] for f in range(len(FIELDS))},
    }
    out: dict[str, bytes | memoryview] = {name: _raw(a, ARRAYS[name]) for name, a in arrays.items()}
    out["vocab"] = _text(list(index.vocab))
    out["surface_words"] = _text(index.surface_df.words)
    out["paths"] = _text([str(s.path) for s in index.skills])
    out["stamps"] = _text([stamp(s) for s in index.skills])
    out[COLUMNS] = encode_columns(index.skills, index.names, index.needs)
    return out


# ---------------------------------------------------------------------- loading


def _load(store: LocalStore, key: str, settings: Settings) -> Saved | None:
    """The saved index for ``key``, decoded and checked; None when there is none or it
    does not decode (then a notice says why)."""
    try:
        found = _read(store, key)
    except sqlite3.Error as exc:
        store.notice(f"search index could not be read ({exc}); rebuilding it")
        return None
    if found is None:
        return None
    try:
        return _decode(found[0], found[1], settings)
    except (Undecodable, ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        if not isinstance(exc, Undecodable) or not exc.args[0].startswith("stale:"):
            store.notice(f"saved search index for {key!r} was rebuilt: {exc}")
        return None


def _read(store: LocalStore, key: str) -> tuple[object, dict[str, object]] | None:
    """``meta`` and blobs of ``key`` from one snapshot (a concurrent save is all or none)."""
    store.ensure(TABLES)
    conn = store.connect()
    conn.execute("BEGIN")
    try:
        row = conn.execute("SELECT meta FROM index_meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        cur = conn.execute(  # the second weighting is read only if used (.saved_weighting)
            "SELECT name, data FROM index_blobs WHERE key = ? AND name != ?", (key, ALT)
        )
        blobs = {name: data for name, data in cur}
    finally:
        conn.execute("COMMIT")
    return row[0], blobs


def _decode(meta_text: object, blobs: Mapping[str, object], settings: Settings) -> Saved:
    meta = _meta(meta_text)
    names = set(ARRAYS) | set(TEXTS) | {COLUMNS}
    if set(blobs) != names:
        raise Undecodable("its blobs are not the expected ones")
    crc: dict[str, Any] = meta["crc"]
    data: dict[str, bytes] = {}
    for name in names:
        blob = blobs[name]
        if not isinstance(blob, bytes) or zlib.crc32(blob) != crc.get(name):
            raise Undecodable(f"blob {name} is damaged")
        data[name] = blob
    arrays = _arrays(meta, data)
    vocab_words = _split(data["vocab"], meta["vocab_size"], "vocab")
    vocab = dict(zip(vocab_words, range(len(vocab_words)), strict=True))
    if len(vocab) != meta["vocab_size"]:
        raise Undecodable("vocabulary repeats a word")
    surface = _split(data["surface_words"], meta["n_surface"], "surface words")
    if surface != sorted(surface):  # timsort on sorted input: 1 ms at 30k words, a loop 4
        raise Undecodable("surface words are not sorted")
    index = SearchIndex(settings)
    index.bodies = meta["bodies"]
    index.body_bytes = meta["body_bytes"]
    index.drift = meta["drift"]
    index.vocab = vocab
    tfs = [arrays.pop(f"tf{f}") for f in range(len(FIELDS))]
    counts = arrays.pop("surface_counts").astype(np.int32)  # a writable copy: it grows
    priority = arrays.pop("priority").astype(np.int64)
    index.surface_df = SurfaceWords.from_sorted(surface, counts)
    index.postings = FieldPostings.from_arrays(
        arrays, tfs, meta["vocab_size"], index._weight_vector()
    )
    for name in ("paths", "stamps"):
        parts = data[name].count(b"\0") + 1 if data[name] or meta["n_docs"] else 0
        if parts != meta["n_docs"]:
            raise Undecodable(f"{name}: expected {meta['n_docs']} entries, found {parts}")
    text = str(meta_text)
    return Saved(meta, index, data["paths"], data["stamps"], data[COLUMNS], priority, text)


def _meta(text: object) -> dict[str, Any]:
    """``meta`` parsed and type-checked, or :class:`Undecodable`."""
    if not isinstance(text, str):
        raise Undecodable("meta is not text")
    meta = json.loads(text)
    if not isinstance(meta, dict):
        raise Undecodable("meta is not an object")
    if meta.get("format") != FORMAT:
        raise Undecodable(f"stale: format {meta.get('format')!r}")
    if meta.get("analysis") != analysis_fingerprint():
        raise Undecodable("stale: the text analysis changed")
    expected = [float(FIELD_WEIGHTS[f]) for f in FIELDS]
    if meta.get("weights") != expected:
        raise Undecodable("stale: other field weights")
    for name in ("body_bytes", "n_docs", "vocab_size", "n_pairs", "n_surface", "drift"):
        value = meta.get(name)
        if type(value) is not int or not 0 <= value < 1 << 40:
            raise Undecodable(f"meta {name} is not a count")
    if meta.get("bodies") is not True:
        raise Undecodable("stale: a metadata-only index")
    if meta.get("fingerprint") is not None and not isinstance(meta["fingerprint"], str):
        raise Undecodable("meta fingerprint is not text")
    tf_len = meta.get("tf_len")
    if not isinstance(tf_len, list) or len(tf_len) != len(FIELDS):
        raise Undecodable("meta tf_len is malformed")
    if any(type(v) is not int or not 0 <= v <= meta["n_pairs"] for v in tf_len):
        raise Undecodable("meta tf_len is out of range")
    crc = meta.get("crc")
    if not isinstance(crc, dict) or not all(type(v) is int for v in crc.values()):
        raise Undecodable("meta crc is malformed")
    return meta


def _arrays(meta: Mapping[str, Any], data: Mapping[str, bytes]) -> dict[str, NDArray[Any]]:
    """The array blobs as arrays of their fixed dtypes and the shapes ``meta`` implies,
    checked against each other (every id in range, postings sorted, counts adding up)."""
    n, vocab, pairs = meta["n_docs"], meta["vocab_size"], meta["n_pairs"]
    nf = len(FIELDS)
    shapes: dict[str, tuple[int, ...]] = {
        "docs": (pairs,),
        "masks": (pairs,),
        "contrib": (pairs,),
        "indptr": (vocab + 1,),
        "df": (nf, vocab),
        "doc_len": (nf, n),
        "surface_counts": (meta["n_surface"],),
        "priority": (n,),
        **{f"tf{f}": (meta["tf_len"][f],) for f in range(nf)},
    }
    out: dict[str, NDArray[Any]] = {}
    for name, shape in shapes.items():
        dtype = np.dtype(ARRAYS[name])
        blob = data[name]
        if len(blob) != int(np.prod(shape)) * dtype.itemsize:
            raise Undecodable(f"blob {name} has the wrong size")
        out[name] = np.frombuffer(blob, dtype=dtype).reshape(shape)
    _check(out, n, nf, meta["tf_len"])
    return out


def _check(a: Mapping[str, NDArray[Any]], n: int, nf: int, tf_len: list[int]) -> None:
    """Raise :class:`Undecodable` unless the arrays describe a well-formed index."""
    docs, masks, indptr = a["docs"], a["masks"], a["indptr"]
    if indptr[0] != 0 or indptr[-1] != len(docs) or np.any(np.diff(indptr) < 0):
        raise Undecodable("postings offsets are inconsistent")
    if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= n):
        raise Undecodable("a posting names a document out of range")
    rising = docs[1:] > docs[:-1]
    starts = indptr[1:-1]
    rising[starts[(starts > 0) & (starts < len(docs))] - 1] = True
    if not rising.all():
        raise Undecodable("postings are not sorted")
    if len(masks) and (int(masks.min()) < 1 or int(masks.max()) >= 1 << nf):
        raise Undecodable("field masks are out of range")
    df = a["df"]
    for f in range(nf):
        held = int(np.count_nonzero(masks & np.uint8(1 << f)))
        if held != tf_len[f] or int(df[f].sum()) != held or (len(df[f]) and df[f].min() < 0):
            raise Undecodable("document frequencies do not add up")
        if tf_len[f] and int(a[f"tf{f}"].min()) < 1:
            raise Undecodable("a term frequency is zero")
    if (a["doc_len"].size and int(a["doc_len"].min()) < 0) or (
        a["surface_counts"].size and int(a["surface_counts"].min()) < 0
    ):
        raise Undecodable("a count is negative")
    if not np.isfinite(a["contrib"]).all():
        raise Undecodable("a score is not finite")


def _raw(array: NDArray[Any], dtype: str) -> memoryview:
    """``array``'s bytes as ``dtype``, flat (no copy when it already is)."""
    return np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8).data


def _split(blob: bytes, count: int, what: str) -> list[str]:
    text = blob.decode("utf-8", "surrogateescape")
    parts = text.split("\0") if count else ([text] if text else [])
    if len(parts) != count:
        raise Undecodable(f"{what}: expected {count} entries, found {len(parts)}")
    return parts


def _text(parts: list[str]) -> bytes:
    """NUL-separated UTF-8 (undecodable file names kept through ``surrogateescape``)."""
    return "\0".join(parts).encode("utf-8", "surrogateescape")
