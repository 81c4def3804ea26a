"""Hybrid skill search."""
