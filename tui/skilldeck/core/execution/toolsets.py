"""Toolsets: Python tools a skill ships, run out of process.

A skill declares toolsets in its frontmatter::

    toolsets: ["toolsets/index:HelloToolset"]

Each entry is ``PATH:ATTR``: ``PATH`` is a Python file inside the skill folder (``.py``
may be left out: ``toolsets/index`` is ``toolsets/index.py``), ``ATTR`` an attribute of
it, either a **class** whose public methods (names not starting with ``_``) are the tools
(it is created with no arguments) or a **list of functions**, each one tool::

    class HelloToolset:
        def greet(self, name: str, times: int = 1) -> str:
            \"\"\"Greet someone by name.\"\"\"
            return " ".join([f"Hello, {name}!"] * times)

    # or: TOOLS = [greet, shout]  and  toolsets: ["toolsets/index:TOOLS"]

**Parameters** need type annotations, which become the tool's JSON input schema: ``str``
(string), ``int`` (integer), ``float`` (number), ``bool`` (boolean), ``list[str]``,
``list[int]``, ``list[float]``, ``list[bool]`` (arrays), ``list`` and ``dict``
(untyped array and object), and ``Optional[T]`` / ``T | None``. A parameter with a default
is optional (the default is shown in the schema); ``*args``, ``**kwargs`` and
positional-only parameters are not supported. The **first line of the docstring** is the
tool's description. A tool returns anything JSON can carry (other values are sent as
their ``str()``); it may be ``async``. An exception becomes an error result naming the
exception and the line; whatever a tool prints goes to its stderr, not to the answer.

**Mounting.** When an agent loads the skill in an MCP session, with ``skills_exec`` on and
the module allowed, its tools appear on that session's server as ``skill-name.tool``
(``tools/list_changed`` is sent). A module is allowed like a script, pinned to the digest
of every file of the skill: the line ``skill-name/toolsets/index.py skill-sha256:HEX`` in
``SKILLDECK_HOME/ALLOWLIST.txt`` (``skilldeck allow``), or a session approval
``Toolset(skill-name/toolsets/index.py@skill-sha256:HEX)`` (``skilldeck session approve ID
--toolset skill-name/toolsets/index.py``, or the TUI). Any edit to the skill needs a new
approval; in ``approval`` mode an unapproved toolset joins the pending queue when the skill
is loaded; a denial wins. Every mount and call is audited.

**Isolation.** The server never imports a toolset. Each ``describe`` (list the tools and
schemas) and each ``call`` (one tool with JSON arguments, JSON result) is a new child
process, ``python -I -S`` (no site-packages, so tools use the standard library and the
module's own code; the project is not importable), run in the sandbox
(:mod:`.sandbox`) on a private copy of the pinned skill folder, under the script limits.
Before approval nothing runs: the TUI lists a module's tools by reading its source
(:func:`preview_tools`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.policy import (
    ExecRequest,
    decide,
    resolve_script,
    toolset_approval_key,
)
from skilldeck.core.execution.runner import RunResult, python_executable, run_in_copy
from skilldeck.core.execution.snapshot import remember_manifest
from skilldeck.core.execution.toolset_preview import ToolsetTool, preview_tools
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore

HOST = Path(__file__).with_name("toolset_host.py")
"""The child's program; a private copy of its bytes runs (:mod:`.toolset_host`)."""

STATES = ("allowlist", "approved", "pending", "denied", "not approved", "exec off", "error")
"""Approval states of a toolset tool; ``allowlist`` and ``approved`` mount."""


@dataclass(frozen=True, slots=True)
class ToolsetToolStatus:
    """A toolset tool as the TUI lists it, with its approval state for one session.

    Attributes:
        skill: The skill's name.
        name: The mounted name, ``skill-name.tool`` (empty when the module has no
            readable tools: then ``state`` is ``error``).
        tool: The tool's own name.
        module: The manifest entry, e.g. ``toolsets/index:HelloToolset``.
        path: The allowlist line of the module, ``skill-name/toolsets/index.py``.
        sha256: Hex SHA-256 of the module's bytes (empty when unreadable).
        state: One of :data:`STATES`.
        description: The tool's description.
        error: What is wrong (``state`` ``error``), else empty.
        approval: The session entry that approves this module (``Toolset(...)``).
        input_schema: The tool's JSON input schema.
    """

    skill: str
    name: str
    tool: str
    module: str
    path: str
    sha256: str
    state: str
    description: str = ""
    error: str = ""
    approval: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ToolsetRequest:
    """A checked toolset module: the script request for its file plus the attribute."""

    spec: str
    attr: str
    script: ExecRequest

    @property
    def ref(self) -> str:
        """``skill-name/toolsets/index.py``: the module's allowlist line."""
        return self.script.ref

    @property
    def approval(self) -> str:
        """The session approval entry of the module as it is now."""
        return toolset_approval_key(self.script.ref, self.script.digest)


def parse_spec(spec: str) -> tuple[str, str]:
    """``("toolsets/index.py", "HelloToolset")`` from ``"toolsets/index:HelloToolset"``.

    Raises:
        SkilldeckError: INVALID_PARAM (reason ``bad_toolset``) for anything else.
    """
    path, sep, attr = spec.strip().rpartition(":")
    if not sep or not path or not attr.isidentifier():
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"toolset {spec!r} must be PATH:ATTR, e.g. toolsets/index:HelloToolset",
            reason="bad_toolset",
        )
    return (path if path.endswith(".py") else f"{path}.py"), attr


def resolve_toolset(skill: Skill, spec: str) -> ToolsetRequest:
    """Check and hash the module of ``spec`` (the confinement of scripts).

    Raises:
        SkilldeckError: as :func:`parse_spec` and
            :func:`~skilldeck.core.execution.policy.resolve_script`.
    """
    path, attr = parse_spec(spec)
    return ToolsetRequest(spec, attr, resolve_script(skill, path))


def find_spec(skill: Skill, module: str) -> str:
    """The manifest entry of ``skill`` whose module is ``module`` (a path such as
    ``toolsets/index.py`` or an entry ``toolsets/index:HelloToolset``).

    Raises:
        SkilldeckError: NOT_FOUND when the skill declares no such toolset.
    """
    for spec in skill.toolsets:
        with contextlib.suppress(SkilldeckError):
            path, _ = parse_spec(spec)
            if module in (spec, path, path[:-3]):
                return spec
    raise SkilldeckError(
        ErrorCode.NOT_FOUND,
        f"skill {skill.name!r} declares no toolset {module!r} "
        f"(toolsets: {', '.join(skill.toolsets) or 'none'})",
    )


def toolset_approval_for(skill: Skill, module: str) -> str:
    """The session entry approving toolset ``module`` of ``skill`` as it is now
    (``Toolset(skill/path.py@sha256:HEX)``); ``module`` as for :func:`find_spec`.

    Raises:
        SkilldeckError: NOT_FOUND for an undeclared toolset; as :func:`resolve_toolset`.
    """
    request = resolve_toolset(skill, find_spec(skill, module))
    remember_manifest(request.script.snapshot)
    return request.approval


# ---------------------------------------------------------------------- the child


@dataclass(frozen=True, slots=True)
class Toolset:
    """A toolset module as its child process described it.

    Attributes:
        skill: The skill's name.
        spec: The manifest entry.
        ref: The module's allowlist line (``skill-name/toolsets/index.py``).
        sha256: Hash of the bytes that were described.
        tools: The tools that can be mounted.
        problems: ``tool: why`` for tools that cannot (an unsupported parameter, ...).
    """

    skill: str
    spec: str
    ref: str
    sha256: str
    tools: tuple[ToolsetTool, ...]
    problems: tuple[str, ...] = ()


_DESCRIBED: dict[tuple[str, str], tuple[tuple[ToolsetTool, ...], tuple[str, ...]]] = {}
_DESCRIBED_LOCK = threading.Lock()
_DESCRIBED_MAX = 256
_ERROR_CODES = {"bad_arguments": ErrorCode.INVALID_PARAM, "unknown_tool": ErrorCode.NOT_FOUND}


def describe_module(request: ToolsetRequest, timeout: float) -> Toolset:
    """Run the child's ``describe`` on the checked bytes (cached by hash and attribute).

    The caller has authorized ``request``: this runs the module's code.

    Raises:
        SkilldeckError: as :func:`run_host`.
    """
    key = (request.script.digest, request.attr)
    with _DESCRIBED_LOCK:
        cached = _DESCRIBED.get(key)
    if cached is None:
        answer, _ = run_host(request, "describe", None, timeout)
        tools, problems = [], []
        for entry in answer.get("tools") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            if "error" in entry or not isinstance(entry.get("input_schema"), dict):
                problems.append(f"{entry['name']}: {entry.get('error', 'no input schema')}")
                continue
            description = str(entry.get("description") or "")
            tools.append(ToolsetTool(entry["name"], description, entry["input_schema"]))
        cached = (tuple(tools), tuple(problems))
        with _DESCRIBED_LOCK:
            if len(_DESCRIBED) >= _DESCRIBED_MAX:
                _DESCRIBED.clear()
            _DESCRIBED[key] = cached
    skill = request.script.skill
    return Toolset(skill.name, request.spec, request.ref, request.script.sha256, *cached)


def run_host(
    request: ToolsetRequest, op: str, payload: dict[str, Any] | None, timeout: float
) -> tuple[dict[str, Any], RunResult]:
    """Run the toolset host (``describe``, or ``call`` with ``payload`` on its standard
    input) in the sandbox, on a private copy of the pinned skill folder.

    Returns:
        The child's answer (``ok`` true) and the run's record.

    Raises:
        SkilldeckError: with ``reason`` ``timeout``, ``too_large``, ``host_failed``, or the
            child's error kind (``module_error``, ``tool_error``, ``bad_arguments``, ...).
    """
    label = request.script.script
    source = HOST.read_text(encoding="utf-8")
    tail = [op, "", request.attr, label, "-"]

    def build(where: Path) -> list[str]:
        tail[1] = str(where / label)
        return [python_executable(), "-I", "-S", "-c", source, *tail]

    stdin = json.dumps(payload).encode("utf-8") if payload is not None else b"{}"
    result = run_in_copy(request.script.snapshot, build, timeout, stdin)
    return _answer(result, label, timeout), result


def _answer(result: RunResult, label: str, timeout: float) -> dict[str, Any]:
    """The child's answer, or the error that explains why there is none."""
    stderr = result.stderr[-4000:]
    if result.timed_out:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"{label}: no answer within {timeout:g} s; the process was killed",
            reason="timeout",
            stderr=stderr,
        )
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    answer: Any = None
    with contextlib.suppress(ValueError):
        answer = json.loads(lines[-1]) if lines and not result.truncated else None
    if not isinstance(answer, dict):
        why = "its answer was larger than 1 MB" if result.truncated else "it gave no answer"
        tail = stderr.strip().splitlines()[-1:] or [""]
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR,
            f"{label}: the toolset process failed ({why}, exit code {result.exit_code})"
            + (f": {tail[0][:300]}" if tail[0] else ""),
            reason="too_large" if result.truncated else "host_failed",
            stderr=stderr,
        )
    if answer.get("ok") is not True:
        raw = answer.get("error")
        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = str(error.get("kind", "host_failed"))
        raise SkilldeckError(
            _ERROR_CODES.get(kind, ErrorCode.EXECUTION_ERROR),
            str(error.get("message", "the toolset failed")),
            reason=kind,
            stderr=stderr,
        )
    return answer


# ---------------------------------------------------------------------- status


def toolset_status(
    settings: Settings,
    skill: Skill,
    store: SessionStore | None = None,
    session_id: str | None = None,
) -> list[ToolsetToolStatus]:
    """Every tool of every toolset ``skill`` declares, with its approval state for the
    session (``session_id`` in ``store``; none: allowlist or ``not approved``).

    Nothing from the skill runs: tools are read from the module's source
    (:func:`preview_tools`). A module that cannot be read or parsed gives one row with
    state ``error``. Changes nothing (no approval is requested, nothing is audited).
    """
    rows: list[ToolsetToolStatus] = []
    for spec in skill.toolsets:
        try:
            request = resolve_toolset(skill, spec)
        except SkilldeckError as exc:
            rows.append(
                ToolsetToolStatus(skill.name, "", "", spec, "", "", "error", error=exc.message)
            )
            continue
        base: dict[str, Any] = {
            "skill": skill.name,
            "module": spec,
            "path": request.ref,
            "sha256": request.script.sha256,
            "approval": request.approval,
        }
        state = decide(settings, request.script, store, session_id, kind="toolset")
        try:
            tools = preview_tools(request.script.data, request.attr, request.script.script)
        except SkilldeckError as exc:
            rows.append(
                ToolsetToolStatus(name="", tool="", state="error", error=exc.message, **base)
            )
            continue
        for tool, problem in tools:
            rows.append(
                ToolsetToolStatus(
                    name=f"{skill.name}.{tool.name}",
                    tool=tool.name,
                    state="error" if problem else state,
                    description=tool.description,
                    error=problem,
                    input_schema=tool.input_schema,
                    **base,
                )
            )
    return rows
