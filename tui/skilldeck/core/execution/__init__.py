"""Running a skill's scripts and toolsets, safely: who may run what (:mod:`.policy`), how a
run is confined (:mod:`.runner`) and the toolset protocol (:mod:`.toolsets`). Nothing here
imports textual or mcp."""

from skilldeck.core.execution.policy import (
    ExecRequest,
    allowlist_files,
    approval_key,
    authorize,
    decide,
    read_allowlist,
    resolve_script,
    toolset_approval_key,
)
from skilldeck.core.execution.runner import (
    MAX_ARG_BYTES,
    MAX_ARGS,
    OUTPUT_CAP,
    RunResult,
    network_sandbox,
    run_script,
)
from skilldeck.core.execution.service import call_toolset, execute, mount_toolset
from skilldeck.core.execution.toolset_preview import ToolsetTool, preview_tools
from skilldeck.core.execution.toolsets import (
    Toolset,
    ToolsetRequest,
    ToolsetToolStatus,
    find_spec,
    parse_spec,
    resolve_toolset,
    toolset_approval_for,
    toolset_status,
)

__all__ = [
    "MAX_ARGS",
    "MAX_ARG_BYTES",
    "OUTPUT_CAP",
    "ExecRequest",
    "RunResult",
    "Toolset",
    "ToolsetRequest",
    "ToolsetTool",
    "ToolsetToolStatus",
    "allowlist_files",
    "approval_key",
    "authorize",
    "call_toolset",
    "decide",
    "execute",
    "find_spec",
    "mount_toolset",
    "network_sandbox",
    "parse_spec",
    "preview_tools",
    "read_allowlist",
    "resolve_script",
    "resolve_toolset",
    "run_script",
    "toolset_approval_for",
    "toolset_approval_key",
    "toolset_status",
]
