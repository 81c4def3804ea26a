"""Colours the terminal UI gives a meaning to, defined once.

Rich renderables (diagnostics, badges, tables) cannot name a theme variable such as
``$warning``, so the warning colour is read from the built-in theme here: a warning is the
same orange in a finding, a badge, a status line and a toast.
"""

from __future__ import annotations

from textual.theme import BUILTIN_THEMES

WARNING = BUILTIN_THEMES["textual-dark"].to_color_system().generate()["warning"]
"""The theme's warning colour (the same orange in the dark and the light theme)."""
WARNING_STYLE = f"bold {WARNING}"
"""A warning glyph or code."""
