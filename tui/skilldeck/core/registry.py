"""Governance registry: owner, tags and ``enabled`` per skill name, from ``registry.json``.

Two shapes are accepted::

    {"skills": {"name": {"owner": "team", "tags": ["x"], "enabled": false,
                         "tool-validation": "strict"}}}
    {"name": {"owner": "team", "enabled": false}}

(``"skills"`` may also be a list of objects with a ``name``; an entry may be a bare boolean
meaning ``enabled``.) The user's registry is ``settings.registry_file``; a repository may
also ship ``registry.json`` inside a skills root (``<root>/registry.json`` or
``<root>/skills/registry.json``), honoured for the skills of that root. Disabled skills are
not listed to models but stay visible to operators. SKILL.md files are never touched.

Codes:
    SD210 the registry file cannot be read or is not valid JSON
    SD211 an entry of the registry is malformed (ignored)
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Diagnostic, Severity, Skill

REGISTRY_NAME = "registry.json"
_MODES = ("strict", "warn", "ignore")


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    """Governance facts about one skill name."""

    owner: str | None = None
    tags: tuple[str, ...] = ()
    enabled: bool | None = None
    """``enabled`` as written (None: not said, so the skill's ``default_enabled`` holds)."""
    tool_validation: str | None = None


@dataclass(slots=True)
class Registry:
    """A loaded registry: entries by skill name, plus problems found while loading."""

    entries: dict[str, RegistryEntry] = field(default_factory=dict)
    path: Path | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Registry:
        """Read ``path``; a missing file gives an empty registry, a bad one diagnostics."""
        registry = cls(path=path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return registry
        except (OSError, UnicodeDecodeError) as exc:
            registry._problem("SD210", f"registry ignored: cannot read it ({exc})")
            return registry
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            registry.diagnostics.append(
                Diagnostic(
                    "SD210",
                    Severity.WARNING,
                    f"registry ignored: invalid JSON ({exc.msg})",
                    path,
                    exc.lineno,
                    exc.colno,
                )
            )
            return registry
        for name, raw in _raw_entries(data, registry):
            entry = registry._entry(name, raw)
            if entry is not None:
                registry.entries[name] = entry
        return registry

    def _problem(self, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(code, Severity.WARNING, message, self.path))

    def _entry(self, name: str, raw: Any) -> RegistryEntry | None:
        if isinstance(raw, bool):
            return RegistryEntry(enabled=raw)
        if not isinstance(raw, dict):
            self._problem("SD211", f"registry entry {name!r} must be an object; ignored")
            return None
        enabled = raw.get("enabled")
        if enabled is not None and not isinstance(enabled, bool):
            self._problem("SD211", f"registry entry {name!r}: 'enabled' must be true or false")
            enabled = None
        owner = raw.get("owner")
        if owner is not None and not isinstance(owner, str):
            self._problem("SD211", f"registry entry {name!r}: 'owner' must be a string")
            owner = None
        tags_raw = raw.get("tags", [])
        if isinstance(tags_raw, str):
            tags_raw = [tags_raw]
        if not isinstance(tags_raw, list) or not all(isinstance(t, str) for t in tags_raw):
            self._problem("SD211", f"registry entry {name!r}: 'tags' must be a list of strings")
            tags_raw = []
        mode = raw.get("tool-validation", raw.get("tool_validation"))
        if mode is not None and (not isinstance(mode, str) or mode not in _MODES):
            self._problem(
                "SD211",
                f"registry entry {name!r}: 'tool-validation' must be one of {', '.join(_MODES)}",
            )
            mode = None
        return RegistryEntry(
            owner=owner, tags=tuple(tags_raw), enabled=enabled, tool_validation=mode
        )

    def get(self, name: str) -> RegistryEntry | None:
        """The entry for ``name``, if any."""
        return self.entries.get(name)

    def apply(self, skills: Iterable[Skill]) -> None:
        """Set ``enabled`` and ``owner`` and merge ``tags`` on the skills named here."""
        if not self.entries:
            return
        for skill in skills:
            entry = self.entries.get(skill.name)
            if entry is None:
                continue
            if entry.enabled is not None:
                skill.enabled = entry.enabled
            if entry.owner is not None:
                skill.owner = entry.owner
            if entry.tool_validation is not None:
                skill.tool_validation = entry.tool_validation
            if entry.tags:
                skill.tags = tuple(dict.fromkeys((*skill.tags, *entry.tags)))


def _raw_entries(data: Any, registry: Registry) -> list[tuple[str, Any]]:
    if not isinstance(data, dict):
        registry._problem("SD210", "registry ignored: the top level must be an object")
        return []
    skills = data.get("skills")
    if isinstance(skills, dict):
        return [(str(k), v) for k, v in skills.items()]
    if isinstance(skills, list):
        out: list[tuple[str, Any]] = []
        for item in skills:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                out.append((item["name"], item))
            else:
                registry._problem("SD211", "registry list entries need a 'name'; one ignored")
        return out
    return [(str(k), v) for k, v in data.items() if k not in ("skills", "version", "$schema")]


def root_registry_paths(root: Path) -> list[Path]:
    """Registry files a skills root may ship, existing ones only."""
    candidates = [root / REGISTRY_NAME, root / "skills" / REGISTRY_NAME]
    return [p for p in candidates if p.is_file()]


def set_enabled(path: Path, name: str, enabled: bool, default: bool = True) -> None:
    """Enable or disable ``name`` in the registry at ``path`` (atomic write).

    Other entries and keys are kept; the file is created when missing. The registry only
    records exceptions: setting a skill back to its ``default`` (its ``default_enabled``
    field, true unless the skill says otherwise) removes the ``enabled`` key, and an entry
    left with nothing else, rather than writing the default down.

    Raises:
        SkilldeckError: INVALID_PARAM when the existing file is not a valid registry
            (it is left untouched), PERMISSION_DENIED / EXECUTION_ERROR on write failure.
    """
    data: Any
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {"skills": {}}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"registry {path} is not readable JSON; not changed: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"registry {path} is not a JSON object")
    skills = data.get("skills")
    if isinstance(skills, list):
        for i, item in enumerate(skills):
            if isinstance(item, dict) and item.get("name") == name:
                if _set_flag(item, enabled, default, keep={"name"}):
                    del skills[i]
                break
        else:
            if enabled != default:
                skills.append({"name": name, "enabled": enabled})
    else:
        table: dict[str, Any]
        if isinstance(skills, dict):
            table = skills
        elif "skills" in data:
            raise SkilldeckError(ErrorCode.INVALID_PARAM, f"registry {path}: 'skills' is malformed")
        elif data:
            table = data  # top-level mapping of names
        else:
            table = data["skills"] = {}
        current = table.get(name)
        if isinstance(current, dict):
            if _set_flag(current, enabled, default, keep=set()):
                del table[name]
        elif enabled != default:
            table[name] = {"enabled": enabled}
    _atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _set_flag(entry: dict[str, Any], enabled: bool, default: bool, *, keep: set[str]) -> bool:
    """Record ``enabled`` in ``entry``, or drop the key when it is the ``default``. True
    when nothing but ``keep`` keys is left, so the entry itself can go."""
    if enabled == default:
        entry.pop("enabled", None)
        return set(entry) <= keep
    entry["enabled"] = enabled
    return False


def _atomic_write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".registry-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except PermissionError as exc:
        raise SkilldeckError(ErrorCode.PERMISSION_DENIED, f"cannot write {path}") from exc
    except OSError as exc:
        raise SkilldeckError(ErrorCode.EXECUTION_ERROR, f"cannot write {path}: {exc}") from exc
