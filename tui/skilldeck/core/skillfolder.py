"""One skill folder: which files it holds, which names it may use, its manifest and digest.

Every piece of code that looks at the files of a skill folder (the execution snapshot an
approval pins, the install lock, the install review, lint, discovery's resource listing)
walks it through :func:`walk`, so there is one list of skipped entries (:data:`SKIPPED`)
and one rule for names (:func:`name_problem`): a name holding a control character (a
newline, a carriage return, any C0 or C1 control, DEL), a line or paragraph separator, a
bidirectional control, a backslash or bytes that are not UTF-8 does not survive a
line-based record (a manifest, ``ALLOWLIST.txt``, a review printed on a terminal), and a
name not in Unicode normal form NFKC can look exactly like another file of the folder (a
reviewer reads ``hélper.py`` written one way while ``import hélper`` loads the other), so
a folder holding one is refused wherever it is pinned, installed or allowed.

The manifest is one line per file in ``sha256sum`` form, sorted by path::

    9f86d08…  SKILL.md
    2c26b46…  scripts/helper.py

and, as ``sha256sum`` writes them, a name holding a backslash or a line break is escaped
(``\\\\``, ``\\n``, ``\\r``) on a line that starts with a backslash, so no name can forge a
line: two different folders never share a manifest. Ordinary names are written as they are,
so digests of ordinary folders are the ones earlier versions pinned. The digest is the
SHA-256 of the manifest. :func:`compiled` says which files hold code no reviewer can read
(bytecode, native libraries): a finding at lint and install, never copied into a run.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from skilldeck.core.errors import ErrorCode, SkilldeckError

MARKER = ".skilldeck-sync"
"""File :mod:`~skilldeck.core.install.sync` leaves in a copy it made."""
SKIPPED = frozenset({".git", MARKER})
"""Folder entries (at any level) that are neither listed, pinned, hashed nor copied."""
WALK_LIMIT = 100_000
"""Most entries one walk lists before it stops (``truncated``)."""
FILE, LINK, FOLDER_LINK, OTHER = "file", "link", "folder-link", "other"
"""Kinds of :class:`Entry`: a regular file, a symlink to a file (or a dangling one), a
symlink to a folder (never entered), anything else (FIFO, socket, device)."""
COMPILED_FOLDER = "__pycache__"
COMPILED_SUFFIXES = (
    ".pyc",
    ".pyo",
    ".pyd",
    ".so",
    ".dylib",
    ".dll",
    ".exe",
    ".node",
    ".wasm",
    ".class",
    ".jar",
)
"""Names of files holding compiled code: Python bytecode, native libraries and
executables, Node addons, WebAssembly, Java classes."""
_VERSIONED_SO = re.compile(r"\.so(?:\.\d+)+$")
_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"\x00asm")
"""First bytes of ELF, Mach-O (64, 32, universal) and WebAssembly files."""
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\\\\\u2028\u2029{_BIDI}\ud800-\udfff]")
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Entry(NamedTuple):
    """One non-folder entry of a skill folder (a tuple: cheap to make by the thousand)."""

    rel: str
    """Its POSIX path relative to the skill folder."""
    kind: str
    """:data:`FILE`, :data:`LINK`, :data:`FOLDER_LINK` or :data:`OTHER`."""


@dataclass(slots=True)
class Listing:
    """What :func:`walk` found.

    Attributes:
        entries: Every non-folder entry, sorted by path.
        unsafe: Paths (folders too) whose name breaks :func:`name_problem`, sorted.
        truncated: True when the walk stopped at its limit.
    """

    entries: list[Entry] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    truncated: bool = False

    def require_safe(self) -> None:
        """Refuse a folder holding a name that does not survive a line-based record.

        Raises:
            SkilldeckError: PERMISSION_DENIED (reason ``unsafe_name``) naming the first
                such path, escaped.
        """
        if self.unsafe:
            raise unsafe_error(self.unsafe)


def unsafe_error(paths: list[str]) -> SkilldeckError:
    """The refusal of a skill folder holding the unsafe ``paths`` (shown escaped)."""
    first = paths[0]
    more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
    return SkilldeckError(
        ErrorCode.PERMISSION_DENIED,
        f"the skill folder holds a file name that cannot be pinned: {shown(first)} "
        f"{name_problem(first)}{more}; rename it",
        reason="unsafe_name",
        path=shown(first),
    )


def name_problem(name: str) -> str | None:
    """Why the file name or path ``name`` cannot be part of a skill, or None when it can."""
    found = _UNSAFE.search(name)
    if found is None:
        if _normal(name):
            return None
        return "is not in Unicode normal form NFKC (another name can look the same)"
    char = found.group()
    if char == "\\":
        return "holds a backslash"
    if "\ud800" <= char <= "\udfff":
        return "holds bytes that are not UTF-8"
    return f"holds the control character U+{ord(char):04X}"


def _normal(name: str) -> bool:
    """True for a name in Unicode normal form NFKC: no decomposed accent (``e`` and a
    combining acute beside a precomposed ``é``), ligature or full-width letter that
    looks like another name in the same folder."""
    return name.isascii() or unicodedata.is_normalized("NFKC", name)


def shown(name: str) -> str:
    """``name`` fit for one line of a terminal or a log: every character
    :func:`name_problem` refuses is written as an escape (``\\n``, ``\\x1b``, ``<U+202E>``;
    a byte that is not UTF-8 as ``\\xNN``)."""
    if _UNSAFE.search(name) is None:
        return name
    return _UNSAFE.sub(_escape, name)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _ESCAPES:
        return _ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def walk(
    folder: str | os.PathLike[str],
    *,
    limit: int = WALK_LIMIT,
    enter: Callable[[str, int], bool] | None = None,
    stamps: list[tuple[str, int]] | None = None,
) -> Listing:
    """Every entry under the skill ``folder``: :data:`SKIPPED` names are left out at every
    level and symlinked folders are listed (:data:`FOLDER_LINK`), never entered.

    Args:
        folder: The skill folder.
        limit: Most entries (folders included) listed; beyond it ``truncated`` is set.
        enter: For a bounded listing shown to people or agents: whether to list the
            subfolder at this path and depth (1 for a folder directly in ``folder``).
        stamps: For such a listing: receives ``(folder path, mtime_ns)`` of every folder
            listed (``""`` for ``folder``), and a folder that cannot be listed is left out
            instead of refused.

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``confinement``) when a folder of it
            cannot be listed (unless ``stamps`` is given).
    """
    listing = Listing()
    stack = [(os.fspath(folder), "", 0)]
    seen = 0
    while stack and not listing.truncated:
        current, prefix, depth = stack.pop()
        for item in _list(current, prefix, stamps):
            if item.name in SKIPPED:
                continue
            seen += 1
            if seen > limit:
                listing.truncated = True
                break
            rel = prefix + item.name
            if _UNSAFE.search(item.name) is not None or not _normal(item.name):
                listing.unsafe.append(rel)
            if not item.is_dir(follow_symlinks=False):
                listing.entries.append(Entry(rel, _kind(item)))
            elif enter is None or enter(rel, depth + 1):
                stack.append((item.path, rel + "/", depth + 1))
    listing.entries.sort()
    listing.unsafe.sort()
    return listing


def _list(
    current: str, prefix: str, stamps: list[tuple[str, int]] | None
) -> list[os.DirEntry[str]]:
    """The entries of one folder of the walk (and its stamp, when asked for)."""
    try:
        if stamps is not None:
            stamps.append((prefix.rstrip("/"), os.stat(current).st_mtime_ns))
        with os.scandir(current) as it:
            return list(it)
    except OSError as exc:
        if stamps is not None:
            return []
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"cannot list {shown(prefix) or '.'} of the skill folder: {exc.strerror}",
            reason="confinement",
        ) from exc


def _kind(item: os.DirEntry[str]) -> str:
    if item.is_symlink():
        return FOLDER_LINK if os.path.isdir(item.path) else LINK
    return FILE if item.is_file(follow_symlinks=False) else OTHER


def compiled(rel: str, head: bytes = b"") -> str | None:
    """What compiled code the file at ``rel`` holds (by its name, and by its first bytes
    ``head`` when given), or None for a file a reviewer can read."""
    parts = rel.split("/")
    name = parts[-1].lower()
    if COMPILED_FOLDER in parts[:-1]:
        return "Python bytecode cache (__pycache__)"
    if name.endswith((".pyc", ".pyo")):
        return "Python bytecode"
    if name.endswith(COMPILED_SUFFIXES) or _VERSIONED_SO.search(name):
        return "a compiled binary (native library, executable or bytecode)"
    if head.startswith(_MAGIC):
        return "a compiled binary (ELF, Mach-O or WebAssembly)"
    return None


def manifest_line(digest: str, rel: str) -> str:
    """One manifest line: ``HEX  path``, or as ``sha256sum`` escapes a name holding a
    backslash or a line break: ``\\HEX  escaped-path``."""
    if "\\" in rel or "\n" in rel or "\r" in rel:
        escaped = rel.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        return f"\\{digest}  {escaped}\n"
    return f"{digest}  {rel}\n"


def manifest(files: Iterable[tuple[str, str]]) -> str:
    """The manifest of ``(path, digest)`` pairs, sorted by path."""
    return "".join(manifest_line(digest, rel) for rel, digest in sorted(files))


def manifest_digest(text: str) -> str:
    """Hex SHA-256 of the manifest ``text``: the folder's digest."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def parse_manifest(text: str) -> dict[str, str]:
    """``{path: digest}`` from a manifest (escaped lines unescaped; lines that are not
    ``DIGEST  path`` are skipped)."""
    files: dict[str, str] = {}
    for line in text.split("\n"):
        escaped = line.startswith("\\")
        digest, sep, rel = line[escaped:].partition("  ")
        if not sep or not rel or " " in digest:
            continue
        if escaped:
            rel = re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), rel)
        files[rel] = digest.lower()
    return files


def manifest_changes(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str]]:
    """What changed from manifest ``old`` to ``new``: ``(change, path)`` pairs, change one
    of ``added``, ``removed``, ``changed``, sorted by path."""
    changes = [("removed", rel) for rel in old if rel not in new]
    changes += [("added", rel) for rel in new if rel not in old]
    changes += [("changed", rel) for rel in new if rel in old and old[rel] != new[rel]]
    return sorted(changes, key=lambda change: change[1])
