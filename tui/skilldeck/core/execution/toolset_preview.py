"""Reading a toolset module's tools from its source, without running it (what the TUI
lists before a module is approved; see :mod:`.toolsets` for the protocol)."""

from __future__ import annotations

import ast
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.toolset_host import SCHEMA_TYPES


@dataclass(frozen=True, slots=True)
class ToolsetTool:
    """One tool of a toolset module.

    Attributes:
        name: The tool's own name (the method or function name).
        description: The first line of its docstring.
        input_schema: JSON Schema of its arguments object.
    """

    name: str
    description: str
    input_schema: dict[str, Any]


def preview_tools(source: bytes, attr: str, label: str = "module") -> list[tuple[ToolsetTool, str]]:
    """The tools of ``attr`` read from the module's source, without running it: pairs of
    a tool and a problem (empty when the tool is fine).

    Only what the protocol allows is understood (a class defined in the module, or a
    list of functions defined in it); the child's ``describe`` is what mounts.

    Raises:
        SkilldeckError: EXECUTION_ERROR (reason ``module_error``) when the source does not
            parse (a syntax error, or nesting too deep for the parser: a 200,000-term
            expression), or ``attr`` is not found as a class or a list of functions.
    """
    try:
        tree = ast.parse(source, filename=label)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise _module_error(f"{label} line {line}: {getattr(exc, 'msg', exc)}") from exc
    except (RecursionError, MemoryError):
        raise _too_deep(label) from None
    try:
        return _read_tools(tree, attr, label)
    except (RecursionError, MemoryError):  # a deep string annotation or default
        raise _too_deep(label) from None


def _too_deep(label: str) -> SkilldeckError:
    return _module_error(
        f"{label} is nested too deeply to read (an expression with too many terms)",
        problem="too_deep",
    )


def _read_tools(tree: ast.Module, attr: str, label: str) -> list[tuple[ToolsetTool, str]]:
    """The tools of ``attr`` in the parsed module ``tree`` (see :func:`preview_tools`)."""
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == attr:
            found = [
                (item.name, item, not _is_static(item))
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and not item.name.startswith("_")
            ]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and _assigns(node, attr):
            items = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else None
            if items is None:
                raise _module_error(f"{attr} is not a class or a list of functions")
            names = [e.id for e in items if isinstance(e, ast.Name) and e.id in functions]
            found = [(name, functions[name], False) for name in names]
    if not found:
        raise _module_error(f"{label} defines no class or list of functions {attr!r}")
    return [_preview_one(name, fn, bound) for name, fn, bound in sorted(found)]


def _assigns(node: ast.Assign | ast.AnnAssign, attr: str) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == attr for t in targets)


def _is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _preview_one(
    name: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool
) -> tuple[ToolsetTool, str]:
    doc = (ast.get_docstring(fn) or "").strip().split("\n", 1)[0]
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        return ToolsetTool(name, doc, {}), "*args, **kwargs and positional-only parameters"
    params = args.args[1:] if bound else args.args
    defaults: list[ast.expr | None] = [None] * (len(params) - len(args.defaults))
    pairs = list(zip(params, [*defaults, *args.defaults], strict=False))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=False))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param, default in pairs:
        schema = _annotation_schema(param.annotation)
        if schema is None:
            return ToolsetTool(name, doc, {}), f"parameter {param.arg}: missing or unsupported type"
        if default is None:
            required.append(param.arg)
        else:
            with contextlib.suppress(ValueError, TypeError, SyntaxError):
                value = ast.literal_eval(default)
                json.dumps(value)
                schema["default"] = value
        properties[param.arg] = schema
    schema_out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema_out["required"] = required
    return ToolsetTool(name, doc, schema_out), ""


def _annotation_schema(node: ast.expr | None) -> dict[str, Any] | None:
    """The schema of an annotation written in the source (see the protocol above)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        kind = SCHEMA_TYPES.get(name.lower() if name in ("List", "Dict") else name)
        return {"type": kind} if kind else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        kept = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        return _annotation_schema(kept[0]) if len(kept) == 1 else None
    if isinstance(node, ast.Subscript):
        outer = _annotation_schema(node.value) if not _named(node.value, "Optional") else None
        if _named(node.value, "Optional"):
            return _annotation_schema(node.slice)
        if outer is not None and outer["type"] == "array":
            inner = _annotation_schema(node.slice)
            if inner is None or inner["type"] in ("array", "object"):
                return None
            return {"type": "array", "items": inner}
        if outer is not None and outer["type"] == "object":
            return outer
    return None


def _named(node: ast.expr, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (
        isinstance(node, ast.Attribute) and node.attr == name
    )


def _module_error(message: str, **details: object) -> SkilldeckError:
    return SkilldeckError(ErrorCode.EXECUTION_ERROR, message, reason="module_error", **details)
