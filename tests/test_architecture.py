"""The core never imports the UI or MCP; non-TUI CLI commands never import Textual."""

from __future__ import annotations

import ast
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


# -- one pipeline: only the core workspace wires discovery -> index ----------------------------

FACES = ("app", "cli", "mcp")
PIPELINE_NAMES = {"discover", "default_roots", "load_catalog", "refresh_skill"}
"""Discovery entry points only :mod:`skilldeck.core.workspace` may call."""


def _face_files() -> list[Path]:
    package = Path(skilldeck.core.__file__).parent.parent
    return sorted(p for face in FACES for p in (package / face).rglob("*.py"))


def _pipeline_uses(path: Path) -> list[str]:
    """Where ``path`` imports a discovery entry point or builds a search index itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("skilldeck.core.discovery"):
                names = {a.name for a in node.names} & (PIPELINE_NAMES | {"*"})
                found += [f"line {node.lineno}: imports {n}" for n in sorted(names)]
            if node.module.startswith("skilldeck.core.search"):
                names = {a.name for a in node.names} & {"SearchIndex", "load_or_build", "*"}
                if names and not _type_only(tree, node):
                    found += [f"line {node.lineno}: imports {n}" for n in sorted(names)]
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: imports {a.name}"
                for a in node.names
                if a.name.startswith(("skilldeck.core.discovery", "skilldeck.core.search"))
            ]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if node.func.attr in {"build", "load_or_build"} and (
                isinstance(owner, ast.Name) and owner.id in {"SearchIndex", "persist"}
            ):
                found.append(f"line {node.lineno}: calls {owner.id}.{node.func.attr}")
    return found


def _type_only(tree: ast.Module, node: ast.ImportFrom) -> bool:
    """True when ``node`` sits under ``if TYPE_CHECKING:`` (a name used in annotations)."""
    for block in ast.walk(tree):
        if (
            isinstance(block, ast.If)
            and isinstance(block.test, ast.Name)
            and block.test.id == "TYPE_CHECKING"
            and node in block.body
        ):
            return True
    return False


def test_faces_have_no_pipeline_of_their_own() -> None:
    """The CLI, TUI and MCP server use :class:`~skilldeck.core.workspace.Workspace`."""
    files = _face_files()
    assert len(files) > 20
    offenders = {
        str(p.relative_to(p.parents[2])): uses for p in files if (uses := _pipeline_uses(p))
    }
    assert offenders == {}, f"only skilldeck.core.workspace wires the pipeline: {offenders}"


def test_pipeline_check_catches_a_face_that_wires_its_own(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from skilldeck.core.discovery import default_roots, discover\n"
        "from skilldeck.core.search import SearchIndex\n"
        "index = SearchIndex.build([])\n",
        encoding="utf-8",
    )
    uses = _pipeline_uses(bad)
    assert any("discover" in u for u in uses) and any("default_roots" in u for u in uses)
    assert any("SearchIndex" in u for u in uses) and any("build" in u for u in uses)


def test_app_modules_do_not_import_the_app() -> None:
    """Screens, dialogs and widgets get the workspace from their constructor: no import of
    :mod:`skilldeck.app.app` (or the old state module) outside the app entry points."""
    package = Path(skilldeck.core.__file__).parent.parent / "app"
    allowed = {"app.py", "main.py"}
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name in allowed and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in (
                "skilldeck.app.app",
                "skilldeck.app.state",
                "skilldeck.app.main",
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_list_imports_no_numpy(tmp_path: Path) -> None:
    """Commands that do not search never load numpy (the search index's dependency)."""
    code = (
        "import sys\n"
        "from skilldeck.cli.main import main\n"
        f"main(['--root', {str(tmp_path)!r}, 'list', '--format', 'json'])\n"
        "print('NUMPY' if 'numpy' in sys.modules else 'CLEAN', file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "CLEAN" in out.stderr, out.stderr


def test_commands_that_do_not_search_import_no_numpy(tmp_path: Path) -> None:
    """``list``/``show``/``validate``/``lint``/``load`` start without numpy or the search
    engine (rapidfuzz too, except ``load``'s did-you-mean in core/loader/suggestions.py)."""
    skill = tmp_path / "alpha"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: Does alpha. Use when testing.\n---\n# Alpha\n",
        encoding="utf-8",
    )
    code = (
        "import sys\n"
        "from skilldeck.cli.main import main\n"
        "for cmd in (['list'], ['show', 'alpha'], ['validate'], ['lint'], ['load', 'alpha']):\n"
        "    try:\n"
        f"        main(['--root', {str(tmp_path)!r}, *cmd])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    heavy = {'numpy', 'skilldeck.core.search'}\n"
        "    if cmd[0] != 'load':\n"
        "        heavy.add('rapidfuzz')\n"
        "    bad = sorted(heavy.intersection(sys.modules))\n"
        "    print(cmd[0], ','.join(bad), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [
        line
        for line in out.stderr.splitlines()
        if line.split(" ")[0] in ("list", "show", "validate", "lint", "load")
    ]
    assert len(lines) == 5, out.stderr
    assert all(line.strip().count(" ") == 0 for line in lines), out.stderr
