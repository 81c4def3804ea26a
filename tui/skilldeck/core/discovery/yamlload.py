"""Load frontmatter YAML safely: PyYAML's C loader (pure-Python fallback), imported lazily.

Diagnostics: SD103 (syntax, with line and column), SD104 (empty or not a mapping), SD105
(duplicate keys, with position), SD115 (nested too deeply or expanding too much).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from skilldeck.core.model import Diagnostic, Severity

MAX_NODES = 20_000
"""A frontmatter whose values (aliases expanded) exceed this many nodes is refused."""

_LINE_OFFSET = 2  # the YAML text starts on file line 2, after the opening fence


@functools.cache
def _loader_class() -> type[Any]:
    """A safe loader class that records duplicate mapping keys with their position."""
    import yaml
    from yaml.nodes import MappingNode, ScalarNode

    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc,valid-type]
        duplicates: list[tuple[str, int, int]]

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, MappingNode):
                seen: set[tuple[str, str]] = set()
                for key_node, _value in node.value:
                    if not isinstance(key_node, ScalarNode) or key_node.value == "<<":
                        continue
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        mark = key_node.start_mark
                        self.duplicates.append((str(key_node.value), mark.line, mark.column))
                    seen.add(key)
            result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            return result

    return Loader


def load_mapping(
    text: str, path: Path, diags: list[Diagnostic], field_lines: dict[str, int]
) -> dict[str, Any] | None:
    """The frontmatter mapping of ``text`` (keys as strings), or None when unusable.

    Problems are appended to ``diags``; ``field_lines`` receives the 1-based file line of
    each top-level key.
    """
    import yaml

    loader = _loader_class()(text)
    loader.duplicates = []
    try:
        node = loader.get_single_node()
        if node is None:
            diags.append(
                Diagnostic("SD104", Severity.ERROR, "the frontmatter is empty", path, 2, 1)
            )
            return None
        _note_lines(node, field_lines)
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        diags.append(_syntax_error(exc, text, path))
        return None
    except RecursionError:
        message = "frontmatter is nested too deeply"
        diags.append(Diagnostic("SD115", Severity.ERROR, message, path, 2, 1))
        return None
    finally:
        loader.dispose()
    for key, line0, col0 in sorted(loader.duplicates, key=lambda d: (d[1], d[2])):
        message = f"duplicate key {key!r}: the last value wins"
        diags.append(
            Diagnostic("SD105", Severity.WARNING, message, path, line0 + _LINE_OFFSET, col0 + 1)
        )
    return _checked(data, path, diags, aliases="*" in text)


def _note_lines(node: Any, field_lines: dict[str, int]) -> None:
    from yaml.nodes import MappingNode, ScalarNode

    if isinstance(node, MappingNode):
        for key_node, _value in node.value:
            if isinstance(key_node, ScalarNode):
                line = key_node.start_mark.line + _LINE_OFFSET
                field_lines.setdefault(str(key_node.value), line)


def _checked(
    data: Any, path: Path, diags: list[Diagnostic], aliases: bool
) -> dict[str, Any] | None:
    """``data`` when it is a mapping of bounded size (only ``aliases`` can blow it up),
    with its keys as strings."""
    if not isinstance(data, dict):
        message = f"the frontmatter must be a mapping of fields, not a {type(data).__name__}"
        diags.append(Diagnostic("SD104", Severity.ERROR, message, path, 2, 1))
        return None
    if aliases and _too_big(data):
        message = "frontmatter expands too much (aliases or recursion); ignored"
        diags.append(Diagnostic("SD115", Severity.ERROR, message, path, 2, 1))
        return None
    return {k if isinstance(k, str) else str(k): v for k, v in data.items()}


def _unterminated_quote(exc: Exception, text: str, path: Path) -> Diagnostic | None:
    """SD103 at the opening quote of a quoted value the frontmatter never closes (YAML
    itself points at the end of the text)."""
    start = getattr(exc, "context_mark", None)
    problem = str(getattr(exc, "problem", ""))
    if (
        start is None
        or getattr(exc, "context", None) != "while scanning a quoted scalar"
        or not ("end of stream" in problem or "document separator" in problem)
    ):
        return None
    index = getattr(start, "index", -1)
    quote = text[index : index + 1] if 0 <= index < len(text) else ""
    shown = f"{quote} " if quote in ("'", '"') else ""
    message = f"YAML error: unterminated {shown}quote: the value that starts here is never closed"
    line, column = start.line + _LINE_OFFSET, start.column + 1
    return Diagnostic("SD103", Severity.ERROR, message, path, line, column)


def _syntax_error(exc: Exception, text: str, path: Path) -> Diagnostic:
    quote = _unterminated_quote(exc, text, path)
    if quote is not None:
        return quote
    line, column = _yaml_position(exc, text)
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["syntax error"])[0]
    context = getattr(exc, "context", None)
    message = f"YAML error: {problem}" + (f" ({context})" if context else "")
    return Diagnostic("SD103", Severity.ERROR, message, path, line, column)


def _yaml_position(exc: Exception, text: str) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return mark.line + _LINE_OFFSET, mark.column + 1
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        line = text.count("\n", 0, position)
        column = position - (text.rfind("\n", 0, position) + 1)
        return line + _LINE_OFFSET, column + 1
    return None, None


def _too_big(value: Any) -> bool:
    """True when walking ``value`` (aliases expanded) visits more than :data:`MAX_NODES`."""
    budget = MAX_NODES
    stack = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
    return False
