"""Parse SKILL.md files: the YAML frontmatter only, never the body.

The frontmatter sits between two lines that are exactly ``---`` (trailing spaces allowed).
Reading streams the file in chunks and stops at the closing fence, so listing thousands of
skills never reads their bodies; :func:`read_body` reads a body on demand.

Every problem becomes a :class:`~skilldeck.core.model.Diagnostic` (codes ``SD1xx``) on the
returned skill; nothing here raises on bad input.

Speed: frontmatter of the common plain shape (``key: scalar`` lines, flow lists, one level
of block lists or mappings) is read by :func:`_fast_yaml`, which gives exactly what the YAML
loader gives and hands anything else to it. Measured (2-core reference machine, CPU time):
16 us instead of 48 us per file on the real 372-skill corpus (360 of them take it), 13 us
instead of 71 us per file on the benchmark's synthetic skills, i.e. about 0.6 s of CPU saved
per 10,000 cold-parsed skills. tests/core/test_fast_paths.py checks equality (hypothesis and
the whole corpus).

Codes:
    SD101 no frontmatter (the file does not start with a ``---`` line)
    SD102 the frontmatter fence is never closed
    SD103 YAML syntax error (with line and column)
    SD104 the frontmatter is empty or not a mapping
    SD105 duplicate key (the last value wins)
    SD106 bytes that are not UTF-8 (decoded with replacement)
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
    SD199 unexpected parser failure (a bug; the skill still shows)
"""

from __future__ import annotations

import codecs
import errno
import functools
import hashlib
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import yaml
import yaml.resolver
from yaml.nodes import MappingNode, Node, ScalarNode

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Diagnostic, Severity, Skill, Source, ToolRef, Triggers

MAX_SKILL_BYTES = 1024 * 1024
"""Files larger than this are reported (SD108); only their frontmatter is read."""

MAX_FRONTMATTER_BYTES = 256 * 1024
"""The closing fence must appear within this many bytes."""

MAX_RESOURCES = 200
"""Bound on the number of resource files listed per skill."""

MAX_RESOURCE_DEPTH = 6
"""Resource folders deeper than this are not listed."""

SKILL_FILE = "SKILL.md"

_CHUNK = 16384
_O_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_OPEN = re.compile(rb"---[ \t]*(?:\r?\n|\r?\Z)")
_CLOSE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)
_MAX_NODES = 20_000
_FM_LINE_OFFSET = 2  # the YAML text starts on file line 2, after the opening fence

try:
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - libyaml missing
    _BaseLoader = yaml.SafeLoader


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe loader that records duplicate mapping keys with their position."""

    duplicates: list[tuple[str, int, int]]

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _value in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.value == "<<":
                    continue
                key = (key_node.tag, key_node.value)
                if key in seen:
                    mark = key_node.start_mark
                    self.duplicates.append((str(key_node.value), mark.line, mark.column))
                seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


class _Head:
    """What was read from the start of a file."""

    __slots__ = ("data", "eof", "mtime_ns", "size")

    def __init__(self, data: bytes, eof: bool, size: int, mtime_ns: int) -> None:
        self.data = data
        self.eof = eof
        self.size = size
        self.mtime_ns = mtime_ns


def _diag(
    code: str,
    severity: Severity,
    message: str,
    path: Path,
    line: int | None = None,
    column: int | None = None,
) -> Diagnostic:
    return Diagnostic(code, severity, message, path, line, column)


def _read_head(path: str, known: os.stat_result | None = None) -> _Head:
    """Read from the start of ``path`` until the closing fence (bounded).

    ``known`` is a stat of the regular file just made by the caller (saves an fstat; if
    the file changes in between, the cache sees a newer mtime next time and parses again).
    """
    fd = os.open(path, _O_FLAGS)
    try:
        st = known if known is not None and stat.S_ISREG(known.st_mode) else os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        regular = stat.S_ISREG(st.st_mode)
        data = _read_full(fd, _CHUNK, regular)
        eof = len(data) < _CHUNK
        while not eof and len(data) < MAX_FRONTMATTER_BYTES:
            if _locate(data, eof) is not None:
                break
            more = _read_full(fd, _CHUNK * 4, regular)
            eof = len(more) < _CHUNK * 4
            data += more
    finally:
        os.close(fd)
    return _Head(data, eof, st.st_size, st.st_mtime_ns)


def _read_full(fd: int, size: int, regular: bool) -> bytes:
    """Read ``size`` bytes unless the end of file comes first (os.read may return less)."""
    chunk = os.read(fd, size)
    if len(chunk) == size or not chunk or regular:
        return chunk
    parts = [chunk]
    size -= len(chunk)
    while size > 0:  # a short read usually means end of file; make sure
        chunk = os.read(fd, size)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _locate(data: bytes, eof: bool) -> tuple[int, int, int, int] | None:
    """Find the fences: (yaml_start, yaml_end, body_offset, start) or None if undecided.

    Returns ``(-1, -1, -1, start)`` when the file has no opening fence and
    ``(start_of_yaml, -1, -1, start)`` when the closing fence is missing (only when
    ``eof``). ``start`` skips a UTF-8 BOM.
    """
    start = 3 if data.startswith(_BOM) else 0
    opening = _OPEN.match(data, start)
    if opening is None:
        return (-1, -1, -1, start)
    pos = opening.end()
    closing = _CLOSE.search(data, pos)
    if closing is None:
        return (pos, -1, -1, start) if eof else None
    end = closing.end()
    if end >= len(data):
        return (pos, closing.start(), end, start) if eof else None
    return (pos, closing.start(), end + 1, start)


def parse_skill_file(
    path: Path, *, source: Source = Source.EXPLICIT, root: Path | None = None
) -> Skill:
    """Parse one SKILL.md, reading only its frontmatter. Never raises.

    Args:
        path: The SKILL.md file (made absolute; not resolved, so symlinked folders keep
            the path the user sees).
        source: Where it was discovered.
        root: The discovery root (``rel_id`` is computed against it).

    Returns:
        A :class:`Skill` with parse diagnostics (``SD1xx``) and its resource listing.
    """
    path = Path(os.path.abspath(path))
    skill = parse_path(str(path), source=source, root=root, path_obj=path)
    skill.resources, skill.resources_truncated = list_resources(str(skill.base_dir))
    return skill


def parse_path(
    path: str,
    *,
    source: Source = Source.EXPLICIT,
    root: Path | None = None,
    path_obj: Path | None = None,
    rel_id: str | None = None,
    base_obj: Path | None = None,
    known: os.stat_result | None = None,
) -> Skill:
    """Parse the absolute path ``path`` without listing resources (discovery does that).

    ``path_obj``/``base_obj`` are ready-made Path objects of the file and its folder,
    ``known`` a stat of the file just made by the caller.
    """
    try:
        head: _Head | OSError = _read_head(path, known)
    except OSError as exc:
        head = exc
    return parse_read(
        path, head, source=source, root=root, path_obj=path_obj, rel_id=rel_id, base_obj=base_obj
    )


def read_head(path: str, known: os.stat_result | None = None) -> _Head | OSError:
    """The start of ``path`` up to its closing fence, or the error reading it (for
    :func:`parse_read`; discovery reads a batch of files, then parses them)."""
    try:
        return _read_head(path, known)
    except OSError as exc:
        return exc


def parse_read(
    path: str,
    head: _Head | OSError,
    *,
    source: Source = Source.EXPLICIT,
    root: Path | None = None,
    path_obj: Path | None = None,
    rel_id: str | None = None,
    base_obj: Path | None = None,
) -> Skill:
    """:func:`parse_path` of a file already read by :func:`read_head`."""
    p = path_obj or Path(path)
    if isinstance(head, OSError):
        exc = head
        skill = _empty_skill(p, source, root, rel_id, base_obj)
        reason = exc.strerror or exc.__class__.__name__
        skill.diagnostics.append(
            _diag("SD110", Severity.ERROR, f"cannot read {p.name}: {reason}", p)
        )
        _check_filename(skill)
        return skill
    return _parse_head(head, p, source, root, rel_id, base_obj)


def frontmatter_hash(path: str) -> tuple[str, int, int] | None:
    """``(content_hash, size, mtime_ns)`` of a file with a well-formed frontmatter, else None.

    Reads only up to the closing fence; lets the cache recognise a touched or body-only
    edited file without parsing its YAML again.
    """
    try:
        head = _read_head(path)
    except OSError:
        return None
    located = _locate(head.data, head.eof)
    if located is None or located[1] < 0 or head.size > MAX_SKILL_BYTES:
        return None
    body_offset = located[2]
    if b"\x00" in head.data:
        return None
    return hashlib.sha256(head.data[:body_offset]).hexdigest(), head.size, head.mtime_ns


def parse_bytes(
    data: bytes, path: Path, *, source: Source = Source.EXPLICIT, root: Path | None = None
) -> Skill:
    """Parse SKILL.md content given as bytes (no file access). Never raises."""
    head = _Head(data[: MAX_FRONTMATTER_BYTES + _CHUNK], True, len(data), 0)
    if len(data) > len(head.data):
        head.eof = False
    return _parse_head(head, Path(path), source, root)


def _empty_skill(
    path: Path,
    source: Source,
    root: Path | None,
    rel_id: str | None,
    base: Path | None = None,
) -> Skill:
    if base is None:
        base = path.parent
    return Skill(
        base.name,
        "",
        path,
        base,
        source,
        root,
        _rel_id(base, root) if rel_id is None else rel_id,
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
    if skill.path.name != SKILL_FILE and skill.path.name.lower() == "skill.md":
        skill.diagnostics.append(
            _diag(
                "SD109",
                Severity.WARNING,
                f"file is named {skill.path.name}; the standard name is {SKILL_FILE}",
                skill.path,
            )
        )


def _parse_head(
    head: _Head,
    path: Path,
    source: Source,
    root: Path | None,
    rel_id: str | None = None,
    base: Path | None = None,
) -> Skill:
    skill = _empty_skill(path, source, root, rel_id, base)
    skill.size = head.size
    skill.mtime_ns = head.mtime_ns
    try:
        _fill(skill, head)
    except Exception as exc:  # never raise on user input
        skill.diagnostics.append(
            _diag("SD199", Severity.ERROR, f"internal parser error: {exc!r}", path)
        )
    _check_filename(skill)
    return skill


def _fill(skill: Skill, head: _Head) -> None:
    path = skill.path
    data = head.data
    diags = skill.diagnostics
    if head.size > MAX_SKILL_BYTES:
        diags.append(
            _diag(
                "SD108",
                Severity.WARNING,
                f"file is {head.size} bytes, over the {MAX_SKILL_BYTES} byte cap; "
                "only its frontmatter was read",
                path,
            )
        )
    for bom in _WIDE_BOMS:
        if data.startswith(bom):
            diags.append(
                _diag(
                    "SD117",
                    Severity.ERROR,
                    "file is UTF-16 or UTF-32; save it as UTF-8",
                    path,
                    1,
                    1,
                )
            )
            skill.content_hash = hashlib.sha256(data[:_CHUNK]).hexdigest()
            return
    located = _locate(data, head.eof)
    if located is None:  # no closing fence within the bound
        nul = data.find(b"\x00")
        if nul >= 0:
            _nul_diag(skill, data, nul)
        diags.append(
            _diag(
                "SD114",
                Severity.ERROR,
                f"no closing '---' within the first {MAX_FRONTMATTER_BYTES} bytes",
                path,
                1,
                1,
            )
        )
        skill.content_hash = hashlib.sha256(data[:MAX_FRONTMATTER_BYTES]).hexdigest()
        return
    yaml_start, yaml_end, body_offset, start = located
    if yaml_start == -1:
        nul = data.find(b"\x00")
        if nul >= 0:
            _nul_diag(skill, data, nul)
        diags.append(
            _diag(
                "SD101",
                Severity.ERROR,
                "no frontmatter: the file must start with a '---' line",
                path,
                1,
                1,
            )
        )
        skill.content_hash = hashlib.sha256(data[:_CHUNK]).hexdigest()
        return
    if yaml_end == -1:
        nul = data.find(b"\x00")
        if nul >= 0:
            _nul_diag(skill, data, nul)
        diags.append(
            _diag(
                "SD102",
                Severity.ERROR,
                "the frontmatter is never closed by a '---' line",
                path,
                1,
                1,
            )
        )
        skill.content_hash = hashlib.sha256(data).hexdigest()
        return
    raw = data[yaml_start:yaml_end]
    skill.body_offset = body_offset
    skill.body_line = data.count(b"\n", 0, body_offset) + 1
    skill.content_hash = hashlib.sha256(data[:body_offset]).hexdigest()
    nul = data.find(b"\x00", start)
    if nul >= 0:
        _nul_diag(skill, data, nul)
    if b"\r\n" in raw:
        diags.append(_diag("SD116", Severity.INFO, "CRLF line endings (accepted)", path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = yaml_start + exc.start
        line = data.count(b"\n", 0, bad) + 1
        column = bad - (data.rfind(b"\n", 0, bad) + 1) + 1
        diags.append(
            _diag(
                "SD106",
                Severity.WARNING,
                "frontmatter is not valid UTF-8; bad bytes were replaced",
                path,
                line,
                column,
            )
        )
        text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    frontmatter = _load_yaml(skill, text)
    if frontmatter is None:
        return
    skill.frontmatter = frontmatter
    _extract(skill, frontmatter)


def _nul_diag(skill: Skill, data: bytes, pos: int) -> None:
    line = data.count(b"\n", 0, pos) + 1
    column = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    skill.diagnostics.append(
        _diag(
            "SD107",
            Severity.ERROR,
            "file contains NUL bytes (binary or mis-encoded?)",
            skill.path,
            line,
            column,
        )
    )


def _load_yaml(skill: Skill, text: str) -> dict[str, Any] | None:
    """Load the YAML text; diagnostics for errors, duplicates and non-mappings."""
    path = skill.path
    fast = _fast_yaml(text)
    if fast is not None:
        skill.field_lines = fast[1]
        return fast[0]
    loader = _Loader(text)
    loader.duplicates = []
    try:
        node = loader.get_single_node()
        if node is None:
            skill.diagnostics.append(
                _diag("SD104", Severity.ERROR, "the frontmatter is empty", path, 2, 1)
            )
            return None
        if isinstance(node, MappingNode):
            for key_node, _value in node.value:
                if isinstance(key_node, ScalarNode):
                    skill.field_lines.setdefault(
                        str(key_node.value), key_node.start_mark.line + _FM_LINE_OFFSET
                    )
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        line, column = _yaml_position(exc, text)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        message = f"YAML error: {problem}" + (f" ({context})" if context else "")
        skill.diagnostics.append(_diag("SD103", Severity.ERROR, message, path, line, column))
        return None
    except RecursionError:
        skill.diagnostics.append(
            _diag("SD115", Severity.ERROR, "frontmatter is nested too deeply", path, 2, 1)
        )
        return None
    finally:
        loader.dispose()
    for key, line0, col0 in sorted(loader.duplicates, key=lambda d: (d[1], d[2])):
        skill.diagnostics.append(
            _diag(
                "SD105",
                Severity.WARNING,
                f"duplicate key {key!r}: the last value wins",
                path,
                line0 + _FM_LINE_OFFSET,
                col0 + 1,
            )
        )
    if not isinstance(data, dict):
        kind = type(data).__name__
        skill.diagnostics.append(
            _diag(
                "SD104",
                Severity.ERROR,
                f"the frontmatter must be a mapping of fields, not a {kind}",
                path,
                2,
                1,
            )
        )
        return None
    if _too_big(data):
        skill.diagnostics.append(
            _diag(
                "SD115",
                Severity.ERROR,
                "frontmatter expands too much (aliases or recursion); ignored",
                path,
                2,
                1,
            )
        )
        return None
    return {sys.intern(k if isinstance(k, str) else str(k)): v for k, v in data.items()}


# --- fast path for plain frontmatter ----------------------------------------------------

_STR_TAG = "tag:yaml.org,2002:str"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FAST_UNSAFE = re.compile(
    "[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_UNSAFE_FIRST = frozenset("-?:,[]{}#&*!|>%@`")
_FLOW_SAFE = re.compile(r"\w[\w .+/()-]*")
_SMALL_INT = re.compile(r"0|[1-9][0-9]{0,8}")


_IMPLICIT: dict[str | None, list[tuple[str, re.Pattern[str]]]] = (
    yaml.resolver.Resolver.yaml_implicit_resolvers
)
_WILDCARD = _IMPLICIT.get(None, [])


@functools.lru_cache(maxsize=4096)
def _plain_key(key: str) -> str | None:
    """``key`` (one shared string object per distinct key) if YAML reads it as a string."""
    return sys.intern(key) if _tag(key) == _STR_TAG else None


def _tag(value: str) -> str:
    """The tag YAML's resolver gives a plain scalar (same rules, without the overhead)."""
    for tag, regexp in _IMPLICIT.get(value[0] if value else "", ()):
        if regexp.match(value):
            return tag
    for tag, regexp in _WILDCARD:
        if regexp.match(value):
            return tag
    return _STR_TAG


_MEMO_MAX = 64
_SCALARS: tuple[dict[str, tuple[bool, Any]], dict[str, tuple[bool, Any]]] = ({}, {})


def _fast_scalar(value: str, flow: bool) -> tuple[bool, Any]:
    """A single-line YAML scalar the fast path can read exactly like YAML, or (False, None).

    Short values recur across skills (licences, tags, tool names): their results, all
    immutable, are remembered and shared.
    """
    memo = _SCALARS[flow]
    found = memo.get(value)
    if found is not None:
        return found
    result = _read_scalar(value, flow)
    if len(value) <= _MEMO_MAX:
        if len(memo) > 50_000:
            memo.clear()
        memo[value] = result
    return result


def _read_scalar(value: str, flow: bool) -> tuple[bool, Any]:
    first = value[0]
    if first == '"':
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == '"' and '"' not in inner and "\\" not in inner:
            return True, inner
        return False, None
    if first == "'":
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == "'" and "'" not in inner:
            return True, inner
        return False, None
    if first in _UNSAFE_FIRST or ": " in value or " #" in value or value[-1] == ":":
        return False, None
    if flow and not _FLOW_SAFE.fullmatch(value):
        return False, None
    tag = _tag(value)
    if tag == _STR_TAG:
        return True, value
    if tag == _BOOL_TAG and value in ("true", "false", "True", "False"):
        return True, value[0] in "tT"
    if tag == _INT_TAG and _SMALL_INT.fullmatch(value):
        return True, int(value)
    return False, None


def _fast_value(value: str) -> tuple[bool, Any]:
    if value[0] == "[" and value[-1] == "]":
        inner = value[1:-1].strip(" ")
        if not inner:
            return True, []
        items: list[Any] = []
        for part in inner.split(","):
            part = part.strip(" ")
            if not part:
                return False, None
            ok, item = _fast_scalar(part, True)
            if not ok:
                return False, None
            items.append(item)
        return True, items
    return _fast_scalar(value, False)


_KEY_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


@functools.lru_cache(maxsize=4096)
def _line_key(raw: str) -> str | None:
    """The key of a ``key: value`` line (text before the first colon), if fast-path plain."""
    return _plain_key(raw) if _KEY_TEXT.fullmatch(raw) else None


_LINE_MEMO_MAX = 80
_LINES: dict[str, tuple[str, bool, Any]] = {}


def _fast_line(line: str) -> tuple[str, bool, Any] | None:
    """A ``key: value`` line without indentation: ``(key, True, value)``, ``(key, False,
    None)`` when the value is empty (a block follows), None when not fast-path simple.

    Flow lists come back as tuples (the caller copies them into lists). Short lines recur
    across skills (licences, tool lists, versions): their results are remembered.
    """
    found = _LINES.get(line)
    if found is not None:
        return found
    raw, colon, rest = line.partition(":")
    if not colon or (rest and rest[0] != " "):
        return None
    key = _line_key(raw)
    if key is None:
        return None
    value = rest.strip(" ")
    if not value:
        found = (key, False, None)
    else:
        ok, item = _fast_value(value)
        if not ok:
            return None
        found = (key, True, tuple(item) if type(item) is list else item)
    if len(line) <= _LINE_MEMO_MAX:
        if len(_LINES) > 20_000:
            _LINES.clear()
        _LINES[line] = found
    return found


def _fast_block(lines: list[str]) -> tuple[bool, Any]:
    """A block list of scalars or a one-level mapping of scalars."""
    items = [line for line in lines if line.strip(" ")]
    if not items:
        return False, None
    first = items[0]
    indent = len(first) - len(first.lstrip(" "))
    pad = first[:indent]
    for line in items:
        if not line.startswith(pad) or line[indent] == " ":
            return False, None
    if all(line.startswith("- ", indent) for line in items):
        out: list[Any] = []
        for line in items:
            value = line[indent + 2 :].strip(" ")
            if not value:
                return False, None
            ok, item = _fast_value(value)
            if not ok or isinstance(item, list):
                return False, None
            out.append(item)
        return True, out
    if indent == 0:
        return False, None
    mapping: dict[str, Any] = {}
    for line in items:
        parsed = _fast_line(line[indent:])
        if parsed is None or not parsed[1]:
            return False, None
        key, _inline, item = parsed
        if key in mapping:
            return False, None
        mapping[key] = list(item) if type(item) is tuple else item
    return True, mapping


def _fast_yaml(text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Read simple frontmatter without the YAML machinery; None when it is not simple.

    Simple means: top-level ``key: scalar`` lines, single-line quoted strings without
    escapes, flow lists of plain scalars, and one level of block lists or mappings of
    such scalars. The result equals what the YAML loader gives for the same text.
    """
    if text.isascii():
        # ASCII: printable means \x20-\x7e (no tab, no control character)
        if not text.replace("\n", "").isprintable():
            return None
    elif _FAST_UNSAFE.search(text) or "\t" in text:
        return None
    lines = text.split("\n")
    result: dict[str, Any] = {}
    field_lines: dict[str, int] = {}
    count = len(lines)
    memo = _LINES
    i = 0
    while i < count:
        line = lines[i]
        parsed = memo.get(line)
        if parsed is None:
            if not line.strip(" "):
                i += 1
                continue
            parsed = _fast_line(line)
            if parsed is None:
                return None
        key, inline, item = parsed
        if key in result:
            return None
        field_lines[key] = i + _FM_LINE_OFFSET
        if inline:
            result[key] = list(item) if type(item) is tuple else item
            i += 1
            continue
        j = i + 1
        while j < count:
            nxt = lines[j]
            if nxt and nxt[0] != " " and nxt[:2] != "- ":
                break
            j += 1
        ok, item = _fast_block(lines[i + 1 : j])
        if not ok:
            return None
        result[key] = item
        i = j
    if not result:
        return None
    return result, field_lines


def _yaml_position(exc: yaml.YAMLError, text: str) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return mark.line + _FM_LINE_OFFSET, mark.column + 1
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        line = text.count("\n", 0, position)
        column = position - (text.rfind("\n", 0, position) + 1)
        return line + _FM_LINE_OFFSET, column + 1
    return None, None


def _too_big(value: Any) -> bool:
    """True when walking ``value`` (aliases expanded) visits more than the node budget."""
    budget = _MAX_NODES
    stack = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
    return False


# --- field extraction -------------------------------------------------------------------


def _wrong_type(skill: Skill, key: str, expected: str, value: Any) -> None:
    skill.diagnostics.append(
        _diag(
            "SD112",
            Severity.WARNING,
            f"{key!r} should be {expected}, not {type(value).__name__}",
            skill.path,
            skill.field_lines.get(key.split(".")[0]),
            None,
        )
    )


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, dict | list | tuple | set | bytes):
        return None
    return str(value)


_PRIORITY_TEXT = re.compile(r"\s*[-+]?\d{1,9}\s*")
_ALLOWED_REFS: dict[tuple[str, ...], tuple[ToolRef, ...]] = {}


def _allowed_refs(allowed: tuple[str, ...]) -> tuple[ToolRef, ...]:
    """Tool references implied by ``allowed-tools`` alone (frozen, shared between skills)."""
    refs = _ALLOWED_REFS.get(allowed)
    if refs is None:
        refs = tuple(_add_allowed_refs([], allowed))
        if len(_ALLOWED_REFS) > 10_000:
            _ALLOWED_REFS.clear()
        _ALLOWED_REFS[allowed] = refs
    return refs


def _add_allowed_refs(tools: list[ToolRef], allowed: tuple[str, ...]) -> list[ToolRef]:
    known = {t.name for t in tools}
    for pattern in allowed:
        tool_name = pattern.split("(", 1)[0].strip()
        if tool_name and tool_name not in known:
            known.add(tool_name)
            tools.append(ToolRef(tool_name, "", False, "allowed-tools"))
    return tools


def _extract(skill: Skill, fm: dict[str, Any]) -> None:
    get = fm.get
    name = get("name")
    if isinstance(name, str) and (stripped := name.strip()):
        skill.name = stripped
    else:
        _extract_name(skill, name)
    description = get("description")
    if isinstance(description, str):
        skill.description = description.strip()
    elif description is not None:
        _wrong_type(skill, "description", "a string", description)
        text = _scalar_text(description)
        skill.description = text.strip() if text else ""
    meta = get("metadata")
    if not isinstance(meta, dict):
        meta = None
    if meta is not None or "version" in fm or "author" in fm or "tags" in fm:
        _extract_meta(skill, fm, meta)
    value = get("license")
    if value is not None:
        text = _scalar_text(value)
        if text is None:
            _wrong_type(skill, "license", "a string", value)
        else:
            skill.license = text
    value = get("compatibility")
    if value is not None:
        text = _scalar_text(value)
        if text is None:
            _wrong_type(skill, "compatibility", "a string", value)
        else:
            skill.compatibility = text
    raw_tools = get("allowed-tools")
    if raw_tools is not None:
        skill.allowed_tools_raw = raw_tools
        if not isinstance(raw_tools, str | list):
            _wrong_type(skill, "allowed-tools", "a string or a list", raw_tools)
        skill.allowed_tools = split_allowed_tools(raw_tools)
    if "triggers" in fm:
        skill.triggers = _triggers(skill, fm["triggers"])
    tools_value = get("tools")
    if tools_value is None:
        if skill.allowed_tools:
            skill.tools = _allowed_refs(skill.allowed_tools)
    else:
        skill.tools = tuple(_add_allowed_refs(_tools(skill, tools_value), skill.allowed_tools))
    priority = get("priority")
    if priority is not None:
        if isinstance(priority, int) and not isinstance(priority, bool):
            skill.priority = priority
        elif isinstance(priority, str) and _PRIORITY_TEXT.fullmatch(priority):
            skill.priority = int(priority)
        else:
            _wrong_type(skill, "priority", "an integer", priority)
    if "disable-model-invocation" in fm or "hide-from-discovery" in fm:
        skill.hidden = _truthy(get("disable-model-invocation")) or _truthy(
            get("hide-from-discovery")
        )


def _extract_name(skill: Skill, name: Any) -> None:
    """``name`` when it is not a non-blank string."""
    name_text = _scalar_text(name)
    if name_text is not None and name_text.strip():
        skill.name = name_text.strip()
        _wrong_type(skill, "name", "a string", name)
        return
    if name is None or (isinstance(name, str) and not name.strip()):
        message = f"no 'name' field; using the folder name {skill.base_dir.name!r}"
    else:
        message = f"'name' is a {type(name).__name__}; using the folder name"
    skill.diagnostics.append(
        _diag("SD111", Severity.WARNING, message, skill.path, skill.field_lines.get("name"))
    )


def _extract_meta(skill: Skill, fm: dict[str, Any], meta: dict[str, Any] | None) -> None:
    """``version``, ``author`` and ``tags``, top-level or under ``metadata``."""
    key: str
    for attr in ("version", "author"):
        if attr in fm:
            key, value = attr, fm[attr]
        elif meta is not None and attr in meta:
            key, value = f"metadata.{attr}", meta[attr]
        else:
            continue
        if value is None:
            continue
        if isinstance(value, dict) and attr == "author":
            value = value.get("name")
        text = _scalar_text(value)
        if text is None:
            _wrong_type(skill, key, "a string", value)
        elif attr == "version":
            skill.version = text
        else:
            skill.author = text
    if "tags" in fm:
        key, tags = "tags", fm["tags"]
    elif meta is not None and "tags" in meta:
        key, tags = "metadata.tags", meta["tags"]
    else:
        return
    if tags is not None:
        if isinstance(tags, str):
            skill.tags = tuple(dict.fromkeys(t for t in _SEPARATORS.split(tags) if t))
        elif isinstance(tags, list):
            skill.tags = tuple(dict.fromkeys(t for t in map(_scalar_text, tags) if t))
        else:
            _wrong_type(skill, key, "a list of strings", tags)


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1")


_SEPARATORS = re.compile(r"[,\s]+")


def split_allowed_tools(value: object) -> tuple[str, ...]:
    """Normalise ``allowed-tools`` into tool patterns.

    Accepts a space- or comma-separated string or a list (whose items may themselves be
    separated). Separators inside parentheses are kept, so ``Bash(git log:*)`` stays one
    pattern. Duplicates are dropped, order kept.
    """
    items: list[str] = []
    if isinstance(value, str):
        found = _SPLIT.get(value)
        if found is None:
            found = _split_allowed_text(value)
            if len(value) <= 256:
                if len(_SPLIT) > 10_000:
                    _SPLIT.clear()
                _SPLIT[value] = found
        return found
    elif isinstance(value, list | tuple):
        for item in value:
            text = _scalar_text(item)
            if text:
                items.extend(_split_patterns_fast(text))
    return tuple(dict.fromkeys(t for t in (i.strip() for i in items) if t))


_SPLIT: dict[str, tuple[str, ...]] = {}


def _split_allowed_text(value: str) -> tuple[str, ...]:
    if "(" not in value and "[" not in value and "{" not in value:
        return tuple(dict.fromkeys(t for t in _SEPARATORS.split(value) if t))
    items = _split_patterns_fast(value)
    return tuple(dict.fromkeys(t for t in (i.strip() for i in items) if t))


_PAREN_TOKEN = re.compile(r"(?:\([^()\[\]{}]*\)|[^\s,()\[\]{}])+")


def _split_patterns_fast(text: str) -> list[str]:
    """:func:`_split_patterns` for the usual case of flat, balanced parentheses."""
    if any(c in text for c in "[]{}") or text.count("(") != text.count(")"):
        return _split_patterns(text)
    tokens = _PAREN_TOKEN.findall(text)
    if sum(t.count("(") for t in tokens) != text.count("("):
        return _split_patterns(text)  # nested or stray parentheses
    return tokens


def _split_patterns(text: str) -> list[str]:
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and (char == "," or char.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        out.append("".join(current))
    return out


def _str_list(skill: Skill, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(s.strip() for s in value.split(",") if s.strip())
    if isinstance(value, list):
        items = [_scalar_text(v) for v in value]
        if any(i is None for i in items):
            _wrong_type(skill, key, "a list of strings", value)
        return tuple(dict.fromkeys(i.strip() for i in items if i and i.strip()))
    _wrong_type(skill, key, "a list of strings", value)
    return ()


def _triggers(skill: Skill, value: Any) -> Triggers:
    if value is None:
        return Triggers()
    if isinstance(value, list | str):
        return Triggers(keywords=_str_list(skill, "triggers", value))
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in value if k not in ("keywords", "verbs", "patterns"))
        if unknown:
            skill.diagnostics.append(
                _diag(
                    "SD112",
                    Severity.WARNING,
                    f"'triggers' has unknown keys: {', '.join(unknown)}",
                    skill.path,
                    skill.field_lines.get("triggers"),
                )
            )
        return Triggers(
            keywords=_str_list(skill, "triggers.keywords", value.get("keywords")),
            verbs=_str_list(skill, "triggers.verbs", value.get("verbs")),
            patterns=_str_list(skill, "triggers.patterns", value.get("patterns")),
        )
    _wrong_type(skill, "triggers", "a mapping or a list", value)
    return Triggers()


def _tools(skill: Skill, value: Any) -> list[ToolRef]:
    refs: list[ToolRef] = []
    if value is None:
        return refs
    if isinstance(value, str):
        return [ToolRef(name) for name in split_allowed_tools(value)]
    entries: list[Any]
    if isinstance(value, dict):
        entries = []
        for key, spec in value.items():
            if isinstance(spec, dict):
                entries.append({"name": key, **spec})
            else:
                entries.append({"name": key, "purpose": spec})
    elif isinstance(value, list):
        entries = value
    else:
        _wrong_type(skill, "tools", "a list", value)
        return refs
    bad = False
    for entry in entries:
        if isinstance(entry, str) and entry.strip():
            refs.append(ToolRef(entry.strip()))
        elif isinstance(entry, dict) and _scalar_text(entry.get("name")):
            purpose = _scalar_text(entry.get("purpose")) or ""
            required = entry.get("required", True)
            if not isinstance(required, bool):
                required = _truthy(required)
            refs.append(ToolRef(str(entry["name"]).strip(), purpose.strip(), required, "tools"))
        else:
            bad = True
    if bad:
        skill.diagnostics.append(
            _diag(
                "SD112",
                Severity.WARNING,
                "'tools' entries should be names or mappings with a 'name'",
                skill.path,
                skill.field_lines.get("tools"),
            )
        )
    return refs


# --- resources ------------------------------------------------------------------------


def list_resources(
    base_dir: str,
    entries: list[os.DirEntry[str]] | None = None,
    limit: int = MAX_RESOURCES,
    max_depth: int = MAX_RESOURCE_DEPTH,
    stamps: list[tuple[str, int]] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Files under ``base_dir`` other than the SKILL.md, relative POSIX paths, sorted.

    Hidden entries, folders starting with ``_`` and symlinked folders leading outside the
    skill are skipped; at most ``limit`` files and ``max_depth`` levels are listed.

    Args:
        base_dir: The skill folder.
        entries: Its already scanned entries, when the caller has them.
        limit: Bound on the number of files.
        max_depth: Bound on folder depth.
        stamps: When given, receives ``(subfolder relative to base_dir, mtime_ns)`` for
            every subfolder the listing read (the cache re-checks them).

    Returns:
        ``(paths, truncated)``.
    """
    if entries is not None:
        flat: list[str] = []
        for entry in entries:
            name = entry.name
            if name[0] == "." or name.lower() == "skill.md":
                continue
            try:
                if entry.is_dir():
                    break
            except OSError:
                continue
            flat.append(name)
        else:
            flat.sort()
            if len(flat) > limit:
                return tuple(flat[:limit]), True
            return tuple(flat), False
    walk = _Walk(base_dir, limit, max_depth, stamps)
    walk.folder(base_dir, "", 0, list(entries) if entries is not None else None)
    walk.out.sort()
    return tuple(walk.out), walk.truncated


class _Walk:
    """State of one resource listing (a class, not a closure: no reference cycle is left
    behind for the garbage collector, which discovery pauses)."""

    __slots__ = (
        "base_dir",
        "base_real",
        "limit",
        "max_depth",
        "out",
        "stamps",
        "truncated",
        "visited",
    )

    def __init__(
        self, base_dir: str, limit: int, max_depth: int, stamps: list[tuple[str, int]] | None
    ) -> None:
        self.base_dir = base_dir
        self.limit = limit
        self.max_depth = max_depth
        self.stamps = stamps
        self.out: list[str] = []
        self.truncated = False
        self.base_real = ""
        self.visited: set[str] = set()

    def folder(
        self, folder: str, prefix: str, depth: int, items: list[os.DirEntry[str]] | None
    ) -> None:
        if items is None:
            try:
                with os.scandir(folder) as it:
                    items = list(it)
            except OSError:
                return
        if len(items) > 1:
            items.sort(key=_entry_name)
        out = self.out
        for entry in items:
            name = entry.name
            if name[0] == "." or (depth == 0 and name.lower() == "skill.md"):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if name[0] == "_" or depth + 1 >= self.max_depth:
                    continue
                if entry.is_symlink():
                    if not self.base_real:
                        self.base_real = os.path.realpath(self.base_dir)
                    real = os.path.realpath(entry.path)
                    if real in self.visited or not real.startswith(self.base_real + os.sep):
                        continue
                    self.visited.add(real)
                if self.stamps is not None:
                    try:
                        self.stamps.append((prefix + name, entry.stat().st_mtime_ns))
                    except OSError:
                        self.stamps.append((prefix + name, -1))
                self.folder(entry.path, prefix + name + "/", depth + 1, None)
                if self.truncated:
                    return
            else:
                if len(out) >= self.limit:
                    self.truncated = True
                    return
                out.append(prefix + name)


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


# --- bodies ------------------------------------------------------------------------------


def _normalise(data: bytes) -> str:
    if data.startswith(_BOM):
        data = data[3:]
    text = data.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text


def _read_bytes(path: Path, offset: int, max_bytes: int | None) -> bytes:
    try:
        with open(path, "rb") as handle:
            if offset:
                handle.seek(offset)
            return handle.read() if max_bytes is None else handle.read(max_bytes)
    except FileNotFoundError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path} no longer exists") from exc
    except PermissionError as exc:
        raise SkilldeckError(ErrorCode.PERMISSION_DENIED, f"cannot read {path}") from exc
    except IsADirectoryError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path} is a folder") from exc
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"cannot read {path}: {exc.strerror or exc}"
        ) from exc


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


def read_source(skill: Skill) -> str:
    """The whole SKILL.md text, normalised like :func:`read_body` (capped at 4 MiB)."""
    return _normalise(_read_bytes(skill.path, 0, 4 * MAX_SKILL_BYTES))
