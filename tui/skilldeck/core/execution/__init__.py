"""Running a skill's scripts and toolsets, safely: who may run what (:mod:`.policy`), what
a permission pins (:mod:`.snapshot`), the sandbox (:mod:`.sandbox`), how a run is confined
(:mod:`.runner`) and the toolset protocol (:mod:`.toolsets`). Nothing here imports textual
or mcp."""

from skilldeck.core.execution.policy import (
    DIGEST_PREFIX,
    ExecRequest,
    add_to_allowlist,
    allowlist_line,
    allowlist_notices,
    allowlist_path,
    approval_key,
    authorize,
    check_runnable,
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
    run_skill_file,
)
from skilldeck.core.execution.sandbox import LEVELS, Sandbox
from skilldeck.core.execution.sandbox import probe as sandbox_level
from skilldeck.core.execution.service import call_toolset, execute, mount_toolset
from skilldeck.core.execution.snapshot import (
    Snapshot,
    manifest_changes,
    parse_manifest,
    recall_manifest,
    remember_manifest,
    snapshot_skill,
)
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
    "DIGEST_PREFIX",
    "LEVELS",
    "MAX_ARGS",
    "MAX_ARG_BYTES",
    "OUTPUT_CAP",
    "ExecRequest",
    "RunResult",
    "Sandbox",
    "Snapshot",
    "Toolset",
    "ToolsetRequest",
    "ToolsetTool",
    "ToolsetToolStatus",
    "add_to_allowlist",
    "allowlist_line",
    "allowlist_notices",
    "allowlist_path",
    "approval_key",
    "authorize",
    "call_toolset",
    "check_runnable",
    "decide",
    "execute",
    "find_spec",
    "manifest_changes",
    "mount_toolset",
    "parse_manifest",
    "parse_spec",
    "preview_tools",
    "read_allowlist",
    "recall_manifest",
    "remember_manifest",
    "resolve_script",
    "resolve_toolset",
    "run_skill_file",
    "sandbox_level",
    "snapshot_skill",
    "toolset_approval_for",
    "toolset_approval_key",
    "toolset_status",
]
