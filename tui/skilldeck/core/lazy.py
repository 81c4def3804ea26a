"""Lazy package facades (PEP 562), as harlequin's package root loads its public names.

A core package's ``__init__.py`` only hands names on: it lists each public name with the
module that defines it, and :func:`facade` imports that module the first time the name is
used. Importing :mod:`skilldeck.core.sessions` therefore costs nothing until a face asks
for :class:`~skilldeck.core.sessions.SessionStore` (which then brings in the SQLite
backend), and :mod:`skilldeck.core.search` pulls numpy only for a name that needs it.
Type checkers read the same names from the package's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def facade(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``.

    Args:
        package: The package's ``__name__``.
        names: Each public name and the module of the package that defines it
            (``"module:attribute"`` when the module calls it something else).

    Returns:
        The two functions, for ``__getattr__, __dir__ = facade(__name__, _NAMES)``.
    """

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        value = getattr(importlib.import_module(f"{package}.{module}"), attribute or name)
        setattr(sys.modules[package], name, value)  # found once; a monkeypatch still wins
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
