"""Files of one entry per line that people may edit too (the allowlist, remote approvals):
adding a line never rewrites what is there."""

from __future__ import annotations

from pathlib import Path

from skilldeck.core.errors import ErrorCode, SkilldeckError


def append_line(path: Path, line: str) -> None:
    """Add ``line`` at the end of ``path`` (made with its folder when missing), starting on
    a line of its own even when the file's last line has no newline.

    Raises:
        SkilldeckError: EXECUTION_ERROR (``reason`` ``io_error``) when it cannot be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
        with path.open("a", encoding="utf-8") as handle:
            handle.write(("" if not old or old.endswith("\n") else "\n") + line + "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"cannot write {path}: {exc}", reason="io_error"
        ) from exc
