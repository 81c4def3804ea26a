"""Skill fields from a parsed frontmatter mapping.

Wrong types never raise: the value is ignored or coerced and a diagnostic says so:
``SD111`` (no usable name), ``SD112`` (wrong type), and for the content model ``SD120``
(a bad ``parameters`` entry), ``SD121`` (a bad ``examples`` entry), ``SD122`` (a bad
``instructions`` value).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from skilldeck.core.model import (
    PARAMETER_TYPES,
    Diagnostic,
    Example,
    Parameter,
    Severity,
    Skill,
    ToolRef,
    Triggers,
)

_SEPARATORS = re.compile(r"[,\s]+")
_PRIORITY_TEXT = re.compile(r"\s*[-+]?\d{1,9}\s*")
_OPENERS, _CLOSERS = "([{", ")]}"
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
CONTENT_CODES = frozenset({"SD120", "SD121", "SD122"})
"""Diagnostics of the content model (``parameters``, ``examples``, ``instructions``)."""


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
    _extract_content(skill, fm)
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
        return [ToolRef(name, origin="tools") for name in split_allowed_tools(value)]
    entries = _tool_entries(skill, value)
    refs: list[ToolRef] = []
    bad = False
    for entry in entries or ():
        if isinstance(entry, str) and entry.strip():
            refs.append(ToolRef(entry.strip(), origin="tools"))
        elif isinstance(entry, dict) and _scalar_text(entry.get("name")):
            purpose = _scalar_text(entry.get("purpose")) or ""
            required = entry.get("required", False)
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


# --- content model: parameters, examples, instructions -------------------------------------


def _extract_content(skill: Skill, fm: dict[str, Any]) -> None:
    """``parameters``, ``examples`` and ``instructions``; bad shapes are left out with an
    SD120/SD121/SD122 warning naming what is wrong."""
    if "parameters" in fm:
        skill.parameters = _parameters(skill, fm["parameters"])
    if "examples" in fm:
        skill.examples = _examples(skill, fm["examples"])
    if "instructions" in fm:
        skill.instructions = _instructions(skill, fm["instructions"])


def _content_problem(skill: Skill, code: str, key: str, message: str) -> None:
    skill.diagnostics.append(
        Diagnostic(code, Severity.WARNING, message, skill.path, skill.field_lines.get(key))
    )


def _parameters(skill: Skill, value: Any) -> tuple[Parameter, ...]:
    if not isinstance(value, list):
        _content_problem(
            skill,
            "SD120",
            "parameters",
            f"'parameters' should be a list of mappings, not {type(value).__name__}; ignored",
        )
        return ()
    out: dict[str, Parameter] = {}
    for number, entry in enumerate(value, 1):
        parameter, problem = _parameter(entry)
        if problem is None and parameter is not None and parameter.name in out:
            problem = f"repeats the name {parameter.name!r}"
        if problem is not None or parameter is None:
            _content_problem(
                skill, "SD120", "parameters", f"'parameters' entry {number} {problem}; ignored"
            )
            continue
        out[parameter.name] = parameter
    return tuple(out.values())


def _parameter(entry: Any) -> tuple[Parameter | None, str | None]:
    """One ``parameters`` entry, or the reason it is unusable."""
    if not isinstance(entry, dict):
        return None, f"should be a mapping with a 'name', not {type(entry).__name__}"
    name = entry.get("name")
    if not isinstance(name, str) or not _PARAM_NAME.fullmatch(name.strip()):
        return (
            None,
            "needs a 'name' of at most 64 letters, digits, '_' or '-', "
            "starting with a letter or '_'",
        )
    unknown = sorted(str(k) for k in entry if k not in _PARAMETER_KEYS)
    if unknown:
        return None, f"has unknown keys: {', '.join(unknown)}"
    kind = entry.get("type", "string")
    if kind not in PARAMETER_TYPES:
        return None, f"has type {kind!r}, not one of {', '.join(PARAMETER_TYPES)}"
    description = entry.get("description", "")
    if not isinstance(description, str):
        return None, "has a 'description' that is not a string"
    required = entry.get("required", False)
    if not isinstance(required, bool):
        return None, "has a 'required' that is not true or false"
    return Parameter(
        name.strip(), " ".join(description.split()), kind, required, entry.get("default")
    ), None


_PARAMETER_KEYS = frozenset({"name", "description", "type", "required", "default"})


def _examples(skill: Skill, value: Any) -> tuple[Example, ...]:
    if not isinstance(value, list):
        _content_problem(
            skill,
            "SD121",
            "examples",
            f"'examples' should be a list, not {type(value).__name__}; ignored",
        )
        return ()
    out: list[Example] = []
    for number, entry in enumerate(value, 1):
        example = _example(entry)
        if example is None:
            _content_problem(
                skill,
                "SD121",
                "examples",
                f"'examples' entry {number} should be a string or a mapping with a 'request' "
                "string and a 'does' (or 'response') string; ignored",
            )
            continue
        out.append(example)
    return tuple(out)


def _example(entry: Any) -> Example | None:
    if isinstance(entry, str) and entry.strip():
        return Example(entry.strip())
    if not isinstance(entry, dict):
        return None
    request = entry.get("request")
    does = entry.get("does", entry.get("response", ""))
    if not isinstance(request, str) or not request.strip() or not isinstance(does, str):
        return None
    return Example(request.strip(), does.strip())


def _instructions(skill: Skill, value: Any) -> tuple[str, str] | None:
    """``("file", path)`` or ``("url", address)`` from ``{file: ...}`` / ``{url: ...}``."""
    problem = _instructions_problem(value)
    if problem is not None:
        _content_problem(
            skill, "SD122", "instructions", f"'instructions' {problem}; the body is used"
        )
        return None
    ((kind, target),) = value.items()
    return str(kind), target.strip()


def _instructions_problem(value: Any) -> str | None:
    if not isinstance(value, dict) or len(value) != 1:
        return "should be a mapping with one key, 'file' or 'url'"
    ((kind, target),) = value.items()
    if kind not in ("file", "url"):
        return f"has key {str(kind)!r}; use 'file' or 'url'"
    if not isinstance(target, str) or not target.strip():
        return f"{kind!r} should be a non-empty string"
    if kind == "url" and not target.strip().lower().startswith(("https://", "http://")):
        return "'url' should be an http(s) address"
    if kind == "file" and (target.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", target)):
        return "'file' should be a path inside the skill folder"
    return None
