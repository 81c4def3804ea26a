"""Which remote catalogs a workspace federates: the ``remotes`` tables of ``config.toml``.

One table per remote, its key the *label* the host assigns (``team`` below): every skill
of that remote is named ``team:<skill-path>`` here, so it never shadows, and is never
shadowed by, a local skill of the same name::

    [remotes.team]
    url = "http://127.0.0.1:8765/mcp"        # streamable HTTP (https, or http on loopback)
    token_file = "~/.config/skilldeck/team-token"   # bearer token, first line
    timeout_s = 5                            # each exchange (default 5)
    ttl_s = 60                               # how long a listing is reused (default 60)
    review = true                            # agents load only approved skills (default)

    [remotes.local]
    command = ["skilldeck", "serve"]         # stdio; env = {NAME = "value"} optional

A table that cannot be used becomes a problem (reported by ``doctor``, ``list`` and the
MCP answers) and is skipped; it never stops local skills.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings
from skilldeck.core.web import fetchable

LABEL = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
"""A remote's label: lower-case letters, digits and hyphens (no ``:``, no ``.``)."""
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_TTL_S = 60.0


@dataclass(frozen=True, slots=True)
class RemoteSpec:
    """How to reach one remote catalog.

    Attributes:
        label: The host-assigned label (the config key).
        url: Streamable-HTTP endpoint ('' for stdio).
        command: The stdio server's command line (empty for HTTP).
        env: Extra environment of the stdio server.
        token_file: File holding the HTTP bearer token (None: no token sent).
        timeout_s: Seconds for one whole exchange (a listing, or one skill's files).
        ttl_s: Seconds a fetched listing is reused in this process.
        review: Agents may load a skill of this remote only once an operator approved it
            as it is now (its manifest digest).
    """

    label: str
    url: str = ""
    command: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    token_file: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    ttl_s: float = DEFAULT_TTL_S
    review: bool = True

    @property
    def where(self) -> str:
        """The URL or command line, for reports."""
        return self.url or " ".join(self.command)

    def fingerprint(self) -> str:
        """Identity of the recipe (cached listings are keyed by it)."""
        token = str(self.token_file) if self.token_file else ""
        return json.dumps([self.label, self.url, list(self.command), list(self.env), token])

    def token(self) -> str | None:
        """The bearer token (first line of :attr:`token_file`), None when none is set.

        Raises:
            OSError: The file cannot be read.
        """
        if self.token_file is None:
            return None
        text = self.token_file.read_text(encoding="utf-8")
        return text.strip().splitlines()[0].strip() if text.strip() else None


def remote_specs(settings: Settings) -> tuple[list[RemoteSpec], list[str]]:
    """The usable remotes of ``settings.remotes`` (sorted by label) and why others are not."""
    raw = settings.remotes
    if not isinstance(raw, dict):
        return [], ["remotes: expected tables such as [remotes.team]"]
    specs: list[RemoteSpec] = []
    problems: list[str] = []
    for label, table in sorted(raw.items()):
        try:
            specs.append(_spec(str(label), table))
        except ValueError as exc:
            problems.append(f"remotes.{label}: {exc}")
    return specs, problems


def _spec(label: str, table: Any) -> RemoteSpec:
    if not LABEL.fullmatch(label):
        raise ValueError("a label is 1-32 lower-case letters, digits or hyphens")
    if not isinstance(table, dict):
        raise ValueError("expected a table with url or command")
    url, command = table.get("url"), table.get("command")
    if (url is None) == (command is None):
        raise ValueError("give exactly one of url or command")
    if url is not None and (not isinstance(url, str) or not fetchable(url)):
        raise ValueError("url must be https, or http to a loopback address")
    if command is not None and (
        not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) and c for c in command)
    ):
        raise ValueError("command must be a non-empty list of strings")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("env must be a table of strings")
    token_file = table.get("token_file")
    if token_file is not None and not isinstance(token_file, str):
        raise ValueError("token_file must be a path")
    review = table.get("review", True)
    if not isinstance(review, bool):
        raise ValueError("review must be true or false")
    known = {"url", "command", "env", "token_file", "timeout_s", "ttl_s", "review"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}")
    return RemoteSpec(
        label=label,
        url=url or "",
        command=tuple(command or ()),
        env=tuple(sorted((str(k), v) for k, v in env.items())),
        token_file=Path(token_file).expanduser() if token_file else None,
        timeout_s=_positive(table, "timeout_s", DEFAULT_TIMEOUT_S),
        ttl_s=_positive(table, "ttl_s", DEFAULT_TTL_S, zero=True),
        review=review,
    )


def _positive(table: dict[str, Any], key: str, default: float, zero: bool = False) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")
    if value < 0 or (value == 0 and not zero) or value > 3600:
        raise ValueError(f"{key} must be between {'0' if zero else 'above 0'} and 3600")
    return float(value)
