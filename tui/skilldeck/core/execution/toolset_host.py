#!/usr/bin/env python3 -I -S
"""The toolset host: the child process that loads a skill's toolset module and answers
one request, ``describe`` or ``call`` (the protocol is in :mod:`.toolsets`).

This file is self-contained (standard library only). It is never run from the package:
the server runs its text in the sandbox, as ``python -I -S -c SOURCE OP MODULE ATTR LABEL
-`` with the request (JSON) on standard input, so the child has neither site-packages nor
the project on its path, and the module it loads is in the private copy of the pinned
skill folder whose digest was approved. ``LABEL`` is the module's path inside the skill
folder (the working directory); it names the module in messages and sets ``__file__``.

The answer is one JSON object written to the original standard output: ``{"ok": true,
...}`` or ``{"ok": false, "error": {"kind": ..., "message": ...}}``. Whatever the tools
print goes to standard error, so it cannot forge or corrupt the answer line.

Importing this module (as the server does, for :data:`SCHEMA_TYPES`) runs nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

SCHEMA_TYPES: dict[str, str] = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}
"""Python type names a tool parameter may use, and their JSON Schema types."""

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
MODULE_NAME = "skill_toolset"


class ToolsetError(Exception):
    """A problem reported to the server as ``{"ok": false, "error": ...}``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def type_schema(hint: Any) -> dict[str, Any] | None:
    """The JSON Schema of a parameter annotation, or None when it is not supported."""
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if hint is list:
        return {"type": "array"}
    if hint is dict:
        return {"type": "object"}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and len(args) == 1 and args[0] in _PRIMITIVES:
        return {"type": "array", "items": {"type": _PRIMITIVES[args[0]]}}
    if origin is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        if len(kept) == 1 and len(args) == 2:
            return type_schema(kept[0])
    return None


def _accepts(schema: dict[str, Any], value: Any, optional: bool) -> bool:
    if value is None:
        return optional
    kind = schema.get("type")
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int)
    if kind == "number":
        return isinstance(value, int | float)
    if kind == "string":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    if not isinstance(value, list):
        return False
    items = schema.get("items")
    return items is None or all(_accepts(items, v, False) for v in value)


def describe_tool(name: str, fn: Callable[..., Any]) -> dict[str, Any]:
    """``{name, description, input_schema}`` of one tool, or ``{name, error}``."""
    doc = inspect.getdoc(fn) or ""
    entry: dict[str, Any] = {"name": name, "description": doc.strip().split("\n", 1)[0]}
    try:
        hints = typing.get_type_hints(fn)
        signature = inspect.signature(fn)
    except Exception as exc:
        return {**entry, "error": f"cannot read the signature: {type(exc).__name__}: {exc}"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            return {
                **entry,
                "error": f"parameter {param.name}: *args, **kwargs and "
                "positional-only parameters are not supported",
            }
        if param.name not in hints:
            return {**entry, "error": f"parameter {param.name} has no type annotation"}
        schema = type_schema(hints[param.name])
        if schema is None:
            return {
                **entry,
                "error": f"parameter {param.name}: type {hints[param.name]!r} "
                "is not supported (str, int, float, bool, list[...], dict, Optional)",
            }
        if param.default is param.empty:
            required.append(param.name)
        elif _json_ready(param.default):
            schema["default"] = param.default
        properties[param.name] = schema
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    return {**entry, "input_schema": input_schema}


def _json_ready(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def load_module(path: str, label: str) -> types.ModuleType:
    """Execute the module copy at ``path`` (named ``label`` in messages)."""
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        code = compile(source, label, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ToolsetError("module_error", f"{label} line {exc.lineno}: {exc.msg}") from None
    except (OSError, ValueError) as exc:
        raise ToolsetError("module_error", f"cannot read {label}: {exc}") from None
    except (RecursionError, MemoryError):
        raise ToolsetError("module_error", f"{label} is nested too deeply to compile") from None
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = os.path.join(os.getcwd(), label)
    sys.modules[MODULE_NAME] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        raise ToolsetError(
            "module_error", f"importing {label} failed: {_what(exc, label)}"
        ) from None
    return module


def tools_of(module: types.ModuleType, attr: str, label: str) -> dict[str, Callable[..., Any]]:
    """The tools named by ``attr``: a class's public methods, or a list of functions."""
    if not hasattr(module, attr):
        raise ToolsetError("module_error", f"{label} has no attribute {attr!r}")
    target = getattr(module, attr)
    found: dict[str, Callable[..., Any]] = {}
    if inspect.isclass(target):
        try:
            instance = target()
        except BaseException as exc:
            raise ToolsetError("module_error", f"{attr}() failed: {_what(exc, label)}") from None
        for name in dir(target):
            static = inspect.getattr_static(target, name)
            plain = static.__func__ if isinstance(static, staticmethod | classmethod) else static
            if not name.startswith("_") and inspect.isfunction(plain):
                found[name] = getattr(instance, name)
    elif isinstance(target, list | tuple):
        for item in target:
            if not inspect.isfunction(item):
                raise ToolsetError("module_error", f"{attr} holds {item!r}, not a function")
            found[item.__name__] = item
    else:
        raise ToolsetError("module_error", f"{attr} is not a class or a list of functions")
    if not found:
        raise ToolsetError("module_error", f"{attr} has no public tools")
    return found


def _what(exc: BaseException, label: str) -> str:
    """``Type: message`` plus the deepest line of ``label`` in the traceback."""
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == label:
            where = f" ({label} line {tb.tb_lineno})"
        tb = tb.tb_next
    return f"{type(exc).__name__}: {exc}{where}"


def describe(tools: dict[str, Callable[..., Any]]) -> dict[str, Any]:
    """The ``describe`` answer."""
    entries = [describe_tool(name, fn) for name, fn in sorted(tools.items())]
    return {"ok": True, "tools": entries}


def call(tools: dict[str, Callable[..., Any]], request: dict[str, Any], label: str) -> Any:
    """The ``call`` answer: check the arguments against the tool's schema, run it."""
    name, arguments = request.get("tool"), request.get("arguments")
    if not isinstance(name, str) or name not in tools:
        raise ToolsetError("unknown_tool", f"no tool {name!r} (tools: {', '.join(sorted(tools))})")
    if not isinstance(arguments, dict):
        raise ToolsetError("bad_arguments", "arguments must be a JSON object")
    entry = describe_tool(name, tools[name])
    if "error" in entry:
        raise ToolsetError("bad_tool", f"{name}: {entry['error']}")
    schema = entry["input_schema"]
    problems = [f"missing {key!r}" for key in schema.get("required", []) if key not in arguments]
    for key, value in arguments.items():
        rules = schema["properties"].get(key)
        if rules is None:
            problems.append(f"unknown argument {key!r}")
        elif not _accepts(
            rules, value, "default" in rules or key not in schema.get("required", [])
        ):
            problems.append(f"argument {key!r} must be {rules.get('type')}")
    if problems:
        raise ToolsetError("bad_arguments", f"{name}: " + "; ".join(problems))
    try:
        result = tools[name](**arguments)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
    except BaseException as exc:
        raise ToolsetError("tool_error", f"{name} raised {_what(exc, label)}") from None
    return {"ok": True, "result": result}


def main(argv: list[str]) -> int:
    """Answer one request; always exit 0 once the answer is written."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything the tools print goes to stderr
    try:
        if len(argv) < 4 or argv[0] not in ("describe", "call"):
            raise ToolsetError("usage", "usage: HOST describe|call MODULE ATTR LABEL [REQUEST]")
        op, path, attr, label = argv[:4]
        tools = tools_of(load_module(path, label), attr, label)
        answer = describe(tools) if op == "describe" else call(tools, _request(argv), label)
        text = json.dumps(answer, default=str, ensure_ascii=True)
    except ToolsetError as exc:
        text = _failure(exc.kind, exc.message)
    except (TypeError, ValueError, RecursionError) as exc:
        text = _failure("bad_result", f"the result is not JSON: {type(exc).__name__}: {exc}")
    out.write(text + "\n")
    out.flush()
    return 0


def _request(argv: list[str]) -> dict[str, Any]:
    try:
        if argv[4] == "-":
            request = json.load(sys.stdin)
        else:
            with open(argv[4], encoding="utf-8") as handle:
                request = json.load(handle)
    except (IndexError, OSError, ValueError) as exc:
        raise ToolsetError("usage", f"cannot read the request: {exc}") from None
    if not isinstance(request, dict):
        raise ToolsetError("usage", "the request must be a JSON object")
    return request


def _failure(kind: str, message: str) -> str:
    return json.dumps({"ok": False, "error": {"kind": kind, "message": message}})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
