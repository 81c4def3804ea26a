"""Data model shared by every part of Skilldeck: skills, diagnostics, sources.

Everything here is plain data. Parsing lives in :mod:`skilldeck.core.discovery.frontmatter`,
discovery in :mod:`skilldeck.core.discovery`; the faces (CLI, TUI, MCP server) only read
these types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


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
        """JSON-ready form used by the CLI, the MCP server and the local store."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "path": str(self.path) if self.path else None,
            "line": self.line,
            "column": self.column,
        }


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A tool a skill refers to.

    Attributes:
        name: Tool name as an agent calls it (``Bash``, ``github.create_issue``).
        purpose: Why the skill needs it (free text, may be empty).
        required: Whether the skill cannot work without it (false unless the entry says
            ``required: true``: a missing optional tool leaves the skill complete).
        origin: ``tools`` (the ``tools:`` list) or ``allowed-tools``.
    """

    name: str
    purpose: str = ""
    required: bool = False
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


PARAMETER_TYPES = ("string", "number", "integer", "boolean", "array", "object")
"""The ``type`` values a ``parameters`` entry may have (JSON Schema's)."""


@dataclass(frozen=True, slots=True)
class Parameter:
    """One entry of the ``parameters`` frontmatter field: an input the skill takes.

    Attributes:
        name: How the input is called (a prompt argument of the same name over MCP).
        description: What to give.
        type: One of :data:`PARAMETER_TYPES`.
        required: Whether the skill needs it.
        default: The value used when it is not given (None: no default).
    """

    name: str
    description: str = ""
    type: str = "string"
    required: bool = False
    default: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "required": self.required,
            "default": _jsonable(self.default),
        }


@dataclass(frozen=True, slots=True)
class Example:
    """One entry of the ``examples`` frontmatter field: a request and what the skill does.

    Attributes:
        request: What a user asks.
        does: What the skill does about it (``does`` or ``response`` in the frontmatter).
    """

    request: str
    does: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"request": self.request, "does": self.does}


_NO_TRIGGERS = Triggers()

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'`])")


def brief_of(description: str, limit: int = 160) -> str:
    """First sentence of a description, cut at ``limit`` characters with an ellipsis."""
    text = " ".join(description.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


@dataclass(slots=True)
class Skill:
    """One discovered skill: its metadata (tier 1) and where to find the rest.

    The body is never held here: read it with
    :func:`skilldeck.core.discovery.frontmatter.read_body`.

    Attributes:
        name: The ``name`` field, or the folder name when the field is missing or unusable.
        description: The ``description`` field ('' when missing).
        path: Absolute path of the SKILL.md file.
        base_dir: Absolute path of the skill folder (``path.parent``).
        source: Where it was discovered.
        root: The discovery root it was found under.
        rel_id: ``base_dir`` relative to ``root`` in POSIX form (``.`` for a root that is
            itself a skill); the id used by eval files.
        root_label: The root's part of :attr:`id` (``.claude/skills``: the root relative
            to its project or home, set by discovery); '' : the root folder's name.
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
        toolsets: Names of the toolsets the skill declares (``toolsets``).
        scripts: Script paths the skill declares (``scripts``), relative to ``base_dir``.
        default_enabled: The ``default_enabled`` field: false keeps the skill disabled
            until a registry enables it.
        brief_description: The ``brief_description`` field ('' when absent).
        parameters: The inputs it takes (``parameters``; bad entries left out, SD120).
        examples: Requests it answers and what it does (``examples``; SD121).
        instructions: Where its instructions come from instead of the body:
            ``("file", relative path)`` or ``("url", address)`` (``instructions``; SD122),
            None: the SKILL.md body.
        owner: Owner from the governance registry, if any.
        tool_validation: ``strict``, ``warn`` or ``ignore`` for missing tools, from the
            frontmatter (``tool-validation``) or the registry; None: the settings default.
        missing_tools: Required tools a ``tool-validation: strict`` skill lacks (set at
            discovery by :func:`~skilldeck.core.tools.validation.gate_strict`; non-empty
            means the skill is unavailable to agents).
        shadowed_by: SKILL.md path of the skill that wins the name clash, if this one loses.
        shadow_reason: One sentence saying why it is shadowed.
        resources: Resource files relative to ``base_dir`` (POSIX), bounded in count.
        resources_truncated: True when the resource listing hit its bound.
        mtime_ns, size: Of the SKILL.md file.
        content_hash: sha256 hex of the raw SKILL.md bytes (frontmatter hash when the
            file was too large to hash whole).
        diagnostics: Parse and validation findings (lint findings are computed separately).
    """

    name: str
    description: str
    path: Path
    base_dir: Path
    source: Source = Source.EXPLICIT
    root: Path | None = None
    rel_id: str = "."
    root_label: str = ""
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
    toolsets: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    default_enabled: bool = True
    brief_description: str = ""
    parameters: tuple[Parameter, ...] = ()
    examples: tuple[Example, ...] = ()
    instructions: tuple[str, str] | None = None
    owner: str | None = None
    tool_validation: str | None = None
    missing_tools: tuple[str, ...] = ()
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
        """The ``brief_description`` field, else the description's first sentence."""
        return self.brief_description or brief_of(self.description)

    @property
    def id(self) -> str:
        """A stable id unique in its catalog: the source, the root relative to its project
        or home (:attr:`root_label`) and the skill's folder relative to the root
        (``project:.claude/skills/pdf``); the same on every run and machine for the same
        layout, unlike the absolute path."""
        label = self.root_label
        if not label:
            label = self.root.name if self.root is not None else self.base_dir.parent.name
        rel = "" if self.rel_id == "." else self.rel_id
        return f"{self.source.value}:{label}/{rel}".rstrip("/")

    @property
    def valid(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def unavailable(self) -> str | None:
        """Why a ``tool-validation: strict`` skill is unavailable to agents, or None."""
        if not self.missing_tools:
            return None
        return (
            f"unavailable: required tool(s) {', '.join(self.missing_tools)} not available "
            "(tool-validation: strict)"
        )

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
    def granted_tools(self) -> tuple[str, ...]:
        """What loading the skill adds to its session's allowlist: the ``allowed-tools``
        patterns, then the names under ``tools:`` (required or not) not already granted
        (the FrontMCP registry's tool references count like ``allowed-tools``)."""
        listed = [t.name for t in self.tools if t.origin == "tools"]
        return tuple(dict.fromkeys([*self.allowed_tools, *listed]))

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of all referenced tools, deduplicated, in order."""
        return tuple(dict.fromkeys(t.name for t in self.tools))

    def summary_dict(self) -> dict[str, Any]:
        """The ``list`` record: what a listing needs, JSON-ready."""
        return {
            "id": self.id,
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
            "unavailable": self.unavailable,
            "missing_tools": list(self.missing_tools),
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
                "toolsets": list(self.toolsets),
                "scripts": list(self.scripts),
                "default_enabled": self.default_enabled,
                "parameters": [p.to_dict() for p in self.parameters],
                "examples": [e.to_dict() for e in self.examples],
                "instructions": dict([self.instructions]) if self.instructions else None,
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


def _jsonable(value: Any) -> Any:
    """Turn YAML values (dates, sets, odd keys) into JSON-safe ones."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def name_order(skill: Skill) -> tuple[str, str]:
    """Sort key of skills by name without case (``alpha``, ``Beta``, ``gamma``), then as
    written: the order of every skill listing."""
    return (skill.name.lower(), skill.name)


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
        """Skills that win their name (not shadowed), sorted by name without case (what
        every listing of a face and of an agent shows)."""
        return sorted((s for s in self.skills if not s.shadowed), key=name_order)

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
