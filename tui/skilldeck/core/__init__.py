"""Skilldeck's pure-Python core. It never imports ``textual`` or ``mcp``."""
