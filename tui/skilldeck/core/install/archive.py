"""Unpack a skill archive (``.tar.gz`` or ``.zip``) into an empty stage folder, safely.

Every member is judged before a byte of it is written: a name must be a plain relative
POSIX path (no absolute path, ``..``, backslash, drive letter, control character or
duplicate); only regular files and folders are accepted (every link, device and FIFO is
refused); at most :data:`MAX_FILES` members; each file at most :data:`FILE_CAP` bytes and
all of them at most :data:`TOTAL_CAP`, counted on the bytes actually decompressed (a
declared size is never trusted: a bomb is stopped by the counter, not by its header). The
archive must hold ``SKILL.md`` at its root. Any refusal raises before the caller uses the
folder; what was written so far lies inside it and goes with the stage.

The caps are those of :mod:`~skilldeck.core.execution.snapshot`: what unpacks here can
also be pinned and run.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import FILE_CAP, MAX_FILES, TOTAL_CAP

__all__ = ["FILE_CAP", "MAX_FILES", "TOTAL_CAP", "archive_kind", "unpack"]

_CHUNK = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_KINDS = {
    "application/gzip": "tar.gz",
    "application/x-gzip": "tar.gz",
    "application/x-tar+gzip": "tar.gz",
    "application/x-compressed-tar": "tar.gz",
    "application/zip": "zip",
    "application/x-zip-compressed": "zip",
}


def archive_kind(content_type: str, url: str) -> str | None:
    """``tar.gz`` or ``zip`` from the server's media type, else (absent or generic type)
    from the URL's extension; None when neither says."""
    kind = _KINDS.get(content_type.lower())
    if kind is not None:
        return kind
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    if path.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if path.endswith(".zip"):
        return "zip"
    return None


def _refuse(message: str) -> SkilldeckError:
    return SkilldeckError(
        ErrorCode.INVALID_PARAM, f"unsafe archive: {message}", reason="unsafe_archive"
    )


def member_problem(name: str) -> str | None:
    """Why the member name ``name`` may not be unpacked (None when it may)."""
    if not name or name in (".", "./"):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return f"{name!r} holds a control character"
    if "\\" in name:
        return f"{name!r} holds a backslash"
    if _DRIVE.match(name):
        return f"{name!r} names a drive"
    if name.startswith("/"):
        return f"{name!r} is an absolute path"
    if ".." in name.split("/"):
        return f"{name!r} leaves the skill folder (..)"
    return None


def _clean(name: str) -> str:
    """The member name as a relative path: ``./`` prefixes and a trailing ``/`` dropped."""
    while name.startswith("./"):
        name = name[2:]
    return "/".join(p for p in name.split("/") if p not in ("", "."))


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Budget:
    """Counts members and decompressed bytes against the caps."""

    def __init__(self) -> None:
        self.total = 0
        self.members = 0
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def admit(self, raw: str, *, folder: bool) -> str:
        """The cleaned name of a member that may be unpacked, or raise why not."""
        self.members += 1
        if self.members > MAX_FILES:
            raise _refuse(f"more than {MAX_FILES} entries")
        problem = member_problem(raw)
        if problem is not None:
            raise _refuse(problem)
        rel = _clean(raw)
        if not rel:
            return rel
        parents = rel.split("/")[:-1]
        ancestors = {"/".join(parents[: i + 1]) for i in range(len(parents))}
        if rel in self.files or (not folder and rel in self.folders):
            raise _refuse(f"{rel!r} appears twice")
        if folder and rel in self.folders:
            return rel
        if ancestors & self.files or (folder and rel in self.files):
            raise _refuse(f"{rel!r} is both a file and a folder")
        self.folders |= ancestors | ({rel} if folder else set())
        if not folder:
            self.files.add(rel)
        return rel

    def copy(self, source: IO[bytes], target: Path, rel: str, executable: bool) -> None:
        """Write ``source`` to ``target`` chunk by chunk, counting every byte."""
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o755 if executable else 0o644)
        size = 0
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                size += len(chunk)
                self.total += len(chunk)
                if size > FILE_CAP:
                    raise _refuse(f"{rel!r} is over {FILE_CAP} bytes unpacked")
                if self.total > TOTAL_CAP:
                    raise _refuse(f"the contents are over {TOTAL_CAP} bytes unpacked")
                out.write(chunk)


class _Capped(io.RawIOBase):
    """A read-only stream that refuses to give more than ``cap`` bytes (the whole
    decompressed tar stream: headers and padding too)."""

    def __init__(self, inner: _Reader, cap: int) -> None:
        self.inner, self.cap, self.seen = inner, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        self.seen += len(data)
        if self.seen > self.cap:
            raise _refuse(f"the contents are over {TOTAL_CAP} bytes unpacked")
        buffer[: len(data)] = data
        return len(data)


def unpack(data: bytes, kind: str, dest: Path) -> None:
    """Unpack the archive ``data`` (``tar.gz`` or ``zip``) into the empty folder ``dest``.

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``unsafe_archive``) saying what was refused.
    """
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{dest} is not empty")
    budget = _Budget()
    try:
        if kind == "tar.gz":
            _untar(data, dest, budget)
        elif kind == "zip":
            _unzip(data, dest, budget)
        else:
            raise _refuse(f"unknown archive format {kind!r} (tar.gz or zip)")
    except (tarfile.TarError, zipfile.BadZipFile, gzip.BadGzipFile, EOFError, OSError) as exc:
        raise _refuse(f"not a readable {kind} archive ({exc})") from exc
    except (NotImplementedError, RuntimeError, ValueError, LookupError) as exc:
        raise _refuse(f"cannot read the {kind} archive ({exc})") from exc
    if "SKILL.md" not in budget.files:
        raise _refuse("no SKILL.md at its root (files must sit at the root, not in a folder)")


def _tar_members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := tar.next()) is not None:
        yield member


def _untar(data: bytes, dest: Path, budget: _Budget) -> None:
    # The raw tar stream may exceed the file bytes by its headers and padding: at most
    # three 512-byte blocks per member (pax header, header, last block) and the end marker.
    overhead = (MAX_FILES + 1) * 3 * 512 + 20 * 512
    raw = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
    stream = io.BufferedReader(_Capped(raw, TOTAL_CAP + overhead), buffer_size=_CHUNK)
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in _tar_members(tar):
            if member.issym() or member.islnk():
                raise _refuse(f"{member.name!r} is a link (links are not accepted)")
            if member.ischr() or member.isblk() or member.isfifo():
                raise _refuse(f"{member.name!r} is a device or FIFO")
            if member.issparse() or not (member.isreg() or member.isdir()):
                raise _refuse(f"{member.name!r} is not a plain file or folder")
            rel = budget.admit(member.name, folder=member.isdir())
            if member.isdir() or not rel:
                if rel:
                    (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            source = tar.extractfile(member)
            if source is None:  # pragma: no cover - isreg() members always have data
                raise _refuse(f"{member.name!r} has no data")
            budget.copy(source, dest / rel, rel, bool(member.mode & 0o111))


def _unzip(data: bytes, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_FILES:
            raise _refuse(f"more than {MAX_FILES} entries")
        for info in infos:
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise _refuse(f"{info.filename!r} is a link (links are not accepted)")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise _refuse(f"{info.filename!r} is a device, FIFO or socket")
            if info.flag_bits & 0x1:
                raise _refuse(f"{info.filename!r} is encrypted")
            folder = info.is_dir()
            rel = budget.admit(info.filename, folder=folder)
            if folder or not rel:
                if rel:
                    (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            with archive.open(info) as source:
                budget.copy(source, dest / rel, rel, bool(mode & 0o111))
