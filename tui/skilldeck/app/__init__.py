"""Textual terminal UI over the core."""
