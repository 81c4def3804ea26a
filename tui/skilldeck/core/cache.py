"""Persistent metadata cache: parsed frontmatter per SKILL.md, so a warm start parses nothing.

One file per discovery root under ``cache_dir()/discovery/``. Entries are keyed by the real
path of the SKILL.md and hold the path it was found at, ``(mtime_ns, size)``, the frontmatter
hash and every parsed field plus the parse diagnostics, as plain tuples. An entry is used only
when the path, ``mtime_ns`` and ``size`` all match the file on disk and the file was not
modified within :data:`RACY_NS` of being read; otherwise discovery compares the frontmatter
hash (a touched or body-only edit reuses the entry) or parses again. The file also keeps
the last validation result per entry (tagged with the validator code and profile) and the
resource listing of each skill folder, tagged with the mtime of the folder and of every
subfolder the listing walked (adding or removing a file anywhere in it changes one of them),
so a warm start stats the SKILL.md, its folder and its resource subfolders and reads nothing.
It also keeps the scan's folder tree (``tree``: each listed folder's device, inode, mtime and
child folders) so unchanged folders are not listed again.

The file is ``MAGIC + version + head length + CRC-32 of the head + CRC-32 of the rest``,
then pickles of plain data: a head (root, code fingerprint, validator, tree, segment count),
then segments, each a mapping of the three tables (:data:`Segment`; parallel loading
pickles one per chunk in the worker processes, so saving only writes those bytes). The head
is checked before discovery uses its tree; the segments are unpickled as they are read
(the file is never held whole) and trusted only once the rest's checksum matches. It is
written to a temp file then ``os.replace``-d (concurrent writers: the last one wins, readers
never see a torn file). A file with the wrong magic, version or checksum, or that fails to
unpickle, or whose shape is wrong, is discarded and rebuilt; unpickling only accepts builtin
data and ``datetime`` types (YAML timestamps), so a foreign file cannot run code.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from skilldeck.core.config import cache_dir
from skilldeck.core.model import (
    Diagnostic,
    PackedSkill,
    SafeUnpickler,
    Severity,
    Skill,
    Source,
    block_size,
    detail_row,
    pack_block,
    unpack_block,
)

MAGIC = b"SKDCACHE"
VERSION = 9
RACY_NS = 2_000_000_000
"""Files modified this close to when they were read are re-checked by hash."""
_RECORD_LEN = 12
R_PATH, R_MTIME, R_SIZE, R_HASH, R_DIAGS, R_CHECKED, R_BLOCK, R_ITEM = 0, 1, 2, 3, 8, 9, 10, 11
"""Positions in a :data:`Record`."""
BLOCK_ROWS = 256
"""At most this many skills' details share one block when saving (worker chunks are
smaller)."""
_HEADER = MAGIC + VERSION.to_bytes(2, "big")
_DIGEST = 4
_PREFIX = len(_HEADER) + 8 + 2 * _DIGEST
"""Header, head length, the head's checksum, the rest's checksum."""

Record = tuple[Any, ...]
"""One cache entry: see :func:`skill_to_record`."""


def _checksum(payload: bytes | memoryview, start: int = 0) -> int:
    """CRC-32 of the payload: catches torn and damaged files (trust comes from unpickling
    builtin data only); four times faster than the BLAKE2b it once was (2.4 vs 10.8 ms on
    6.6 MB), and it can be computed as the file is read."""
    return zlib.crc32(payload, start)


def compose(head: bytes, rest: list[bytes]) -> bytes:
    """The header of a cache file holding the pickles ``head`` then ``rest``."""
    crc = 0
    for piece in rest:
        crc = _checksum(piece, crc)
    return b"".join(
        [
            _HEADER,
            len(head).to_bytes(8, "big"),
            _checksum(head).to_bytes(_DIGEST, "big"),
            crc.to_bytes(_DIGEST, "big"),
        ]
    )


class _CheckedReader:
    """What the unpickler reads the segments from: the file, checksummed as it is read."""

    __slots__ = ("crc", "handle")

    def __init__(self, handle: io.RawIOBase) -> None:
        self.handle = handle
        self.crc = 0

    def read(self, size: int = -1) -> bytes:
        """Read and checksum up to ``size`` bytes (all that is left when negative)."""
        data = self.handle.read(size) if size >= 0 else self.handle.readall()
        if data is None:  # a non-blocking file: never a cache file
            raise OSError("no data")
        self.crc = _checksum(data, self.crc)
        return data

    def readline(self) -> bytes:
        """Read and checksum a line (text pickle opcodes)."""
        data = self.handle.readline()
        self.crc = _checksum(data, self.crc)
        return data


_SEVERITIES = {s.value: s for s in Severity}
_FINGERPRINT: list[str] = []


def code_fingerprint() -> str:
    """Identifies the parser code: entries written by another version are not trusted."""
    if not _FINGERPRINT:
        parts = [str(VERSION)]
        for name in ("parse.py", "model.py", "cache.py", "discovery.py"):
            try:
                st = os.stat(Path(__file__).with_name(name))
                parts.append(f"{st.st_mtime_ns}:{st.st_size}")
            except OSError:
                parts.append("?")
        _FINGERPRINT.append("/".join(parts))
    return _FINGERPRINT[0]


DiagRow = tuple[str, str, str, "str | None", "int | None", "int | None"]
Stamps = tuple[tuple[str, int], ...]
"""``(subfolder relative to the skill folder, mtime_ns)`` of the folders a listing walked."""
ResourceRow = tuple[int, Stamps, tuple[str, ...], bool]
"""``(skill folder mtime_ns, subfolder stamps, listing, truncated)``."""
Segment = dict[str, dict[Any, Any]]
"""Part of a cache file: ``entries``, ``validated`` and ``resources`` tables keyed by real
path (other keys are ignored when loading)."""


def pack_segment(segment: Segment) -> bytes:
    """``segment`` pickled, as :meth:`MetadataCache.add_segment` writes it."""
    return pickle.dumps(segment, protocol=pickle.HIGHEST_PROTOCOL)


def diagnostics_to_rows(diagnostics: list[Diagnostic]) -> tuple[DiagRow, ...]:
    """Diagnostics as plain tuples (path kept as a string)."""
    return tuple(
        (d.code, d.severity.value, d.message, str(d.path) if d.path else None, d.line, d.column)
        for d in diagnostics
    )


def diagnostics_from_rows(
    rows: tuple[DiagRow, ...], path: Path, text: str | None = None
) -> list[Diagnostic]:
    """Inverse of :func:`diagnostics_to_rows`; ``path`` (whose str is ``text``) is reused."""
    if not rows:
        return []
    if text is None:
        text = str(path)
    return [
        Diagnostic(
            code,
            _SEVERITIES[sev],
            msg,
            path if where == text else (Path(where) if where else None),
            line,
            col,
        )
        for code, sev, msg, where, line, col in rows
    ]


def skill_to_record(skill: Skill, checked_ns: int = 0, path_text: str | None = None) -> Record:
    """The parse-time fields of ``skill`` as a tuple of plain data.

    The fields a listing does not need (:data:`~skilldeck.core.model.DETAILS`) are the
    last two items: None and their row, until :func:`pack_records` moves the rows of many
    records into one pickled block (the two items are then the block and an index in it).
    Rebuilt skills unpack them only when one is read. A skill rebuilt from a record and
    not unpacked since gives that record's block again.

    ``checked_ns`` is when the file was read: an entry whose file mtime is within
    :data:`RACY_NS` of it is not trusted on (mtime, size) alone (the file may have changed
    again within the same timestamp tick); its frontmatter hash is compared instead.
    ``path_text`` is ``str(skill.path)`` when the caller has it.
    """
    packed = skill._packed if type(skill) is PackedSkill else None
    block, item = (None, detail_row(skill)) if packed is None else packed[R_BLOCK:]
    intern = sys.intern
    return (
        path_text if path_text is not None else str(skill.path),
        skill.mtime_ns,
        skill.size,
        skill.content_hash,
        skill.name,
        skill.description,
        skill.hidden,
        skill.priority,
        tuple(
            (intern(d.code), intern(d.severity.value), d.message, d.line, d.column)
            for d in skill.diagnostics
        ),
        checked_ns,
        block,
        item,
    )


def pack_records(records: list[Record]) -> list[Record | None]:
    """``records`` with their detail rows moved into one new block they share (records
    already in a block are kept as they are). A record whose row cannot be pickled (nested
    too deep) gives None: it is not cacheable."""
    inline = [i for i, record in enumerate(records) if record[R_BLOCK] is None]
    out: list[Record | None] = list(records)
    if not inline:
        return out
    block = pack_block([records[i][R_ITEM] for i in inline])
    if block is None:
        for i in inline:
            out[i] = None
        inline = [i for i in inline if pack_block([records[i][R_ITEM]]) is not None]
        block = pack_block([records[i][R_ITEM] for i in inline]) if inline else None
        if block is None:
            return out
    for n, i in enumerate(inline):
        out[i] = (*records[i][:R_BLOCK], block, n)
    return out


_new_skill = object.__new__
_set_class = object.__setattr__


def skill_from_record(
    record: Record,
    path: Path,
    base_dir: Path,
    source: Source,
    root: Path | None,
    rel_id: str,
    diagnostics: list[Diagnostic] | None = None,
    resources: tuple[tuple[str, ...], bool] = ((), False),
) -> Skill:
    """Rebuild a :class:`Skill` from :func:`skill_to_record` output.

    ``diagnostics`` replaces the recorded parse diagnostics (a cached validation result
    already holds them); ``resources`` is ``(listing, truncated)``.
    """
    _path, mtime_ns, size, content_hash, name, description, hidden, priority, diags = record[:9]
    if diagnostics is None:
        diagnostics = (
            [
                Diagnostic(code, _SEVERITIES[sev], msg, path, line, col)
                for code, sev, msg, line, col in diags
            ]
            if diags
            else []
        )
    # Slot by slot (a third of the cost of the generated __init__, which would set the
    # details too); a test checks that every field but the details is set.
    skill = _new_skill(Skill)
    skill.name = name
    skill.description = description
    skill.path = path
    skill.base_dir = base_dir
    skill.source = source
    skill.root = root
    skill.rel_id = rel_id
    skill.priority = priority
    skill.hidden = hidden
    skill.enabled = True
    skill.owner = None
    skill.tool_validation = None
    skill.shadowed_by = None
    skill.shadow_reason = ""
    skill.resources, skill.resources_truncated = resources
    skill.mtime_ns = mtime_ns
    skill.size = size
    skill.content_hash = content_hash
    skill.diagnostics = diagnostics
    skill._packed = record  # type: ignore[misc]  # the slot of a base class
    _set_class(skill, "__class__", PackedSkill)
    return skill


def _packed_entries(entries: dict[str, Record]) -> dict[str, Record]:
    """``entries`` ready to be written: detail rows not in a block yet, and those of blocks
    mostly holding rows of entries gone, packed into new blocks of :data:`BLOCK_ROWS`;
    entries whose row cannot be pickled left out."""
    live: dict[int, int] = {}
    for record in entries.values():
        block = record[R_BLOCK]
        if block is not None:
            live[id(block)] = live.get(id(block), 0) + 1
    loose: list[str] = []
    decoded: dict[int, list[Any]] = {}
    for key, record in entries.items():
        block = record[R_BLOCK]
        if block is None:
            loose.append(key)
        elif 2 * live[id(block)] < block_size(block):  # mostly stale: repack the rest
            rows = decoded.get(id(block))
            if rows is None:
                rows = decoded[id(block)] = unpack_block(block)
            item = record[R_ITEM]
            row = rows[item] if 0 <= item < len(rows) else None
            if row is not None:
                entries[key] = (*record[:R_BLOCK], None, row)
                loose.append(key)
    for start in range(0, len(loose), BLOCK_ROWS):
        keys = loose[start : start + BLOCK_ROWS]
        for key, packed in zip(keys, pack_records([entries[k] for k in keys]), strict=True):
            if packed is None:
                del entries[key]
            else:
                entries[key] = packed
    return entries


class MetadataCache:
    """The cache of one discovery root.

    Args:
        root: The discovery root (its absolute path names the cache file).
        directory: Where cache files live (default ``cache_dir()/discovery``).

    Attributes:
        hits, misses: Lookup counts since loading.
        discarded: Why an existing cache file was thrown away ('' if it was not).
    """

    def __init__(
        self, root: Path | str, directory: Path | None = None, validator: str = ""
    ) -> None:
        self.root = os.path.abspath(root)
        self.validator = validator
        self.validated: dict[str, tuple[DiagRow, ...]] = {}
        self.seen_validated: dict[str, tuple[DiagRow, ...]] = {}
        self.resources: dict[str, ResourceRow] = {}
        self.seen_resources: dict[str, ResourceRow] = {}
        self.directory = directory or cache_dir() / "discovery"
        key = hashlib.sha1(self.root.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        self.file = self.directory / f"{key}.cache"
        self.entries: dict[str, Record] = {}
        self.seen: dict[str, Record] = {}
        self.tree: dict[str, Any] = {}
        self.seen_tree: dict[str, Any] = {}
        self.segments: list[bytes] = []
        self.covered: set[str] = set()
        self._pending: tuple[_CheckedReader, dict[str, Any], int] | None = None
        self.dirty = False
        self.hits = 0
        self.misses = 0
        self.discarded = ""

    @classmethod
    def load(
        cls, root: Path | str, directory: Path | None = None, validator: str = ""
    ) -> MetadataCache:
        """Open the cache of ``root``, discarding a corrupt or foreign file.

        Args:
            root: The discovery root.
            directory: Where cache files live.
            validator: Identifies the validation code and profile; cached validation
                results written under another value are dropped.
        """
        cache = cls.open(root, directory, validator)
        cache.finish()
        return cache

    @classmethod
    def open(
        cls, root: Path | str, directory: Path | None = None, validator: str = ""
    ) -> MetadataCache:
        """Like :meth:`load`, but read only the file's head (the folder ``tree``) until
        :meth:`finish`: discovery scans and starts its stat job in between."""
        cache = cls(root, directory, validator)
        try:
            handle = open(cache.file, "rb", buffering=0)  # noqa: SIM115  # closed by finish()
        except FileNotFoundError:
            return cache
        except OSError as exc:
            cache.discarded = f"unreadable: {exc}"
            return cache
        try:
            cache._pending = cache._open(handle)
        except OSError as exc:
            cache.discarded = f"unreadable: {exc}"
        if cache._pending is None:
            handle.close()
        return cache

    def finish(self) -> None:
        """Read the entries, validation results and listings after :meth:`open`."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        reader, head, expected = pending
        try:
            with reader.handle:
                self.entries = self._read_segments(reader, head)
                reader.read()  # anything after the last segment is checksummed too
            if reader.crc != expected:
                self.discarded = "corrupt (checksum mismatch)"
        except Exception as exc:  # any unpickling failure means: do not trust it
            self.discarded = f"corrupt ({exc.__class__.__name__})"
        if self.discarded:
            self.entries, self.validated, self.resources = {}, {}, {}

    def _open(self, handle: io.RawIOBase) -> tuple[_CheckedReader, dict[str, Any], int] | None:
        """Check the file's header and head and read the head; the file is left at the
        first segment, with the checksum it must have."""
        prefix = handle.read(_PREFIX) or b""
        if not prefix.startswith(MAGIC):
            self.discarded = "foreign file (bad magic)"
            return None
        if not prefix.startswith(_HEADER) or len(prefix) != _PREFIX:
            self.discarded = "other cache version"
            return None
        at = len(_HEADER)
        size = int.from_bytes(prefix[at : at + 8], "big")
        head_crc = int.from_bytes(prefix[at + 8 : at + 8 + _DIGEST], "big")
        rest_crc = int.from_bytes(prefix[at + 8 + _DIGEST :], "big")
        blob = handle.read(size) if size <= os.fstat(handle.fileno()).st_size else None
        if not blob or len(blob) != size or _checksum(blob) != head_crc:
            self.discarded = "corrupt (checksum mismatch)"
            return None
        try:
            head = SafeUnpickler(io.BytesIO(blob)).load()
        except Exception as exc:  # any unpickling failure means: do not trust it
            self.discarded = f"corrupt ({exc.__class__.__name__})"
            return None
        if (
            not isinstance(head, dict)
            or head.get("root") != self.root
            or not isinstance(head.get("segments"), int)
        ):
            self.discarded = "foreign content"
            return None
        if head.get("code") != code_fingerprint():
            self.discarded = "written by other parser code"
            return None
        tree = head.get("tree")
        if isinstance(tree, dict):
            self.tree = tree
        return _CheckedReader(handle), head, rest_crc

    def _read_segments(self, stream: _CheckedReader, head: dict[str, Any]) -> dict[str, Record]:
        entries: dict[str, Record] = {}
        validated: dict[str, tuple[DiagRow, ...]] = {}
        resources: dict[str, ResourceRow] = {}
        for _ in range(head["segments"]):
            segment = SafeUnpickler(stream).load()  # one unpickler per pickle: memos differ
            if (
                not isinstance(segment, dict)
                or not isinstance(segment.get("entries"), dict)
                or not isinstance(segment.get("validated"), dict)
                or not isinstance(segment.get("resources"), dict)
            ):
                self.discarded = "foreign content"
                return {}
            entries.update(segment["entries"])
            validated.update(segment["validated"])
            resources.update(segment["resources"])
        for value in entries.values():
            if (
                type(value) is not tuple
                or len(value) != _RECORD_LEN
                or type(value[R_BLOCK]) is not bytes
                or type(value[R_ITEM]) is not int
            ):
                self.discarded = "malformed entry"
                return {}
        if self.validator and head.get("validator") == self.validator:
            self.validated = validated
        self.resources = resources
        return entries

    def get(self, real: str, path: str, mtime_ns: int, size: int) -> Record | None:
        """The entry for ``real`` if it is still fresh for ``path``, else None."""
        record = self.entries.get(real)
        if (
            record is not None
            and record[R_MTIME] == mtime_ns
            and record[R_SIZE] == size
            and record[R_PATH] == path
            and mtime_ns < record[R_CHECKED] - RACY_NS
        ):
            self.hits += 1
            self.seen[real] = record
            return record
        self.misses += 1
        return None

    def stale(self, real: str, path: str) -> Record | None:
        """The entry for ``real`` found at ``path`` whatever its mtime and size, if any."""
        record = self.entries.get(real)
        return record if record is not None and record[R_PATH] == path else None

    def refresh(self, real: str, record: Record, mtime_ns: int, size: int) -> Record:
        """Keep ``record`` (same frontmatter hash) with the file's new mtime and size."""
        fresh = (
            record[R_PATH],
            mtime_ns,
            size,
            *record[R_HASH:R_CHECKED],
            time.time_ns(),
            *record[R_BLOCK:],
        )
        self.seen[real] = fresh
        self.dirty = True
        return fresh

    def put(self, real: str, skill: Skill) -> None:
        """Store the parse result of ``skill`` (found at its path, real path ``real``)."""
        self.put_record(real, skill_to_record(skill, time.time_ns()))

    def get_resources(
        self, real: str, dir_mtime_ns: int, folder: str | None = None
    ) -> tuple[tuple[str, ...], bool] | None:
        """Cached resource listing of the skill ``real`` if its folders are unchanged.

        Args:
            real: The entry key (real path of the SKILL.md).
            dir_mtime_ns: The skill folder's current mtime.
            folder: The skill folder, to stat the subfolders the listing walked (without
                it, a listing that walked subfolders is not trusted).
        """
        row = self.resources.get(real)
        if type(row) is not tuple or len(row) != 4 or row[0] != dir_mtime_ns:
            return None
        if row[1]:
            if folder is None:
                return None
            prefix = folder + os.sep
            try:
                for rel, mtime in row[1]:
                    if os.stat(prefix + rel).st_mtime_ns != mtime:
                        return None
            except OSError:
                return None
        self.seen_resources[real] = row
        return row[2], row[3]

    def add_segment(self, segment: Segment, blob: bytes) -> None:
        """Store a chunk of loaded skills; ``blob`` (:func:`pack_segment` of ``segment``) is
        written by :meth:`save` as it is, with no second pickling."""
        entries = segment["entries"]
        for real in entries:
            self._uncover(real)
            if self.validated:
                self.validated.pop(real, None)
        self.seen.update(entries)
        if self.validator:
            self.seen_validated.update(segment["validated"])
        self.seen_resources.update(segment["resources"])
        self.dirty = True
        self.segments.append(blob)
        self.covered.update(entries)

    def _uncover(self, real: str) -> None:
        """A covered entry changes: its segment would be stale, so drop every segment."""
        if real in self.covered:
            self.segments.clear()
            self.covered.clear()

    def put_tree(self, tree: dict[str, Any]) -> None:
        """Remember the folders a scan listed (see ``discovery._scan_root``)."""
        self.seen_tree = tree
        if tree != self.tree:
            self.dirty = True

    def put_resources(
        self,
        real: str,
        dir_mtime_ns: int,
        listing: tuple[tuple[str, ...], bool],
        stamps: Stamps = (),
    ) -> None:
        """Remember the resource listing of a folder and the subfolder ``stamps`` it walked."""
        self._uncover(real)
        self.seen_resources[real] = (dir_mtime_ns, stamps, listing[0], listing[1])
        self.dirty = True

    def put_record(self, real: str, record: Record) -> None:
        """Store a :func:`skill_to_record` result for the entry ``real``."""
        self._uncover(real)
        self.seen[real] = record
        self.validated.pop(real, None)
        self.dirty = True

    def put_validated_rows(self, real: str, rows: tuple[DiagRow, ...]) -> None:
        """Remember validation rows (:func:`diagnostics_to_rows`) of the entry ``real``."""
        if self.validator:
            self._uncover(real)
            self.seen_validated[real] = rows
            self.dirty = True

    def get_validated(self, real: str) -> tuple[DiagRow, ...] | None:
        """Cached validation result of a fresh entry (call after a :meth:`get` hit)."""
        rows = self.validated.get(real)
        if rows is not None:
            self.seen_validated[real] = rows
        return rows

    def put_validated(self, real: str, diagnostics: list[Diagnostic]) -> None:
        """Remember the validation result of the entry ``real``."""
        if self.validator:
            self._uncover(real)
            self.seen_validated[real] = diagnostics_to_rows(diagnostics)
            self.dirty = True

    def save(self) -> bool:
        """Write the entries seen since loading, if anything changed. Never raises.

        Returns:
            True when a file was written.
        """
        if not self.dirty and len(self.seen) == len(self.entries):
            return False
        covered = self.covered
        rest = {
            "entries": _packed_entries({k: v for k, v in self.seen.items() if k not in covered}),
            "validated": {k: v for k, v in self.seen_validated.items() if k not in covered},
            "resources": {k: v for k, v in self.seen_resources.items() if k not in covered},
        }
        head = {
            "root": self.root,
            "code": code_fingerprint(),
            "validator": self.validator,
            "tree": self.seen_tree,
            "segments": len(self.segments) + 1,
        }
        try:
            first = pickle.dumps(head, protocol=pickle.HIGHEST_PROTOCOL)
            pieces = [*self.segments, pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL)]
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".cache", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(compose(first, pieces))
                    handle.write(first)
                    for piece in pieces:
                        handle.write(piece)
                os.replace(tmp, self.file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, pickle.PicklingError, TypeError, ValueError, RecursionError):
            return False
        self.seen.update(rest["entries"])  # as written: detail rows in blocks
        self.entries = dict(self.seen)
        self.validated = dict(self.seen_validated)
        self.resources = dict(self.seen_resources)
        self.tree = self.seen_tree
        self.segments, self.covered = [], set()
        self.dirty = False
        return True

    def clear(self) -> None:
        """Delete the cache file of this root."""
        with contextlib.suppress(OSError):
            self.file.unlink()
        self.entries = {}
        self.seen = {}
        self.validated = {}
        self.seen_validated = {}
        self.resources = {}
        self.seen_resources = {}
        self.tree = {}
        self.seen_tree = {}
        self.segments, self.covered = [], set()


def clear_all(directory: Path | None = None) -> int:
    """Delete every discovery cache file; returns how many were removed."""
    folder = directory or cache_dir() / "discovery"
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.endswith(".cache"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    count += 1
    return count
