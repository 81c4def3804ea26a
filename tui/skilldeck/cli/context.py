"""What every CLI command shares: options, settings, the workspace and output helpers."""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Severity
from skilldeck.core.safe_text import for_terminal
from skilldeck.core.store import LocalStore
from skilldeck.core.validate import PROFILES
from skilldeck.core.workspace import Workspace

_COLORS = {
    "red": "\x1b[31m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "green": "\x1b[32m",
    "dim": "\x1b[2m",
    "bold": "\x1b[1m",
    "cyan": "\x1b[36m",
}
_COLORS["reset"] = "\x1b[0m"
_NONCE = secrets.token_hex(8)
"""Per-process secret in the colour marks, so text from a skill cannot forge one."""
_MARK = re.compile(f"\U000f0000{_NONCE}([a-z]+)\U000f0001")
"""What :meth:`CliContext.paint` writes around text; :meth:`CliContext.echo` turns the marks
into colour codes after every other control character was escaped."""


def _mark(color: str) -> str:
    return f"\U000f0000{_NONCE}{color}\U000f0001"


TEXT_JSON = ("text", "json")
"""The output formats of most commands (``--format``)."""
SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


@dataclass
class CliContext:
    """Options and the lazily opened workspace of one CLI run.

    Attributes:
        root_args: ``--root`` values in the order given.
        profile: Validation profile.
        format: Output format requested with ``--format`` (None: the command's default).
        debug: Show tracebacks.
        color: Colour the text output.
        quiet: Results and errors only: no notes, warnings or summary lines.
        settings: Loaded settings.
        out: Where results are printed.
        progress: Told what long step runs now (:class:`~skilldeck.cli.progress.Progress`
            on a terminal), or None.
    """

    root_args: list[str] = field(default_factory=list)
    profile: str = "default"
    format: str | None = None
    debug: bool = False
    color: bool = False
    quiet: bool = False
    settings: Settings = field(default_factory=Settings)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    progress: Callable[[str], None] | None = None
    _store: LocalStore | None = None
    _workspace: Workspace | None = None

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> CliContext:
        """Build the context from :func:`skilldeck.cli.main.split_global_options` output."""
        profile = options.get("profile") or "default"
        if profile not in PROFILES:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})",
            )
        color = (
            sys.stdout.isatty()
            and not options.get("no_color")
            and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb"
        )
        return cls(
            root_args=list(options.get("root") or []),
            profile=profile,
            format=options.get("format"),
            debug=bool(options.get("debug")),
            color=bool(color),
            quiet=bool(options.get("quiet")),
            settings=load_settings(),
        )

    def output_format(self, allowed: tuple[str, ...] = TEXT_JSON, default: str = "text") -> str:
        """The format to use, checked against what the command supports."""
        fmt = self.format or default
        if fmt not in allowed:
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"--format {fmt} is not supported here (choose from {', '.join(allowed)})",
            )
        return fmt

    @property
    def roots(self) -> list[Path] | None:
        """Explicit roots, or None for the default discovery roots."""
        if not self.root_args:
            return None
        paths = [Path(r).expanduser() for r in self.root_args]
        for path in paths:
            if not path.exists():
                raise SkilldeckError(ErrorCode.NOT_FOUND, f"--root {path}: no such folder")
            if not path.is_dir() and path.name.lower() != "skill.md":
                raise SkilldeckError(
                    ErrorCode.INVALID_PARAM,
                    f"--root {path}: is a file, not a folder of skills (give the folder that "
                    "holds skill folders, or a SKILL.md)",
                )
        return paths

    def store(self) -> LocalStore:
        """The local store, opened once per run; its repair notices go to stderr."""
        if self._store is None:
            self._store = LocalStore.open()
            for notice in self._store.notices:
                self.warn(notice)
        return self._store

    def open_workspace(self, roots: list[Path] | None) -> Workspace:
        """A workspace over ``roots`` (None: the default roots) sharing this run's store."""
        workspace = Workspace(self.settings, roots, profile=self.profile, store=self.store())
        workspace.progress = self.progress
        return workspace

    def workspace(self) -> Workspace:
        """The workspace of the ``--root`` options, discovered once per run."""
        if self._workspace is None:
            workspace = self.open_workspace(self.roots)
            workspace.discover()
            self._workspace = workspace
        return self._workspace

    def catalog(self) -> Catalog:
        """The workspace's catalog (discovered once per run)."""
        return self.workspace().catalog

    def paint(self, text: str, color: str) -> str:
        """Colour ``text`` when colour is on."""
        if not self.color or color not in _COLORS:
            return text
        return f"{_mark(color)}{safe(text)}{_mark('reset')}"

    def echo(self, text: str = "") -> None:
        """Print text output, with control characters from skills shown escaped.

        Names, descriptions, paths and file bodies come from folders anyone could have
        written: an escape sequence in them must not clear the screen or retitle the window.
        Only the colour codes of :meth:`paint` (when colour is on) reach the terminal;
        newlines and tabs are kept.
        """
        print(safe(text, multiline=True), file=self.out)

    def warn(self, text: str) -> None:
        """Print ``skilldeck: TEXT`` on stderr, control characters escaped.

        With ``--quiet`` only lines that start with ``error`` are printed.
        """
        if self.quiet and not text.startswith("error"):
            return
        print(f"skilldeck: {safe(text)}", file=sys.stderr)

    def emit_json(self, data: Any) -> None:
        """Print one JSON document."""
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str), file=self.out)

    def emit_jsonl(self, data: Any) -> None:
        """Print one JSON object on one line."""
        print(json.dumps(data, ensure_ascii=False, default=str), file=self.out, flush=True)


def table(rows: list[list[str]], widths: list[int] | None = None) -> list[str]:
    """Left-aligned columns; the last column is never padded."""
    if not rows:
        return []
    ncols = max(len(r) for r in rows)
    rows = [[for_terminal(cell) for cell in row] for row in rows]
    widths = widths or [
        max(len(_strip_ansi(r[i])) for r in rows if i < len(r)) for i in range(ncols)
    ]
    lines = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            pad = widths[i] - len(_strip_ansi(cell)) if i < len(row) - 1 else 0
            cells.append(cell + " " * max(pad, 0))
        lines.append("  ".join(cells).rstrip())
    return lines


def _strip_ansi(text: str) -> str:
    """``text`` without the colour marks of :meth:`CliContext.paint` (its printed width)."""
    return _MARK.sub("", text)


def safe(text: str, *, multiline: bool = False) -> str:
    """``text`` for a terminal: :func:`~skilldeck.core.safe_text.for_terminal` (every control
    character shown escaped), then the colour marks of :meth:`CliContext.paint` made colour
    codes. Text from a skill cannot forge a mark (it holds a per-process secret).

    Args:
        text: Output that may hold names, descriptions or bodies of skills.
        multiline: Keep newlines and tabs.
    """
    cleaned = for_terminal(text, multiline=multiline)
    if "\U000f0000" not in cleaned:
        return cleaned
    return _MARK.sub(lambda m: _COLORS[m.group(1)], cleaned)
