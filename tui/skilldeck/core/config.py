"""Typed settings and state locations.

All state (cache, sessions database, telemetry, tools file, config) lives under
``SKILLDECK_HOME`` when that environment variable is set (tests always set it), else under
the platformdirs user data dir. Settings come from ``SKILLDECK_HOME/config.toml``; every
field has a default so a missing or broken file never stops the program.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
import urllib.parse
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from skilldeck.core.model import Diagnostic, Severity

ENV_HOME = "SKILLDECK_HOME"
ENV_CONFIG = "SKILLDECK_CONFIG"
ENV_PROMPT_BUDGET = "SKILLS_PROMPT_CHAR_BUDGET"
ENV_SESSIONS_URL = "SKILLDECK_SESSIONS_URL"
ENV_SKILLS_V1 = "SKILLDECK_SKILLS_V1"
ENV_SKILLS_EXEC = "SKILLDECK_SKILLS_EXEC"
ENV_EXEC_TIMEOUT = "SKILLDECK_EXEC_TIMEOUT_S"
ENV_SEMANTIC_MODEL = "SKILLDECK_SEMANTIC_MODEL_PATH"
ENV_REQUIRE_SANDBOX = "SKILLDECK_REQUIRE_SANDBOX"
ENV_OTLP_ENDPOINT = "SKILLDECK_TELEMETRY_OTLP_ENDPOINT"
ENV_SKILLS_DIR = ("SKILLS_DIR", "SKILLDECK_SKILLS_DIR")
ENV_CUSTOM_SKILLS_DIR = ("CUSTOM_SKILLS_DIR", "SKILLDECK_CUSTOM_SKILLS_DIR")
ENV_REFRESH_ON_CALL = ("SKILLS_REFRESH_ON_CALL", "SKILLDECK_SKILLS_REFRESH_ON_CALL")
"""The folder knobs and the per-call refresh switch: the bare spelling (the design's) and
the ``SKILLDECK_`` one, which wins when both are set."""

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def home_dir() -> Path:
    """Root of all Skilldeck state (not created here)."""
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("skilldeck", appauthor=False))


def cache_dir() -> Path:
    """Where caches live: ``SKILLDECK_HOME/cache`` or the platform cache dir."""
    if os.environ.get(ENV_HOME):
        return home_dir() / "cache"
    return Path(platformdirs.user_cache_dir("skilldeck", appauthor=False))


def config_path() -> Path:
    """The config file: ``SKILLDECK_CONFIG`` or ``SKILLDECK_HOME/config.toml``."""
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env).expanduser()
    return home_dir() / "config.toml"


def bundled_skills_dir() -> Path:
    """The skills shipped with Skilldeck.

    In a wheel they sit inside the package (``skilldeck/bundled_skills``); in a source
    checkout (editable install, tests) they are the repository's top-level ``skills/``.
    """
    packaged = PACKAGE_DIR / "bundled_skills"
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent.parent / "skills"


@dataclass(slots=True)
class Settings:
    """User settings, from ``config.toml``.

    Attributes:
        extra_skill_dirs: More ``user``-level skill roots.
        registry_path: Governance registry (``registry.json``); default
            ``SKILLDECK_HOME/registry.json``.
        tools_file: Available-tools file; default ``SKILLDECK_HOME/tools.toml``.
        mcp_config: ``.mcp.json`` to query for MCP tools (None: look in the project).
        builtin_tools: Whether the built-in preset of common agent tools counts as available.
        tool_validation: ``strict``, ``warn`` or ``ignore`` for missing required tools.
        fail_on_invalid_skills: While any skill is invalid, ``serve`` refuses to start and
            CLI commands exit non-zero.
        instruction_hosts: Hosts (``example.com`` or ``host:port``) that skills may fetch
            ``instructions: {url: ...}`` from, on load only; empty: none.
        instruction_max_bytes: Size cap of fetched instructions in bytes.
        instruction_timeout_s: Deadline of one instructions fetch in seconds (wall clock,
            from the lookup to the last byte).
        session_mode: Default policy mode for new sessions.
        prompt_char_budget: Tier-1 listing budget in characters.
        body_token_cap: Tier-2 body cap in (approximate) tokens.
        resource_byte_cap: Tier-3 resource size cap in bytes.
        confidence_threshold: Agent-facing search confidence cut (0-1).
        telemetry: Local JSONL telemetry on or off.
        telemetry_retention_days: Days of telemetry files kept.
        telemetry_max_bytes: Size cap of one day's telemetry file.
        telemetry_otlp_endpoint: Also export telemetry events as OpenTelemetry logs to
            this OTLP/HTTP URL (``http://host:4318/v1/logs``; needs the ``otlp`` extra);
            '' (default): local JSONL only. ``SKILLDECK_TELEMETRY_OTLP_ENDPOINT`` wins.
        audit_retention_days: Days of audit log kept after sessions are pruned.
        semantic: Use the optional embedding signal when installed.
        semantic_model_path: A sentence-transformers model folder to embed with instead of
            the bundled all-MiniLM-L6-v2 (e.g. one in the Hugging Face cache).
            ``SKILLDECK_SEMANTIC_MODEL_PATH`` wins.
        allow_hardlinks: Read skill files that have more than one hard link (refused by
            default: a hard link can expose a file from outside the skill folder).
        sessions_url: ``postgresql://…`` URL of a shared sessions database (fleets of
            servers); empty: the embedded SQLite file ``sessions_db``. The environment
            variable ``SKILLDECK_SESSIONS_URL`` wins over the config file.
        skills_v1: Feature flag: the skills system as agents see it (off: the MCP server
            lists and loads no skills). ``SKILLDECK_SKILLS_V1`` (1/0) wins.
        skills_exec: Feature flag: script execution (off by default).
            ``SKILLDECK_SKILLS_EXEC`` (1/0) wins.
        require_sandbox: Refuse to run skill code below the ``bwrap`` sandbox level.
        exec_timeout_s: Wall-clock limit of one script run in seconds.
            ``SKILLDECK_EXEC_TIMEOUT_S`` wins.
        skills_dir: The shipped skills folder in place of the bundled one (relative: to
            the working folder). ``SKILLS_DIR`` / ``SKILLDECK_SKILLS_DIR`` win.
        custom_skills_dir: A custom skills folder whose skills override shipped ones of
            the same name (a ``user`` root; relative: to the working folder).
            ``CUSTOM_SKILLS_DIR`` / ``SKILLDECK_CUSTOM_SKILLS_DIR`` win.
        skills_refresh_on_call: The MCP server checks for changed skills before each
            call (off: only the background poll does). ``SKILLS_REFRESH_ON_CALL`` /
            ``SKILLDECK_SKILLS_REFRESH_ON_CALL`` (1/0) win.
        remotes: Remote skill catalogs (federation), one table per label: ``[remotes.team]``
            with ``url`` (+ ``token_file``) or ``command`` (a list), and optionally
            ``timeout_s``, ``ttl_s`` and ``review``; read by :mod:`skilldeck.core.remote`.
        sources: Where each setting that is not a default came from (``config.toml`` or
            the environment variable's name).
    """

    extra_skill_dirs: list[Path] = field(default_factory=list)
    registry_path: Path | None = None
    tools_file: Path | None = None
    mcp_config: Path | None = None
    builtin_tools: bool = True
    tool_validation: str = "warn"
    fail_on_invalid_skills: bool = False
    instruction_hosts: list[str] = field(default_factory=list)
    instruction_max_bytes: int = 256 * 1024
    instruction_timeout_s: float = 10.0
    session_mode: str = "approval"
    prompt_char_budget: int = 12_000
    body_token_cap: int = 5_000
    resource_byte_cap: int = 256 * 1024
    confidence_threshold: float = 0.75
    telemetry: bool = True
    telemetry_retention_days: int = 30
    telemetry_max_bytes: int = 10 * 1024 * 1024
    telemetry_otlp_endpoint: str = ""
    audit_retention_days: int = 365
    semantic: bool = True
    semantic_model_path: Path | None = None
    allow_hardlinks: bool = False
    sessions_url: str = ""
    skills_v1: bool = True
    skills_exec: bool = False
    exec_timeout_s: float = 60.0
    require_sandbox: bool = False
    skills_dir: Path | None = None
    custom_skills_dir: Path | None = None
    skills_refresh_on_call: bool = True
    remotes: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def registry_file(self) -> Path:
        """Resolved governance registry path."""
        return self.registry_path or home_dir() / "registry.json"

    @property
    def tools_path(self) -> Path:
        """Resolved tools file path."""
        return self.tools_file or home_dir() / "tools.toml"

    @property
    def sessions_db(self) -> Path:
        """SQLite sessions database."""
        return home_dir() / "sessions.db"

    @property
    def telemetry_dir(self) -> Path:
        """Folder of daily telemetry JSONL files."""
        return home_dir() / "telemetry"


_PATH_FIELDS = {
    "registry_path",
    "tools_file",
    "mcp_config",
    "semantic_model_path",
    "skills_dir",
    "custom_skills_dir",
}
_INTERNAL_FIELDS = {"diagnostics", "sources"}


def hardlinks_allowed() -> bool:
    """``allow_hardlinks`` from the config file, read again only when the file changed
    (readers of skill files ask this on every read: one ``stat``)."""
    path = config_path()
    try:
        info = os.stat(path)
        stamp = (str(path), info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = (str(path), 0, -1)
    return _hardlinks_allowed(stamp)


@functools.lru_cache(maxsize=4)
def _hardlinks_allowed(stamp: tuple[str, int, int]) -> bool:
    return load_settings(Path(stamp[0])).allow_hardlinks


def load_settings(path: Path | None = None) -> Settings:
    """Read settings; problems become diagnostics on the result, never exceptions."""
    settings = Settings()
    cfg = path or config_path()
    try:
        data: dict[str, Any] = tomllib.loads(cfg.read_text(encoding="utf-8"))
    except FileNotFoundError:
        _apply_env(settings)
        return settings
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        settings.diagnostics.append(
            Diagnostic("SC001", Severity.WARNING, f"config ignored: {exc}", path=cfg)
        )
        _apply_env(settings)
        return settings
    known = {f.name: f for f in fields(Settings) if f.name not in _INTERNAL_FIELDS}
    for key, value in data.items():
        attr = key.replace("-", "_")
        if attr not in known:
            settings.diagnostics.append(
                Diagnostic("SC003", Severity.WARNING, f"unknown config key {key!r}", path=cfg)
            )
            continue
        current = getattr(settings, attr)
        try:
            if attr == "extra_skill_dirs":
                value = [Path(str(v)).expanduser() for v in value]
            elif attr == "instruction_hosts":
                value = _host_list(value)
            elif attr in _PATH_FIELDS:
                value = Path(str(value)).expanduser()
            elif isinstance(current, bool):
                if not isinstance(value, bool):
                    raise TypeError("expected true or false")
            elif isinstance(current, int | float):
                value = type(current)(value)
            elif isinstance(current, str):
                value = str(value)
        except (TypeError, ValueError) as exc:
            settings.diagnostics.append(
                Diagnostic("SC004", Severity.WARNING, f"config key {key!r}: {exc}", path=cfg)
            )
            continue
        setattr(settings, attr, value)
        settings.sources[attr] = str(cfg)
    _apply_env(settings)
    return settings


def _host_list(value: Any) -> list[str]:
    """``instruction_hosts`` as lower-case host names; TypeError when not a list of
    strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("expected a list of host names")
    return [v.strip().lower() for v in value if v.strip()]


def _apply_env(settings: Settings) -> None:
    """Environment overrides win over the config file."""
    otlp = os.environ.get(ENV_OTLP_ENDPOINT)
    if otlp is not None:
        settings.telemetry_otlp_endpoint = otlp.strip()
        settings.sources["telemetry_otlp_endpoint"] = ENV_OTLP_ENDPOINT
    sessions_url = os.environ.get(ENV_SESSIONS_URL)
    if sessions_url is not None:
        settings.sessions_url = sessions_url.strip()
        settings.sources["sessions_url"] = ENV_SESSIONS_URL
    for name, attr in (
        (ENV_SKILLS_V1, "skills_v1"),
        (ENV_SKILLS_EXEC, "skills_exec"),
        (ENV_REQUIRE_SANDBOX, "require_sandbox"),
    ):
        _env_flag(settings, name, attr)
    _env_number(settings, ENV_EXEC_TIMEOUT, "exec_timeout_s", float)
    _env_number(settings, ENV_PROMPT_BUDGET, "prompt_char_budget", int)
    model = os.environ.get(ENV_SEMANTIC_MODEL, "").strip()
    if model:
        settings.semantic_model_path = Path(model).expanduser()
        settings.sources["semantic_model_path"] = ENV_SEMANTIC_MODEL
    for names, attr in (
        (ENV_SKILLS_DIR, "skills_dir"),
        (ENV_CUSTOM_SKILLS_DIR, "custom_skills_dir"),
    ):
        for name in names:
            folder = os.environ.get(name, "").strip()
            if folder:
                setattr(settings, attr, Path(folder).expanduser())
                settings.sources[attr] = name
    for name in ENV_REFRESH_ON_CALL:
        _env_flag(settings, name, "skills_refresh_on_call")


def _env_flag(settings: Settings, name: str, attr: str) -> None:
    """Set boolean ``attr`` from environment variable ``name`` (1/0, true/false, on/off)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        setattr(settings, attr, True)
    elif value in ("0", "false", "no", "off"):
        setattr(settings, attr, False)
    else:
        settings.diagnostics.append(
            Diagnostic("SC002", Severity.WARNING, f"{name}={raw!r} is not 1 or 0")
        )
        return
    settings.sources[attr] = name


def _env_number(settings: Settings, name: str, attr: str, kind: type[int] | type[float]) -> None:
    """Set numeric ``attr`` (at least 0) from environment variable ``name``."""
    raw = os.environ.get(name)
    if not raw:
        return
    try:
        setattr(settings, attr, max(kind(0), kind(raw)))
    except ValueError:
        settings.diagnostics.append(
            Diagnostic("SC002", Severity.WARNING, f"{name}={raw!r} is not a number")
        )
        return
    settings.sources[attr] = name


def masked_url(url: str) -> str:
    """``url`` with any password shown as ``***`` (in the user part or as a
    ``password=`` parameter): settings are printed, secrets never are."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


def effective_settings(settings: Settings) -> list[tuple[str, Any, str]]:
    """Every setting as ``(name, value, source)``; source is ``default``, the config file
    or the environment variable that set it (``skilldeck config``)."""
    rows: list[tuple[str, Any, str]] = []
    for item in fields(Settings):
        if item.name in _INTERNAL_FIELDS:
            continue
        value = getattr(settings, item.name)
        if item.name in ("sessions_url", "telemetry_otlp_endpoint") and value:
            value = masked_url(str(value))
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, list):
            value = [str(v) for v in value]
        rows.append((item.name, value, settings.sources.get(item.name, "default")))
    return rows
