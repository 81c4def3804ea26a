"""The tools known without asking a server: the built-in preset and the tools file.

The tools file (``settings.tools_path``, TOML) is either ``tools = ["A", "B"]`` or
``[[tools]]`` tables with ``name``, optional ``hidden`` and ``description``, plus an
optional ``hidden = ["WebSearch"]`` list that hides any tool by name and an optional
``builtin = false`` that drops the preset. Diagnostic codes: ST001 unreadable tools file,
ST002 bad tools-file entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.core.model import Diagnostic, Severity
from skilldeck.core.tools.model import ToolInfo

BUILTIN_TOOLS: tuple[str, ...] = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Grep",
    "Glob",
    "LS",
    "Bash",
    "BashOutput",
    "KillShell",
    "WebFetch",
    "WebSearch",
    "Task",
    "TodoWrite",
    "NotebookEdit",
    "NotebookRead",
    "Skill",
    "SlashCommand",
    "ExitPlanMode",
)


@dataclass(slots=True)
class ToolsFile:
    """What a tools file says.

    Attributes:
        builtin_off: The file says ``builtin = false``.
        hidden: Tool names hidden by the ``hidden`` list.
        tools: The tools it lists, in file order.
        diagnostics: Problems found reading it (ST001, ST002).
    """

    builtin_off: bool = False
    hidden: set[str] = field(default_factory=set)
    tools: list[ToolInfo] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def bad_entry(self, path: Path, message: str) -> None:
        """Record an ST002 finding about ``path``."""
        self.diagnostics.append(Diagnostic("ST002", Severity.WARNING, message, path=path))


def read_tools_file(path: Path) -> ToolsFile:
    """Read a tools file; a missing one says nothing, an unreadable one is reported."""
    found = ToolsFile()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return found
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        found.diagnostics.append(
            Diagnostic("ST001", Severity.WARNING, f"tools file ignored: {exc}", path=path)
        )
        return found
    if data.get("builtin") is False:
        found.builtin_off = True
    hidden = data.get("hidden", [])
    if isinstance(hidden, list):
        found.hidden.update(str(h) for h in hidden)
    else:
        found.bad_entry(path, "'hidden' must be a list of tool names")
    entries = data.get("tools", [])
    if not isinstance(entries, list):
        found.bad_entry(path, "'tools' must be a list")
        return found
    for entry in entries:
        if isinstance(entry, str) and entry.strip():
            found.tools.append(ToolInfo(entry.strip(), "tools-file"))
        elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
            found.tools.append(
                ToolInfo(
                    entry["name"].strip(),
                    "tools-file",
                    hidden=entry.get("hidden") is True,
                    description=str(entry.get("description", "")),
                )
            )
        else:
            found.bad_entry(path, f"tools entry {entry!r} has no name")
    return found
