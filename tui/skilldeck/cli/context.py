"""What every CLI command shares: options, settings, the catalog and output helpers."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Severity
from skilldeck.core.validate import PROFILES

_COLORS = {
    "red": "\x1b[31m",
    "yellow": "\x1b[33m",
    "blue": "\x1b[34m",
    "green": "\x1b[32m",
    "dim": "\x1b[2m",
    "bold": "\x1b[1m",
    "cyan": "\x1b[36m",
}
SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}


@dataclass
class CliContext:
    """Options and lazily built state for one CLI run.

    Attributes:
        root_args: ``--root`` values in the order given.
        profile: Validation profile.
        format: Output format requested with ``--format`` (None: the command's default).
        debug: Show tracebacks.
        color: Colour the text output.
        settings: Loaded settings.
        out: Where results are printed.
    """

    root_args: list[str] = field(default_factory=list)
    profile: str = "default"
    format: str | None = None
    debug: bool = False
    color: bool = False
    settings: Settings = field(default_factory=Settings)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    _catalog: Catalog | None = None

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
            settings=load_settings(),
        )

    def output_format(self, allowed: tuple[str, ...], default: str = "text") -> str:
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
        return paths

    def catalog(self) -> Catalog:
        """Discover skills once per run."""
        if self._catalog is None:
            from skilldeck.core.discovery import load_catalog

            self._catalog = load_catalog(self.roots, self.settings, profile=self.profile)
        return self._catalog

    def paint(self, text: str, color: str) -> str:
        """Colour ``text`` when colour is on."""
        if not self.color or color not in _COLORS:
            return text
        return f"{_COLORS[color]}{text}\x1b[0m"

    def echo(self, text: str = "") -> None:
        """Print a line of text output."""
        print(text, file=self.out)

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
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
