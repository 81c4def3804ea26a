"""The core never imports the UI or MCP; non-TUI CLI commands never import Textual."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import skilldeck.core

FORBIDDEN = ("textual", "mcp")


def _core_modules() -> list[str]:
    root = Path(skilldeck.core.__file__).parent
    names = ["skilldeck.core"]
    for info in pkgutil.walk_packages([str(root)], prefix="skilldeck.core."):
        names.append(info.name)
    return names


def test_core_has_modules() -> None:
    assert len(_core_modules()) > 5


def test_core_never_imports_textual_or_mcp() -> None:
    code = (
        "import importlib, sys\n"
        f"mods = {_core_modules()!r}\n"
        "for m in mods: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'mcp'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_cli_list_does_not_import_textual(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from skilldeck.cli.main import main\n"
        f"main(['--root', {str(tmp_path)!r}, 'list', '--format', 'json'])\n"
        "bad = any(k.split('.')[0] in ('textual', 'mcp') for k in sys.modules)\n"
        "print('TEXTUAL' if bad else 'CLEAN', file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "CLEAN" in out.stderr, out.stderr
