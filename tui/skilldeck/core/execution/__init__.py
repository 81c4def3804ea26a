"""Running a skill's scripts, safely: who may run what (:mod:`.policy`) and how a run is
confined (:mod:`.runner`). Nothing here imports textual or mcp."""

from skilldeck.core.execution.policy import (
    ExecRequest,
    allowlist_files,
    approval_key,
    authorize,
    read_allowlist,
    resolve_script,
)
from skilldeck.core.execution.runner import (
    MAX_ARG_BYTES,
    MAX_ARGS,
    OUTPUT_CAP,
    RunResult,
    network_sandbox,
    run_script,
)
from skilldeck.core.execution.service import execute

__all__ = [
    "MAX_ARGS",
    "MAX_ARG_BYTES",
    "OUTPUT_CAP",
    "ExecRequest",
    "RunResult",
    "allowlist_files",
    "approval_key",
    "authorize",
    "execute",
    "network_sandbox",
    "read_allowlist",
    "resolve_script",
    "run_script",
]
