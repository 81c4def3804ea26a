"""Skill fields from a parsed frontmatter mapping.

Wrong types never raise: the value is ignored or coerced and an ``SD111``/``SD112``
diagnostic says so.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from skilldeck.core.model import Diagnostic, Severity, Skill, ToolRef, Triggers

_SEPARATORS = re.compile(r"[,\s]+")
_PRIORITY_TEXT = re.compile(r"\s*[-+]?\d{1,9}\s*")
_OPENERS, _CLOSERS = "([{", ")]}"


def extract(skill: Skill, fm: dict[str, Any]) -> None:
    """Fill ``skill``'s fields from its frontmatter ``fm``."""
    _extract_name(skill, fm.get("name"))
    description = fm.get("description")
    if description is not None:
        text = _scalar_text(description)
        skill.description = text.strip() if text else ""
        if not isinstance(description, str):
            _wrong_type(skill, "description", "a string", description)
    meta = fm.get("metadata")
    _extract_meta(skill, fm, meta if isinstance(meta, dict) else None)
    for key in ("license", "compatibility"):
        value = fm.get(key)
        if value is not None:
            text = _scalar_text(value)
            if text is None:
                _wrong_type(skill, key, "a string", value)
            else:
                setattr(skill, key, text)
    raw_tools = fm.get("allowed-tools")
    if raw_tools is not None:
        skill.allowed_tools_raw = raw_tools
        if not isinstance(raw_tools, str | list):
            _wrong_type(skill, "allowed-tools", "a string or a list", raw_tools)
        skill.allowed_tools = split_allowed_tools(raw_tools)
    if "triggers" in fm:
        skill.triggers = _triggers(skill, fm["triggers"])
    skill.tools = tuple(_add_allowed_refs(_tools(skill, fm.get("tools")), skill.allowed_tools))
    _extract_priority(skill, fm.get("priority"))
    _extract_manifest(skill, fm)
    if "disable-model-invocation" in fm or "hide-from-discovery" in fm:
        skill.hidden = _truthy(fm.get("disable-model-invocation")) or _truthy(
            fm.get("hide-from-discovery")
        )


def _extract_manifest(skill: Skill, fm: dict[str, Any]) -> None:
    """``toolsets``, ``scripts``, ``default_enabled`` and ``brief_description`` (wrong types
    are left out here; validation reports them)."""
    toolsets = fm.get("toolsets")
    if isinstance(toolsets, list):
        names = [t if isinstance(t, str) else t.get("name") for t in toolsets if _entry(t)]
        skill.toolsets = tuple(n for n in names if isinstance(n, str) and n.strip())
    scripts = fm.get("scripts")
    if isinstance(scripts, list):
        paths = [s if isinstance(s, str) else s.get("path") for s in scripts if _entry(s)]
        skill.scripts = tuple(p for p in paths if isinstance(p, str) and p.strip())
    if isinstance(fm.get("default_enabled"), bool):
        skill.default_enabled = bool(fm["default_enabled"])
        skill.enabled = skill.default_enabled  # until a registry says otherwise
    brief = fm.get("brief_description")
    if isinstance(brief, str) and brief.strip():
        skill.brief_description = " ".join(brief.split())


def _entry(value: Any) -> bool:
    """A list entry that is a string or a mapping."""
    return isinstance(value, str | dict)


def _wrong_type(skill: Skill, key: str, expected: str, value: Any) -> None:
    skill.diagnostics.append(
        Diagnostic(
            "SD112",
            Severity.WARNING,
            f"{key!r} should be {expected}, not {type(value).__name__}",
            skill.path,
            skill.field_lines.get(key.split(".")[0]),
            None,
        )
    )


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, dict | list | tuple | set | bytes):
        return None
    return str(value)


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1")


def _extract_name(skill: Skill, name: Any) -> None:
    """``name`` when it is a non-blank scalar, else the folder name (SD111)."""
    name_text = _scalar_text(name)
    if name_text is not None and name_text.strip():
        skill.name = name_text.strip()
        if not isinstance(name, str):
            _wrong_type(skill, "name", "a string", name)
        return
    if name is None or (isinstance(name, str) and not name.strip()):
        message = f"no 'name' field; using the folder name {skill.base_dir.name!r}"
    else:
        message = f"'name' is a {type(name).__name__}; using the folder name"
    skill.diagnostics.append(
        Diagnostic("SD111", Severity.WARNING, message, skill.path, skill.field_lines.get("name"))
    )


def _extract_meta(skill: Skill, fm: dict[str, Any], meta: dict[str, Any] | None) -> None:
    """``version``, ``author`` and ``tags``, top-level or under ``metadata``."""
    key: str
    for attr in ("version", "author"):
        if attr in fm:
            key, value = attr, fm[attr]
        elif meta is not None and attr in meta:
            key, value = f"metadata.{attr}", meta[attr]
        else:
            continue
        if value is None:
            continue
        if isinstance(value, dict) and attr == "author":
            value = value.get("name")
        text = _scalar_text(value)
        if text is None:
            _wrong_type(skill, key, "a string", value)
        else:
            setattr(skill, attr, text)
    if "tags" in fm:
        key, tags = "tags", fm["tags"]
    elif meta is not None and "tags" in meta:
        key, tags = "metadata.tags", meta["tags"]
    else:
        return
    if isinstance(tags, str):
        skill.tags = tuple(dict.fromkeys(t for t in _SEPARATORS.split(tags) if t))
    elif isinstance(tags, list):
        skill.tags = tuple(dict.fromkeys(t for t in map(_scalar_text, tags) if t))
    elif tags is not None:
        _wrong_type(skill, key, "a list of strings", tags)


def _extract_priority(skill: Skill, priority: Any) -> None:
    if priority is None:
        return
    if isinstance(priority, int) and not isinstance(priority, bool):
        skill.priority = priority
    elif isinstance(priority, str) and _PRIORITY_TEXT.fullmatch(priority):
        skill.priority = int(priority)
    else:
        _wrong_type(skill, "priority", "an integer", priority)


def split_allowed_tools(value: object) -> tuple[str, ...]:
    """Normalise ``allowed-tools`` into tool patterns.

    Accepts a space- or comma-separated string or a list (whose items may themselves be
    separated). Separators inside parentheses are kept, so ``Bash(git log:*)`` stays one
    pattern. Duplicates are dropped, order kept.
    """
    items: list[str] = []
    if isinstance(value, str):
        items = list(_split_patterns(value))
    elif isinstance(value, list | tuple):
        for item in value:
            text = _scalar_text(item)
            if text:
                items.extend(_split_patterns(text))
    return tuple(dict.fromkeys(t for t in (i.strip() for i in items) if t))


def _split_patterns(text: str) -> tuple[str, ...]:
    """Split at commas and white space outside brackets (short texts are remembered:
    the same tool lists recur across skills)."""
    return _split_short(text) if len(text) <= 200 else _split_text(text)


@functools.lru_cache(maxsize=4096)
def _split_short(text: str) -> tuple[str, ...]:
    return _split_text(text)


def _split_text(text: str) -> tuple[str, ...]:
    if "(" not in text and "[" not in text and "{" not in text:
        return tuple(_SEPARATORS.split(text))  # no brackets: every separator splits
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth = max(0, depth - 1)
        elif depth == 0 and (char == "," or char.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        out.append("".join(current))
    return tuple(out)


def _str_list(skill: Skill, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(s.strip() for s in value.split(",") if s.strip())
    if isinstance(value, list):
        items = [_scalar_text(v) for v in value]
        if any(i is None for i in items):
            _wrong_type(skill, key, "a list of strings", value)
        return tuple(dict.fromkeys(i.strip() for i in items if i and i.strip()))
    _wrong_type(skill, key, "a list of strings", value)
    return ()


def _triggers(skill: Skill, value: Any) -> Triggers:
    if value is None:
        return Triggers()
    if isinstance(value, list | str):
        return Triggers(keywords=_str_list(skill, "triggers", value))
    if not isinstance(value, dict):
        _wrong_type(skill, "triggers", "a mapping or a list", value)
        return Triggers()
    unknown = sorted(str(k) for k in value if k not in ("keywords", "verbs", "patterns"))
    if unknown:
        skill.diagnostics.append(
            Diagnostic(
                "SD112",
                Severity.WARNING,
                f"'triggers' has unknown keys: {', '.join(unknown)}",
                skill.path,
                skill.field_lines.get("triggers"),
            )
        )
    return Triggers(
        keywords=_str_list(skill, "triggers.keywords", value.get("keywords")),
        verbs=_str_list(skill, "triggers.verbs", value.get("verbs")),
        patterns=_str_list(skill, "triggers.patterns", value.get("patterns")),
    )


def _tool_entries(skill: Skill, value: Any) -> list[Any] | None:
    """The ``tools`` value as a list of entries (None: wrong type, reported)."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [
            {"name": key, **spec} if isinstance(spec, dict) else {"name": key, "purpose": spec}
            for key, spec in value.items()
        ]
    _wrong_type(skill, "tools", "a list", value)
    return None


def _tools(skill: Skill, value: Any) -> list[ToolRef]:
    if value is None:
        return []
    if isinstance(value, str):
        return [ToolRef(name) for name in split_allowed_tools(value)]
    entries = _tool_entries(skill, value)
    refs: list[ToolRef] = []
    bad = False
    for entry in entries or ():
        if isinstance(entry, str) and entry.strip():
            refs.append(ToolRef(entry.strip()))
        elif isinstance(entry, dict) and _scalar_text(entry.get("name")):
            purpose = _scalar_text(entry.get("purpose")) or ""
            required = entry.get("required", True)
            if not isinstance(required, bool):
                required = _truthy(required)
            refs.append(ToolRef(str(entry["name"]).strip(), purpose.strip(), required, "tools"))
        else:
            bad = True
    if bad:
        skill.diagnostics.append(
            Diagnostic(
                "SD112",
                Severity.WARNING,
                "'tools' entries should be names or mappings with a 'name'",
                skill.path,
                skill.field_lines.get("tools"),
            )
        )
    return refs


def _add_allowed_refs(tools: list[ToolRef], allowed: tuple[str, ...]) -> list[ToolRef]:
    """Add a (not required) reference for each ``allowed-tools`` tool not listed yet."""
    known = {t.name for t in tools}
    for pattern in allowed:
        tool_name = pattern.split("(", 1)[0].strip()
        if tool_name and tool_name not in known:
            known.add(tool_name)
            tools.append(ToolRef(tool_name, "", False, "allowed-tools"))
    return tools
