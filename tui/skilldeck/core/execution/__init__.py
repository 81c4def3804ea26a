"""Running a skill's scripts and toolsets, safely: who may run what (:mod:`.policy`), what
a permission pins (:mod:`.snapshot`), the sandbox (:mod:`.sandbox`), how a run is confined
(:mod:`.runner`) and the toolset protocol (:mod:`.toolsets`). Nothing here imports textual
or mcp."""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

if TYPE_CHECKING:
    from skilldeck.core.execution.policy import (
        add_to_allowlist,
        allowlist_line,
        allowlist_notices,
        allowlist_path,
        approval_key,
        resolve_script,
    )
    from skilldeck.core.execution.review import (
        FileRequest,
        FileReview,
        approval_as_shown,
        bind_approval,
        parse_file_request,
        review_file_request,
    )
    from skilldeck.core.execution.runner import RunResult, run_skill_file
    from skilldeck.core.execution.sandbox import probe as sandbox_level
    from skilldeck.core.execution.service import (
        ScriptRun,
        ToolsetCall,
        call_toolset,
        execute,
        mount_toolset,
    )
    from skilldeck.core.execution.snapshot import remember_manifest, snapshot_skill
    from skilldeck.core.execution.toolset_preview import ToolsetTool, preview_tools
    from skilldeck.core.execution.toolsets import (
        ToolsetToolStatus,
        parse_spec,
        toolset_approval_for,
        toolset_status,
    )

__all__ = [
    "FileRequest",
    "FileReview",
    "RunResult",
    "ScriptRun",
    "ToolsetCall",
    "ToolsetTool",
    "ToolsetToolStatus",
    "add_to_allowlist",
    "allowlist_line",
    "allowlist_notices",
    "allowlist_path",
    "approval_as_shown",
    "approval_key",
    "bind_approval",
    "call_toolset",
    "execute",
    "mount_toolset",
    "parse_file_request",
    "parse_spec",
    "preview_tools",
    "remember_manifest",
    "resolve_script",
    "review_file_request",
    "run_skill_file",
    "sandbox_level",
    "snapshot_skill",
    "toolset_approval_for",
    "toolset_status",
]

_NAMES = {
    "add_to_allowlist": "policy",
    "allowlist_line": "policy",
    "allowlist_notices": "policy",
    "allowlist_path": "policy",
    "approval_key": "policy",
    "resolve_script": "policy",
    "FileRequest": "review",
    "FileReview": "review",
    "approval_as_shown": "review",
    "bind_approval": "review",
    "parse_file_request": "review",
    "review_file_request": "review",
    "RunResult": "runner",
    "run_skill_file": "runner",
    "sandbox_level": "sandbox:probe",
    "ScriptRun": "service",
    "ToolsetCall": "service",
    "call_toolset": "service",
    "execute": "service",
    "mount_toolset": "service",
    "remember_manifest": "snapshot",
    "snapshot_skill": "snapshot",
    "ToolsetTool": "toolset_preview",
    "preview_tools": "toolset_preview",
    "ToolsetToolStatus": "toolsets",
    "parse_spec": "toolsets",
    "toolset_approval_for": "toolsets",
    "toolset_status": "toolsets",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
