"""Data model shared by every part of Skilldeck: skills, diagnostics, sources.

Everything here is plain data. Parsing lives in :mod:`skilldeck.core.parse`, discovery in
:mod:`skilldeck.core.discovery`; the faces (CLI, TUI, MCP server) only read these types.
"""

from __future__ import annotations

import datetime
import functools
import io
import pickle
import re
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard


class Severity(StrEnum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Sort key: errors first."""
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Source(StrEnum):
    """Where a skill was discovered; later members have higher precedence."""

    BUNDLED = "bundled"
    USER = "user"
    PROJECT = "project"
    EXPLICIT = "explicit"

    @property
    def rank(self) -> int:
        """Precedence: a higher rank wins a name clash."""
        return _SOURCE_RANK[self]


_SOURCE_RANK = {source: rank for rank, source in enumerate(Source)}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about a skill: a parse error, a validation failure or a lint hint.

    Attributes:
        code: Stable identifier such as ``SD101`` (parse), ``SV201`` (validate), ``SL301``.
        severity: error, warning or info.
        message: One sentence for a person.
        path: The file the finding is about (usually the SKILL.md).
        line: 1-based line in ``path``, when known.
        column: 1-based column, when known.
    """

    code: str
    severity: Severity
    message: str
    path: Path | None = None
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by the CLI, the MCP server and the cache."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "path": str(self.path) if self.path else None,
            "line": self.line,
            "column": self.column,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnostic:
        """Inverse of :meth:`to_dict`."""
        return cls(
            code=str(data["code"]),
            severity=Severity(data["severity"]),
            message=str(data["message"]),
            path=Path(data["path"]) if data.get("path") else None,
            line=data.get("line"),
            column=data.get("column"),
        )


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A tool a skill refers to.

    Attributes:
        name: Tool name as an agent calls it (``Bash``, ``github.create_issue``).
        purpose: Why the skill needs it (free text, may be empty).
        required: Whether the skill cannot work without it.
        origin: ``tools`` (the ``tools:`` list) or ``allowed-tools``.
    """

    name: str
    purpose: str = ""
    required: bool = True
    origin: str = "tools"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "purpose": self.purpose,
            "required": self.required,
            "origin": self.origin,
        }


@dataclass(frozen=True, slots=True)
class Triggers:
    """Explicit activation hints from the ``triggers`` frontmatter field."""

    keywords: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keywords or self.verbs or self.patterns)

    def to_dict(self) -> dict[str, list[str]]:
        """JSON-ready form."""
        return {
            "keywords": list(self.keywords),
            "verbs": list(self.verbs),
            "patterns": list(self.patterns),
        }


_NO_TRIGGERS = Triggers()

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'`])")


def brief_of(description: str, limit: int = 160) -> str:
    """First sentence of a description, cut at ``limit`` characters with an ellipsis."""
    text = " ".join(description.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


class _Packable:
    """The slot where a :class:`PackedSkill` keeps its cache record (not a field)."""

    __slots__ = ("_packed",)
    _packed: tuple[Any, ...] | None


@dataclass(slots=True)
class Skill(_Packable):
    """One discovered skill: its metadata (tier 1) and where to find the rest.

    The body is never held here: read it with :func:`skilldeck.core.parse.read_body`.

    Attributes:
        name: The ``name`` field, or the folder name when the field is missing or unusable.
        description: The ``description`` field ('' when missing).
        path: Absolute path of the SKILL.md file.
        base_dir: Absolute path of the skill folder (``path.parent``).
        source: Where it was discovered.
        root: The discovery root it was found under.
        rel_id: ``base_dir`` relative to ``root`` in POSIX form (``.`` for a root that is
            itself a skill); the id used by eval files.
        frontmatter: The parsed YAML mapping ({} when unparseable).
        field_lines: 1-based line of each top-level frontmatter key in the file.
        body_line: 1-based line where the body starts.
        body_offset: Byte offset where the body starts in the raw file.
        version, tags, author: From top level or under ``metadata``.
        license, compatibility: Spec fields (None when absent).
        allowed_tools: Normalised tool patterns from ``allowed-tools``.
        allowed_tools_raw: The field exactly as written (string, list or None), for lint.
        triggers: Activation hints.
        tools: Tool references from ``tools`` and ``allowed-tools``.
        priority: Tie-breaker in search (higher first), default 0.
        hidden: ``disable-model-invocation`` or ``hide-from-discovery``: not listed to models.
        enabled: False when the governance registry disables it.
        owner: Owner from the governance registry, if any.
        tool_validation: ``strict``, ``warn`` or ``ignore`` for missing tools, from the
            frontmatter (``tool-validation``) or the registry; None: the settings default.
        shadowed_by: SKILL.md path of the skill that wins the name clash, if this one loses.
        shadow_reason: One sentence saying why it is shadowed.
        resources: Resource files relative to ``base_dir`` (POSIX), bounded in count.
        resources_truncated: True when the resource listing hit its bound.
        mtime_ns, size: Of the SKILL.md file.
        content_hash: sha256 hex of the raw SKILL.md bytes (frontmatter hash when the
            file was too large to hash whole).
        diagnostics: Parse and validation findings (lint findings are computed separately).

    A skill rebuilt from the metadata cache (:func:`skilldeck.core.cache.skill_from_record`)
    is a :class:`PackedSkill` until one of its :data:`DETAILS` is read or written: those
    stay unset and the cache record is kept (in ``_packed``); they are unpacked together
    (blocks of rows are decoded as a whole, see :func:`unpack_details`).
    """

    name: str
    description: str
    path: Path
    base_dir: Path
    source: Source = Source.EXPLICIT
    root: Path | None = None
    rel_id: str = "."
    frontmatter: dict[str, Any] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)
    body_line: int = 1
    body_offset: int = 0
    version: str | None = None
    tags: tuple[str, ...] = ()
    author: str | None = None
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: tuple[str, ...] = ()
    allowed_tools_raw: Any = None
    triggers: Triggers = _NO_TRIGGERS
    tools: tuple[ToolRef, ...] = ()
    priority: int = 0
    hidden: bool = False
    enabled: bool = True
    owner: str | None = None
    tool_validation: str | None = None
    shadowed_by: Path | None = None
    shadow_reason: str = ""
    resources: tuple[str, ...] = ()
    resources_truncated: bool = False
    mtime_ns: int = 0
    size: int = 0
    content_hash: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def brief(self) -> str:
        """First sentence of the description."""
        return brief_of(self.description)

    @property
    def valid(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def shadowed(self) -> bool:
        """True when another skill with the same name wins."""
        return self.shadowed_by is not None

    @property
    def visible_to_models(self) -> bool:
        """Listed to models: enabled, not hidden, not shadowed and valid."""
        return self.enabled and not self.hidden and not self.shadowed and self.valid

    @property
    def errors(self) -> list[Diagnostic]:
        """Error diagnostics only."""
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        """Warning diagnostics only."""
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of all referenced tools, deduplicated, in order."""
        return tuple(dict.fromkeys(t.name for t in self.tools))

    def summary_dict(self) -> dict[str, Any]:
        """The ``list`` record: what a listing needs, JSON-ready."""
        return {
            "name": self.name,
            "description": self.description,
            "brief": self.brief,
            "path": str(self.path),
            "base_dir": str(self.base_dir),
            "source": self.source.value,
            "rel_id": self.rel_id,
            "shadowed_by": str(self.shadowed_by) if self.shadowed_by else None,
            "shadow_reason": self.shadow_reason or None,
            "enabled": self.enabled,
            "hidden": self.hidden,
            "valid": self.valid,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
        }

    def to_dict(self) -> dict[str, Any]:
        """The full record (``show``), JSON-ready."""
        data = self.summary_dict()
        data.update(
            {
                "version": self.version,
                "tags": list(self.tags),
                "author": self.author,
                "owner": self.owner,
                "license": self.license,
                "compatibility": self.compatibility,
                "allowed_tools": list(self.allowed_tools),
                "allowed_tools_raw": self.allowed_tools_raw,
                "triggers": self.triggers.to_dict(),
                "tools": [t.to_dict() for t in self.tools],
                "priority": self.priority,
                "resources": list(self.resources),
                "resources_truncated": self.resources_truncated,
                "mtime_ns": self.mtime_ns,
                "size": self.size,
                "content_hash": self.content_hash,
                "frontmatter": _jsonable(self.frontmatter),
                "diagnostics": [d.to_dict() for d in self.diagnostics],
            }
        )
        return data


_PICKLE_TYPES = {
    ("datetime", "date"): datetime.date,
    ("datetime", "datetime"): datetime.datetime,
    ("datetime", "time"): datetime.time,
    ("datetime", "timedelta"): datetime.timedelta,
    ("datetime", "timezone"): datetime.timezone,
}


class SafeUnpickler(pickle.Unpickler):
    """Unpickles builtin data and ``datetime`` values (YAML timestamps) only: a foreign
    pickle cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        """Refuse every class but the ``datetime`` ones."""
        try:
            return _PICKLE_TYPES[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"forbidden class {module}.{name}") from None


DETAILS = (
    "frontmatter",
    "field_lines",
    "body_line",
    "body_offset",
    "version",
    "tags",
    "author",
    "license",
    "compatibility",
    "allowed_tools",
    "allowed_tools_raw",
    "triggers",
    "tools",
)
"""The :class:`Skill` fields a skill rebuilt from the metadata cache keeps packed until
one of them is read (a listing needs none of them)."""


@functools.lru_cache(maxsize=50_000)
def shared_tool(row: tuple[Any, ...]) -> ToolRef:
    """The ToolRef of ``(name, purpose, required, origin)``, shared between skills (frozen,
    so cheaper to share than to build for each)."""
    return ToolRef(*row)


def shared_triggers(row: tuple[Any, ...]) -> Triggers:
    """The Triggers of ``(keywords, verbs, patterns)``, shared between skills too."""
    return _shared_triggers(row) if any(row) else _NO_TRIGGERS


@functools.lru_cache(maxsize=50_000)
def _shared_triggers(row: tuple[Any, ...]) -> Triggers:
    return Triggers(*row)


def _detail_defaults() -> tuple[Any, ...]:
    """What a packed skill gets when its row does not decode (fresh mutable values)."""
    return ({}, {}, 1, 0, None, (), None, None, None, (), None, _NO_TRIGGERS, ())


DetailRow = tuple[Any, ...]
"""A skill's :data:`DETAILS` as plain data (tools and triggers as rows)."""


def detail_row(skill: Skill) -> DetailRow:
    """The :data:`DETAILS` of ``skill`` as plain data, for :func:`pack_block`."""
    trig = skill.triggers
    return (
        skill.frontmatter,
        skill.field_lines,
        skill.body_line,
        skill.body_offset,
        skill.version,
        skill.tags,
        skill.author,
        skill.license,
        skill.compatibility,
        skill.allowed_tools,
        skill.allowed_tools_raw,
        (trig.keywords, trig.verbs, trig.patterns),
        tuple((t.name, t.purpose, t.required, t.origin) for t in skill.tools),
    )


_COUNT = 4
"""A block starts with its row count (4 bytes), then the pickled list of rows."""


def pack_block(rows: list[DetailRow]) -> bytes | None:
    """The detail rows of many skills as one block; None when they cannot be pickled
    (nested too deep)."""
    try:
        data = pickle.dumps(rows, pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, RecursionError, TypeError, ValueError):
        return None
    return len(rows).to_bytes(_COUNT, "big") + data


def block_size(block: bytes) -> int:
    """How many rows a :func:`pack_block` block holds."""
    return int.from_bytes(block[:_COUNT], "big")


def unpack_block(block: bytes) -> list[Any]:
    """The rows of a block ([] for one that does not decode; rows are not checked)."""
    stream = io.BytesIO(block)
    stream.seek(_COUNT)
    try:
        rows = SafeUnpickler(stream).load()
    except Exception:  # a foreign or damaged block: nothing to show rather than a crash
        return []
    return rows if type(rows) is list else []


_BLOCKS: dict[int, tuple[bytes, list[Any]]] = {}
_BLOCKS_LOCK = threading.Lock()
_BLOCKS_KEPT = 16
"""Recently decoded blocks (skills of one block are usually read one after the other)."""


def _block_row(block: bytes, item: int) -> Any:
    """Row ``item`` of ``block``: each decoded row is given out once (its values are
    mutable and become one skill's), a second ask decodes the block again."""
    with _BLOCKS_LOCK:
        hit = _BLOCKS.get(id(block))
        if hit is None or hit[0] is not block:
            if len(_BLOCKS) >= _BLOCKS_KEPT:
                _BLOCKS.clear()
            hit = _BLOCKS[id(block)] = (block, unpack_block(block))
        rows = hit[1]
        if not 0 <= item < len(rows):
            return None
        row = rows[item]
        rows[item] = None
    if row is None:
        rows = unpack_block(block)
        row = rows[item] if item < len(rows) else None
    return row


def _well_formed(row: Any) -> TypeGuard[tuple[Any, ...]]:
    """True when ``row`` has the shape :func:`detail_row` gives."""
    return (
        type(row) is tuple
        and len(row) == len(DETAILS)
        and type(row[0]) is dict
        and type(row[1]) is dict
        and type(row[2]) is int
        and type(row[3]) is int
        and (row[4] is None or type(row[4]) is str)
        and type(row[5]) is tuple
        and (row[6] is None or type(row[6]) is str)
        and (row[7] is None or type(row[7]) is str)
        and (row[8] is None or type(row[8]) is str)
        and type(row[9]) is tuple
        and type(row[11]) is tuple
        and type(row[12]) is tuple
    )


def unpack_details(packed: tuple[Any, ...]) -> tuple[Any, ...]:
    """The :data:`DETAILS` values of a packed skill (see :attr:`Skill._packed`): its last
    two items are a block and an index in it, or None and the row itself. A row that does
    not decode or has the wrong shape gives the defaults."""
    block, item = packed[-2], packed[-1]
    row = item if block is None else _block_row(block, item) if type(item) is int else None
    if not _well_formed(row):
        return _detail_defaults()
    try:
        triggers = shared_triggers(row[11])
        tools = tuple([shared_tool(each) for each in row[12]])
    except (TypeError, ValueError):
        return _detail_defaults()
    return (*row[:11], triggers, tools)


_GETTERS: dict[str, Any] = {name: Skill.__dict__[name].__get__ for name in DETAILS}
_SET_CLASS: Any = object.__setattr__


class PackedSkill(Skill):
    """A skill rebuilt from the metadata cache whose :data:`DETAILS` are not set yet: the
    first read or write of one unpacks them all, and it becomes a plain :class:`Skill`.

    Only this class pays for the hooks; plain skills read and write their slots directly.
    """

    __slots__ = ()

    def unpack(self) -> None:
        """Set every detail from the packed record and become a plain :class:`Skill`."""
        with _UNPACKING:
            packed = self._packed
            if packed is not None:
                values = unpack_details(packed)
                # Readers of an unset slot meanwhile wait for the lock (_Unpacking).
                _SET_CLASS(self, "__class__", _Unpacking)
                (
                    self.frontmatter,
                    self.field_lines,
                    self.body_line,
                    self.body_offset,
                    self.version,
                    self.tags,
                    self.author,
                    self.license,
                    self.compatibility,
                    self.allowed_tools,
                    self.allowed_tools_raw,
                    self.triggers,
                    self.tools,
                ) = values
                self._packed = None
            _SET_CLASS(self, "__class__", Skill)

    if not TYPE_CHECKING:  # type checkers keep seeing Skill's fields only

        def __getattr__(self, name: str) -> Any:
            """Called for slots not set: the details of a packed skill."""
            get = _GETTERS.get(name)
            if get is None:
                if name == "_packed":  # not set yet (a copy being made)
                    return None
                raise AttributeError(f"'Skill' object has no attribute {name!r}")
            self.unpack()
            return get(self, Skill)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _GETTERS:
            self.unpack()  # the other details keep their packed values
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        self.unpack()
        return self == other

    def __repr__(self) -> str:
        self.unpack()
        return repr(self)


_UNPACKING = threading.Lock()


class _Unpacking(Skill):
    """A :class:`PackedSkill` while :meth:`PackedSkill.unpack` sets its slots (plain stores,
    no hook); a thread reading a slot not set yet waits for it."""

    __slots__ = ()

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            with _UNPACKING:
                pass
            return object.__getattribute__(self, name)


def _jsonable(value: Any) -> Any:
    """Turn YAML values (dates, sets, odd keys) into JSON-safe ones."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


@dataclass(slots=True)
class Catalog:
    """The result of discovery: every skill found, winners and shadowed alike.

    Attributes:
        skills: All skills in precedence order (lowest source first, deterministic within
            a source).
        diagnostics: Findings not tied to one skill (unreadable root, symlink loop, …).
        roots: The roots that were scanned, with their source.
    """

    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    roots: list[tuple[Path, Source]] = field(default_factory=list)

    def active(self) -> list[Skill]:
        """Skills that win their name (not shadowed), sorted by name."""
        return sorted((s for s in self.skills if not s.shadowed), key=lambda s: s.name)

    def get(self, name: str) -> Skill | None:
        """The winning skill with this name, or None."""
        for skill in self.skills:
            if skill.name == name and not skill.shadowed:
                return skill
        return None

    def by_path(self, path: Path) -> Skill | None:
        """The skill whose SKILL.md or folder is ``path``."""
        for skill in self.skills:
            if path in (skill.path, skill.base_dir):
                return skill
        return None

    def names(self) -> list[str]:
        """Names of the winning skills, sorted."""
        return [s.name for s in self.active()]
