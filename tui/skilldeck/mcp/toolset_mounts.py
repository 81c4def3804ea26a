"""Toolset tools mounted per MCP client (see :mod:`skilldeck.core.execution.toolsets`).

Loading a skill that declares toolsets mounts the tools of each allowed module for that
client as ``skill-name.tool``; the server lists them after its own tools and announces
``tools/list_changed``. A module still waiting (not approved yet) is remembered: once the
operator allows it, the server's poll mounts it and announces the change
(:meth:`ToolsetMounts.waiting`), so the agent need not load the skill again.

Mounts and calls go through the workspace's write door
(:class:`~skilldeck.core.workspace.Actions`): the module is checked and authorized again
on every call (an edited module is refused until approved again) and runs in a child
process. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError

if TYPE_CHECKING:
    from skilldeck.core.execution import ToolsetCall, ToolsetTool
    from skilldeck.core.model import Skill
    from skilldeck.core.workspace import Actions, SessionRef

MAX_MOUNTED = 500
"""Most toolset tools one client may have mounted."""
APPROVABLE = frozenset({"requires_approval", "not_allowed"})
"""Refusals an operator can lift (an approval, an allowlist line) while the client waits."""


@dataclass(frozen=True, slots=True)
class MountedTool:
    """One toolset tool on a client's tool list.

    Attributes:
        name: The MCP tool name, ``skill-name.tool``.
        skill: The skill's name.
        spec: The manifest entry of its module (``toolsets/index:HelloToolset``).
        sha256: Hash of the module when it was mounted.
        tool: The tool's name, description and input schema.
    """

    name: str
    skill: str
    spec: str
    sha256: str
    tool: ToolsetTool


class ToolsetMounts:
    """The mounted toolset tools of every client, safe to use from worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_client: dict[str, dict[str, MountedTool]] = {}
        self._waiting: dict[tuple[str, str], tuple[str | None, frozenset[str]]] = {}

    def tools(self, client_key: str) -> list[MountedTool]:
        """The client's mounted tools, by name."""
        with self._lock:
            found = self._by_client.get(client_key, {})
            return [found[name] for name in sorted(found)]

    def get(self, client_key: str, name: str) -> MountedTool | None:
        """The client's mounted tool called ``name``, or None."""
        with self._lock:
            return self._by_client.get(client_key, {}).get(name)

    def names(self, client_key: str) -> frozenset[str]:
        """The client's mounted tool names (compare before and after a load)."""
        with self._lock:
            return frozenset(self._by_client.get(client_key, {}))

    def drop(self, client_key: str) -> None:
        """Forget the client's tools (it disconnected)."""
        with self._lock:
            self._by_client.pop(client_key, None)
            for key in [k for k in self._waiting if k[0] == client_key]:
                del self._waiting[key]

    def waiting(self) -> list[tuple[str, str, str | None, frozenset[str]]]:
        """(client, skill name, session id, the toolsets left waiting) of each load that
        left a toolset waiting for approval: what :meth:`mount` should redo once one of
        them is allowed."""
        with self._lock:
            return [(c, skill, sid, specs) for (c, skill), (sid, specs) in self._waiting.items()]

    def mount(
        self, door: Actions, skill: Skill, session: SessionRef | None, client_key: str
    ) -> dict[str, Any]:
        """Mount the allowed toolsets of ``skill`` for the client (replacing what an
        earlier load of it mounted).

        Returns:
            ``mounted`` (tool names), ``waiting`` (toolsets refused: ``toolset``,
            ``reason``, ``message``, ``approval`` when an approval was requested) and
            ``errors`` (toolsets that could not be described).
        """
        mounted: dict[str, MountedTool] = {}
        waiting: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for spec in skill.toolsets:
            try:
                toolset = door.mount(skill, spec, session=session)
            except SkilldeckError as exc:
                entry = {"toolset": spec, "reason": exc.details.get("reason", exc.code.value)}
                entry["message"] = exc.message
                if "approval" in exc.details:
                    entry["approval"] = exc.details["approval"]
                refused = exc.code is ErrorCode.PERMISSION_DENIED
                (waiting if refused else errors).append(entry)
                continue
            for problem in toolset.problems:
                errors.append({"toolset": spec, "reason": "bad_tool", "message": problem})
            for tool in toolset.tools:
                name = f"{skill.name}.{tool.name}"
                mounted[name] = MountedTool(name, skill.name, spec, toolset.sha256, tool)
        with self._lock:
            current = self._by_client.setdefault(client_key, {})
            for name in [n for n, t in current.items() if t.skill == skill.name]:
                del current[name]
            room = max(0, MAX_MOUNTED - len(current))
            current.update(dict(list(mounted.items())[:room]))
            specs = frozenset(w["toolset"] for w in waiting if w["reason"] in APPROVABLE)
            if specs:
                session_id = session.id if session is not None else None
                self._waiting[(client_key, skill.name)] = (session_id, specs)
            else:
                self._waiting.pop((client_key, skill.name), None)
        return {"mounted": sorted(mounted), "waiting": waiting, "errors": errors}


def mount_notes(report: dict[str, Any]) -> list[str]:
    """What ``load_skill`` tells the model about its toolsets."""
    notes: list[str] = []
    if report["mounted"]:
        notes.append(f"Toolset tools now available: {', '.join(report['mounted'])}.")
    for entry in report["waiting"]:
        later = (
            "Its tools will be added (tools/list_changed) once the operator allows it."
            if entry["reason"] in APPROVABLE
            else "Load the skill again once it is allowed."
        )
        notes.append(
            f"Toolset {entry['toolset']} is not mounted ({entry['reason']}): "
            f"{entry['message']}. {later}"
        )
    for entry in report["errors"]:
        notes.append(f"Toolset {entry['toolset']} has a problem: {entry['message']}")
    return notes


def call_output(call: ToolsetCall) -> tuple[dict[str, Any], str]:
    """Structured content and text of a toolset call's result."""
    result = call.to_dict()
    value = call.result
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return result, text
