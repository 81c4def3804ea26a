"""Lint configuration: rule selection (ruff-style prefixes) and thresholds.

Read from the nearest configuration file found walking up from a start folder:
``.skilldeck.toml`` (its ``[lint]`` table, or its top level) wins over ``pyproject.toml``
(``[tool.skilldeck.lint]``, or ``[tool.skilldeck]``); a ``pyproject.toml`` without a
``[tool.skilldeck]`` table is skipped, like ruff does.

Example::

    [tool.skilldeck.lint]
    select = ["SL"]
    ignore = ["SL005", "SL1"]
    max-body-lines = 800
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.lint.rules import LISTING_FRONT_CHARS, LISTING_MAX_CHARS, RULES
from skilldeck.core.model import Diagnostic, Severity

CONFIG_FILE = ".skilldeck.toml"
OPT_IN = frozenset({"SL013"})
"""Rules that run only when selected by their own code (``--select SL013``): suggestions
most skills would get, kept out of the default run and of prefix selections."""


@dataclass(slots=True)
class LintConfig:
    """Which rules run and their thresholds.

    Attributes:
        select: Codes or prefixes to enable (``None`` = every rule; ``ALL`` works too).
        ignore: Codes or prefixes to disable; the longest matching prefix decides, and on
            a tie ignore wins.
        min_description_chars: SL001 threshold.
        listing_front_chars: SL005 threshold.
        listing_max_chars: SL004 threshold.
        max_body_lines: SL101 threshold.
        max_body_tokens: SL102 threshold (estimated tokens).
        overlap_threshold: SL202 word-set Jaccard threshold (0-1).
        overlap_max_candidates: SL202 bound on candidates verified per skill.
        source: The file the configuration came from, if any.
        diagnostics: ``SC3xx`` findings about the configuration itself.
    """

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    min_description_chars: int = 40
    listing_front_chars: int = LISTING_FRONT_CHARS
    listing_max_chars: int = LISTING_MAX_CHARS
    max_body_lines: int = 500
    max_body_tokens: int = 5000
    overlap_threshold: float = 0.8
    overlap_max_candidates: int = 200
    source: Path | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def enabled(self, code: str) -> bool:
        """Whether rule ``code`` runs under this configuration (select/ignore may change)."""
        key = (None if self.select is None else tuple(self.select), tuple(self.ignore))
        if self._cache.get("") != key:
            self._cache.clear()
            self._cache[""] = key
        hit = self._cache.get(code)
        if hit is None:
            hit = self._decide(code)
            self._cache[code] = hit
        return hit

    def _decide(self, code: str) -> bool:
        select = ["ALL"] if self.select is None else self.select
        if code in OPT_IN:  # only when selected by its own code
            select = [p for p in select if p.strip().upper() == code]
        best_select = max((_match_len(p, code) for p in select), default=-1)
        best_ignore = max((_match_len(p, code) for p in self.ignore), default=-1)
        return best_select >= 0 and best_select > best_ignore

    def enabled_codes(self) -> list[str]:
        """Codes of every enabled rule, in order (:data:`OPT_IN` ones only when named)."""
        return [c for c in RULES if self.enabled(c)]


def _match_len(prefix: str, code: str) -> int:
    """Length of ``prefix`` when it selects ``code``, else -1 (``ALL`` counts as 0)."""
    p = prefix.strip().upper()
    if p == "ALL":
        return 0
    return len(p) if p and code.startswith(p) else -1


_THRESHOLDS: dict[str, type] = {
    "min_description_chars": int,
    "listing_front_chars": int,
    "listing_max_chars": int,
    "max_body_lines": int,
    "max_body_tokens": int,
    "overlap_threshold": float,
    "overlap_max_candidates": int,
}


def config_from_mapping(
    data: dict[str, Any], source: Path | None = None, *, strict: bool = True
) -> LintConfig:
    """Build a :class:`LintConfig` from a TOML table; problems become SC diagnostics.

    Keys may use hyphens or underscores (``max-body-lines`` or ``max_body_lines``). With
    ``strict`` (a dedicated lint table) unknown keys are reported; otherwise (a shared
    ``[tool.skilldeck]`` table) they are left to their owners.
    """
    cfg = LintConfig(source=source)
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        if key in ("select", "ignore", "extend_select", "extend_ignore"):
            codes = _code_list(value)
            if codes is None:
                cfg.diagnostics.append(
                    _diag("SC302", f"'{raw_key}' must be a list of codes", source)
                )
                continue
            for code in codes:
                if code.upper() != "ALL" and not any(r.startswith(code.upper()) for r in RULES):
                    cfg.diagnostics.append(
                        _diag("SC303", f"'{raw_key}' entry {code!r} matches no lint rule", source)
                    )
            if key == "select":
                cfg.select = codes
            elif key == "extend_select":
                cfg.select = None if cfg.select is None else [*cfg.select, *codes]
            else:
                cfg.ignore = [*cfg.ignore, *codes]
        elif key in _THRESHOLDS:
            kind = _THRESHOLDS[key]
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if kind is int:
                ok = ok and isinstance(value, int)
            if not ok or value < 0:
                cfg.diagnostics.append(
                    _diag("SC302", f"'{raw_key}' must be a non-negative {kind.__name__}", source)
                )
                continue
            setattr(cfg, key, kind(value))
        elif strict:
            cfg.diagnostics.append(_diag("SC301", f"unknown lint option {raw_key!r}", source))
    return cfg


def _code_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip().upper() for v in value if v.strip()]
    return None


def _diag(code: str, message: str, source: Path | None) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, source, None, None)


def find_config_file(start: Path | None) -> tuple[Path, dict[str, Any], bool] | None:
    """The nearest config file walking up from ``start``, its lint table, and whether that
    table is dedicated to lint (``[lint]`` / ``[tool.skilldeck.lint]``).

    Returns ``None`` when there is none. Raises ``_BadToml`` for unreadable files.
    """
    here = (start or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        dot = folder / CONFIG_FILE
        if dot.is_file():
            data = _read_toml(dot)
            table = data.get("lint")
            if isinstance(table, dict):
                return dot, table, True
            return dot, data, False
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject)
            tool = data.get("tool")
            ours = tool.get("skilldeck") if isinstance(tool, dict) else None
            if isinstance(ours, dict):
                table = ours.get("lint")
                if isinstance(table, dict):
                    return pyproject, table, True
                return pyproject, ours, False
    return None


class _BadToml(Exception):
    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _BadToml(path, str(exc)) from exc


def load_lint_config(start: Path | None = None) -> LintConfig:
    """Load the lint configuration that applies to ``start`` (default: the current folder).

    Never raises for bad files: an unreadable or invalid file yields the defaults plus an
    ``SC300`` diagnostic; unknown keys and bad values yield ``SC301``-``SC303``.
    """
    try:
        found = find_config_file(start)
    except _BadToml as exc:
        cfg = LintConfig(source=exc.path)
        cfg.diagnostics.append(
            _diag("SC300", f"cannot read lint configuration: {exc.message}", exc.path)
        )
        return cfg
    if found is None:
        return LintConfig()
    path, table, strict = found
    if not strict:
        table = {k: v for k, v in table.items() if not isinstance(v, dict)}
    return config_from_mapping(table, path, strict=strict)
