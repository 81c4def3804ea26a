"""The install review rules (``SI``): what only an install checks in a skill folder.

:mod:`skilldeck.core.install` reports them beside the validation and lint findings; an
error stops the install unless it is forced (SI104 stops it even then).
"""

from __future__ import annotations

from skilldeck.core.model import Severity
from skilldeck.core.rules.model import Rule

INSTALL_RULES = (
    Rule(
        "SI101",
        "pth-file",
        Severity.WARNING,
        "A .pth file: Python runs its import lines at start-up from a site folder.",
        explanation="Remove it; a skill never needs one.",
    ),
    Rule(
        "SI102",
        "allowlist-in-skill",
        Severity.WARNING,
        "An ALLOWLIST.txt inside a skill allows nothing (only SKILLDECK_HOME/ALLOWLIST.txt does).",
        explanation="Remove it.",
    ),
    Rule(
        "SI103",
        "compiled-code",
        Severity.ERROR,
        "Compiled code (by its name or its first bytes): nobody can review it, and runs never "
        "use it.",
        explanation="Ship the source instead.",
    ),
    Rule(
        "SI104",
        "unsafe-file-name",
        Severity.ERROR,
        "A file name holding a control character, a line separator, a bidirectional control, "
        "a backslash, bytes that are not UTF-8 or a form other than Unicode NFKC: names must "
        "survive a line-based record, so no --force installs it.",
        explanation="Rename the file.",
    ),
)
