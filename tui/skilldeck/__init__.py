"""Skilldeck: find, check, load and govern Agent Skills."""

__version__ = "0.1.0"
