"""Read a SKILL.md: its YAML frontmatter only, never the body (read on demand).

The frontmatter sits between two lines that are exactly ``---`` (trailing spaces allowed),
so a ``---`` inside a value never closes it. Reading stops at the closing fence (bounded by
:data:`MAX_FRONTMATTER_BYTES`). The YAML is loaded by PyYAML's C loader (the pure-Python
one when libyaml is missing), imported only when something must be parsed.

Every problem becomes a :class:`~skilldeck.core.model.Diagnostic` on the returned skill;
nothing here raises on bad input. Codes:
    SD101 no frontmatter (the file does not start with a ``---`` line)
    SD102 the frontmatter fence is never closed
    SD103 YAML syntax error (with line and column)
    SD104 the frontmatter is empty or not a mapping
    SD105 duplicate key (the last value wins; an error under the ``agentskills`` profile)
    SD106 bytes that are not UTF-8 (decoded with replacement); in the body only when
          :func:`encoding_problems` is asked (``validate`` and lint's SL106 do)
    SD107 NUL bytes
    SD108 file larger than :data:`MAX_SKILL_BYTES`
    SD109 file named ``skill.md`` (or another case) instead of ``SKILL.md``
    SD110 the file cannot be read
    SD111 no usable ``name``: the folder name is used
    SD112 a field has the wrong type and was ignored or coerced
    SD114 frontmatter larger than :data:`MAX_FRONTMATTER_BYTES`
    SD115 frontmatter too complex (alias expansion, recursion or nesting)
    SD116 CRLF line endings (accepted)
    SD117 UTF-16/UTF-32 byte order mark: the file is not UTF-8
    SD119 UTF-8 byte order mark at the start of the file (accepted; other hosts may not)
    SD118 the file breaks the confinement rule (resolves outside the skill folder, is a
          device, FIFO or socket, or has several hard links): not read
    SD199 unexpected parser failure (a bug; the skill still shows)
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import stat
from pathlib import Path

from skilldeck.core.config import hardlinks_allowed
from skilldeck.core.confined import inside, kind_problem, read_confined
from skilldeck.core.discovery.fields import extract, split_allowed_tools
from skilldeck.core.discovery.resources import MAX_RESOURCE_DEPTH, MAX_RESOURCES, list_resources
from skilldeck.core.discovery.yamlload import load_mapping
from skilldeck.core.model import Diagnostic, Severity, Skill, Source

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_RESOURCES",
    "MAX_RESOURCE_DEPTH",
    "MAX_SKILL_BYTES",
    "SKILL_FILE",
    "encoding_problems",
    "list_resources",
    "parse_bytes",
    "parse_file",
    "parse_skill_file",
    "read_body",
    "read_raw",
    "read_source",
    "split_allowed_tools",
]

MAX_SKILL_BYTES = 1024 * 1024
"""Files larger than this are reported (SD108); only their frontmatter is read."""

MAX_FRONTMATTER_BYTES = 256 * 1024
"""The closing fence must appear within this many bytes."""

SKILL_FILE = "SKILL.md"

_CHUNK = 16384
_O_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_OPEN = re.compile(rb"---[ \t]*(?:\r?\n|\r?\Z)")
_CLOSE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)


class _Head:
    """The start of a file, up to its closing fence, and what fstat said."""

    def __init__(self, data: bytes, eof: bool, size: int, mtime_ns: int) -> None:
        self.data = data
        self.eof = eof
        self.size = size
        self.mtime_ns = mtime_ns


class _Refused(Exception):
    """The opened file breaks the confinement rule (its kind or its hard links)."""


def _read_head(path: str) -> _Head:
    """Read from the start of ``path`` until the closing fence (bounded).

    The kind of file is checked on the ``fstat`` of what was opened (one stat for both the
    confinement rule and the read).
    """
    fd = os.open(path, _O_FLAGS)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        allow = st.st_nlink > 1 and hardlinks_allowed()
        problem = kind_problem(st, allow)
        if problem is not None:
            raise _Refused(problem)
        data = os.read(fd, _CHUNK)
        eof = len(data) < _CHUNK
        while not eof and len(data) < MAX_FRONTMATTER_BYTES and _locate(data, eof) is None:
            more = os.read(fd, _CHUNK * 4)
            eof = not more
            data += more
    finally:
        os.close(fd)
    return _Head(data, eof, st.st_size, st.st_mtime_ns)


def _locate(data: bytes, eof: bool) -> tuple[int, int, int] | None:
    """Find the fences: ``(yaml_start, yaml_end, body_offset)`` or None if undecided.

    ``(-1, -1, -1)``: no opening fence; ``(yaml_start, -1, -1)``: the closing fence is
    missing (only when ``eof``). A UTF-8 BOM is skipped.
    """
    start = 3 if data.startswith(_BOM) else 0
    opening = _OPEN.match(data, start)
    if opening is None:
        return (-1, -1, -1)
    pos = opening.end()
    closing = _CLOSE.search(data, pos)
    if closing is None:
        return (pos, -1, -1) if eof else None
    end = closing.end()
    if end >= len(data):
        return (pos, closing.start(), end) if eof else None
    return (pos, closing.start(), end + 1)


def parse_skill_file(
    path: Path, *, source: Source = Source.EXPLICIT, root: Path | None = None
) -> Skill:
    """Parse one SKILL.md, reading only its frontmatter, and list its resources.

    Never raises.

    Args:
        path: The SKILL.md file (made absolute; not resolved, so symlinked folders keep
            the path the user sees).
        source: Where it was discovered.
        root: The discovery root (``rel_id`` is computed against it).

    Returns:
        A :class:`Skill` with parse diagnostics (``SD1xx``) and its resource listing.
    """
    skill = parse_file(Path(os.path.abspath(path)), source=source, root=root)
    skill.resources, skill.resources_truncated = list_resources(str(skill.base_dir))
    return skill


def parse_file(
    path: Path,
    *,
    source: Source = Source.EXPLICIT,
    root: Path | None = None,
    rel_id: str | None = None,
) -> Skill:
    """Parse the SKILL.md at the absolute ``path`` without listing resources. Never raises.

    ``rel_id`` is the skill folder relative to ``root`` when the caller knows it.
    """
    skill = _empty_skill(path, source, root, rel_id)
    try:
        if not inside(str(path), str(path.parent)):
            raise _Refused("resolves outside the skill folder")
        head = _read_head(str(path))
    except _Refused as refused:
        message = f"{path.name} {refused}: not read"
        skill.diagnostics.append(Diagnostic("SD118", Severity.ERROR, message, path))
        return skill
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        skill.diagnostics.append(
            Diagnostic("SD110", Severity.ERROR, f"cannot read {path.name}: {reason}", path)
        )
        _check_filename(skill)
        return skill
    _parse_head(skill, head)
    return skill


def parse_bytes(
    data: bytes, path: Path, *, source: Source = Source.EXPLICIT, root: Path | None = None
) -> Skill:
    """Parse SKILL.md content given as bytes (no file access). Never raises."""
    cut = data[: MAX_FRONTMATTER_BYTES + _CHUNK]
    head = _Head(cut, len(cut) == len(data), len(data), 0)
    skill = _empty_skill(Path(path), source, root, None)
    _parse_head(skill, head)
    return skill


def _empty_skill(path: Path, source: Source, root: Path | None, rel_id: str | None) -> Skill:
    base = path.parent
    return Skill(
        base.name, "", path, base, source, root, _rel_id(base, root) if rel_id is None else rel_id
    )


def _rel_id(base: Path, root: Path | None) -> str:
    if root is None:
        return "."
    try:
        rel = os.path.relpath(base, root)
    except ValueError:
        return "."
    return "." if rel == "." else rel.replace(os.sep, "/")


def _check_filename(skill: Skill) -> None:
    name = skill.path.name
    if name != SKILL_FILE and name.lower() == "skill.md":
        skill.diagnostics.append(
            Diagnostic(
                "SD109",
                Severity.WARNING,
                f"file is named {name}; the standard name is {SKILL_FILE}",
                skill.path,
            )
        )


def _parse_head(skill: Skill, head: _Head) -> None:
    skill.size = head.size
    skill.mtime_ns = head.mtime_ns
    try:
        _fill(skill, head)
    except Exception as exc:  # never raise on user input
        skill.diagnostics.append(
            Diagnostic("SD199", Severity.ERROR, f"internal parser error: {exc!r}", skill.path)
        )
    _check_filename(skill)


def _fail(skill: Skill, code: str, message: str, data: bytes, hashed: int) -> None:
    """A file whose frontmatter cannot be found: one diagnostic, NULs, a hash."""
    if code != "SD117" and (nul := data.find(b"\x00")) >= 0:
        _nul_diag(skill, data, nul)
    skill.diagnostics.append(Diagnostic(code, Severity.ERROR, message, skill.path, 1, 1))
    skill.content_hash = hashlib.sha256(data[:hashed]).hexdigest()


def _fill(skill: Skill, head: _Head) -> None:
    data = head.data
    if head.size > MAX_SKILL_BYTES:
        message = (
            f"file is {head.size} bytes, over the {MAX_SKILL_BYTES} byte cap; "
            "only its frontmatter was read"
        )
        skill.diagnostics.append(Diagnostic("SD108", Severity.WARNING, message, skill.path))
    if data.startswith(_WIDE_BOMS):
        _fail(skill, "SD117", "file is UTF-16 or UTF-32; save it as UTF-8", data, _CHUNK)
        return
    located = _locate(data, head.eof)
    if located is None:
        message = f"no closing '---' within the first {MAX_FRONTMATTER_BYTES} bytes"
        _fail(skill, "SD114", message, data, MAX_FRONTMATTER_BYTES)
        return
    yaml_start, yaml_end, body_offset = located
    if yaml_start == -1:
        message = "no frontmatter: the file must start with a '---' line"
        if not data.strip():
            message = "empty file: a SKILL.md starts with '---', name and description, '---'"
        _fail(skill, "SD101", message, data, _CHUNK)
        return
    if yaml_end == -1:
        message = "the frontmatter is never closed by a '---' line"
        _fail(skill, "SD102", message, data, len(data))
        return
    skill.body_offset = body_offset
    skill.body_line = data.count(b"\n", 0, body_offset) + 1
    skill.content_hash = hashlib.sha256(data[:body_offset]).hexdigest()
    if (nul := data.find(b"\x00", 3 if data.startswith(_BOM) else 0)) >= 0:
        _nul_diag(skill, data, nul)
    if data.startswith(_BOM):
        skill.diagnostics.append(
            Diagnostic("SD119", Severity.WARNING, _BOM_MESSAGE, skill.path, 1, 1)
        )
    text = _decode(skill, data, yaml_start, yaml_end)
    fm = load_mapping(text, skill.path, skill.diagnostics, skill.field_lines)
    if fm is not None:
        skill.frontmatter = fm
        extract(skill, fm)


def _decode(skill: Skill, data: bytes, start: int, end: int) -> str:
    """The YAML text: UTF-8 (bad bytes replaced, SD106), NULs dropped, CRLF as LF."""
    raw = data[start:end]
    if b"\r\n" in raw:
        skill.diagnostics.append(
            Diagnostic("SD116", Severity.INFO, "CRLF line endings (accepted)", skill.path)
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, start + exc.start)
        message = "frontmatter is not valid UTF-8; bad bytes were replaced"
        skill.diagnostics.append(
            Diagnostic("SD106", Severity.WARNING, message, skill.path, line, column)
        )
        text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text.replace("\r\n", "\n") if "\r" in text else text


_BOM_MESSAGE = (
    "file starts with a UTF-8 byte order mark (U+FEFF); save it without one: "
    "hosts that expect '---' on the first line miss the frontmatter"
)


def encoding_problems(
    data: bytes, body_offset: int, *, final: bool
) -> list[tuple[str, str, int, int]]:
    """A leading UTF-8 byte order mark (SD119) and the first bytes of the body that are
    not UTF-8 (SD106).

    Args:
        data: The start of a SKILL.md (or all of it).
        body_offset: Where its body starts in ``data``.
        final: ``data`` holds the whole file (else a sequence cut at its end is no error).

    Returns:
        ``(code, message, line, column)`` per problem, with file lines and columns.
    """
    found: list[tuple[str, str, int, int]] = []
    if data.startswith(_BOM):
        found.append(("SD119", _BOM_MESSAGE, 1, 1))
    body = data[body_offset:]
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if final or exc.end < len(body):
            bad = body[exc.start : exc.end].hex(" ")
            line, column = _position(data, body_offset + exc.start)
            message = (
                f"body is not valid UTF-8 at line {line}, column {column} (bytes {bad}); "
                "it is loaded with U+FFFD replacement characters: save the file as UTF-8"
            )
            found.append(("SD106", message, line, column))
    return found


def _position(data: bytes, pos: int) -> tuple[int, int]:
    """1-based line and column of byte ``pos``."""
    return data.count(b"\n", 0, pos) + 1, pos - (data.rfind(b"\n", 0, pos) + 1) + 1


def _nul_diag(skill: Skill, data: bytes, pos: int) -> None:
    line, column = _position(data, pos)
    message = "file contains NUL bytes (binary or mis-encoded?)"
    skill.diagnostics.append(Diagnostic("SD107", Severity.ERROR, message, skill.path, line, column))


# --- bodies ------------------------------------------------------------------------------


MAX_BODY_READ = MAX_SKILL_BYTES
"""Most bytes of a SKILL.md ever read at once (a body is cut there, never read whole)."""


def _read_bytes(path: Path, offset: int, max_bytes: int | None) -> bytes:
    """Up to ``max_bytes`` (at most :data:`MAX_BODY_READ`) from ``offset``, under the one
    confinement rule (:mod:`skilldeck.core.confined`): a regular file inside its folder."""
    cap = MAX_BODY_READ if max_bytes is None else min(max_bytes, MAX_BODY_READ)
    return read_confined(path, path.parent, cap=cap, offset=offset).data


def read_body(skill: Skill, max_bytes: int | None = None) -> str:
    """The skill's body (after the frontmatter), read now from disk.

    BOM stripped, CRLF turned into LF, invalid UTF-8 replaced. A file without a parsed
    frontmatter gives its whole text.

    Args:
        skill: The skill.
        max_bytes: Read at most this many bytes of body (None: all).

    Raises:
        SkilldeckError: NOT_FOUND or PERMISSION_DENIED when the file cannot be read.
    """
    data = _read_bytes(skill.path, skill.body_offset, max_bytes)
    if skill.body_offset == 0 and data.startswith(_BOM):
        data = data[3:]
    final = max_bytes is None or len(data) < max_bytes
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=final)
    return text.replace("\r\n", "\n") if "\r" in text else text


def read_raw(skill: Skill) -> bytes:
    """The SKILL.md's bytes as stored (capped at :data:`MAX_BODY_READ`), for encoding checks.

    Raises:
        SkilldeckError: NOT_FOUND or PERMISSION_DENIED when the file cannot be read.
    """
    return _read_bytes(skill.path, 0, MAX_BODY_READ)


def read_source(skill: Skill) -> str:
    """The whole SKILL.md text, normalised like :func:`read_body` (capped at 4 MiB)."""
    data = _read_bytes(skill.path, 0, MAX_BODY_READ)
    if data.startswith(_BOM):
        data = data[3:]
    text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n") if "\r" in text else text
