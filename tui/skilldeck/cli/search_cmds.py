"""CLI commands (filled in by its owner)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Register this module's commands."""
    del sub
