"""The core never imports the UI or MCP; non-TUI CLI commands never import Textual; a face
goes through one door into each core package (its lazy facade), and a constant is defined
once."""

from __future__ import annotations

import ast
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import skilldeck.core


def _core_modules() -> list[str]:
    root = Path(skilldeck.core.__file__).parent
    names = ["skilldeck.core"]
    for info in pkgutil.walk_packages([str(root)], prefix="skilldeck.core."):
        names.append(info.name)
    return names


def test_the_checks_see_every_core_module() -> None:
    """The import checks below walk the core's packages: the walk must reach every module
    file (a folder without ``__init__.py`` would hide its modules from them)."""
    root = Path(skilldeck.core.__file__).parent
    files = {
        ".".join(("skilldeck", "core", *path.relative_to(root).with_suffix("").parts))
        for path in root.rglob("*.py")
    }
    assert set(_core_modules()) == {name.removesuffix(".__init__") for name in files}


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


# -- one door: one search on the workspace, one telemetry writer it owns ---------------------

REMOVED_SEARCH_DOORS = {"search_once", "agent_search", "rank", "explain"}
"""The search entry points ``Workspace.search`` replaced (issue #27)."""
LIMIT_NAMES = {"HUMAN_LIMIT", "AGENT_LIMIT"}
"""Defined once, in :mod:`skilldeck.core.limits`; faces import them."""
MODULE_TELEMETRY = {"emit", "configure", "default", "summarize"}
"""The module-level writer of :mod:`skilldeck.core.telemetry` (removed: the workspace owns
one :class:`~skilldeck.core.telemetry.Telemetry` and passes it down)."""


def _search_door_uses(path: Path) -> list[str]:
    """Where a face calls a removed search door on a workspace, imports the search
    module's ``agent_search`` or defines its own default limit."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if node.func.attr in REMOVED_SEARCH_DOORS and owner.endswith(("workspace", "ws")):
                found.append(f"line {node.lineno}: calls {owner}.{node.func.attr}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "skilldeck.core.search"
        ):
            if "agent_search" in {a.name for a in node.names}:
                found.append(f"line {node.lineno}: imports agent_search")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)} & LIMIT_NAMES
            found += [f"line {node.lineno}: defines {n}" for n in sorted(names)]
    return found


def _module_telemetry_uses(path: Path) -> list[str]:
    """Where ``path`` reaches for a module-level telemetry writer instead of a
    :class:`Telemetry` it was given."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.module == "skilldeck.core.telemetry":
                names = {a.name for a in node.names} & (MODULE_TELEMETRY | {"*"})
                found += [f"line {node.lineno}: imports {n}" for n in sorted(names)]
            elif node.module == "skilldeck.core" and any(a.name == "telemetry" for a in node.names):
                found.append(f"line {node.lineno}: imports the telemetry module")
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: imports {a.name}"
                for a in node.names
                if a.name == "skilldeck.core.telemetry"
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "emit"
        ):
            found.append(f"line {node.lineno}: calls emit()")
    return found


def _package_files() -> list[Path]:
    package = Path(skilldeck.core.__file__).parent.parent
    return sorted(package.rglob("*.py"))


def test_workspace_has_one_search_door() -> None:
    """``Workspace.search`` is the only search entry point; the old ones are gone."""
    from skilldeck.core.workspace import Workspace

    assert callable(Workspace.search)
    assert [n for n in sorted(REMOVED_SEARCH_DOORS) if hasattr(Workspace, n)] == []


def test_faces_search_through_the_one_door() -> None:
    """The CLI, TUI and MCP server call ``Workspace.search`` and import the limits."""
    files = _face_files()
    offenders = {
        str(p.relative_to(p.parents[2])): uses for p in files if (uses := _search_door_uses(p))
    }
    assert offenders == {}, f"faces search only through Workspace.search: {offenders}"


def test_no_module_level_telemetry() -> None:
    """Nothing in the package emits through a module-level writer (it read the settings
    from the environment, so a face's own settings were ignored)."""
    from skilldeck.core import telemetry

    assert [n for n in sorted(MODULE_TELEMETRY) if hasattr(telemetry, n)] == []
    package = Path(skilldeck.core.__file__).parent.parent
    offenders = {
        str(p.relative_to(package)): uses
        for p in _package_files()
        if (uses := _module_telemetry_uses(p))
    }
    assert offenders == {}, f"emit to the workspace's Telemetry: {offenders}"


def test_door_checks_catch_the_old_ways(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from skilldeck.core import telemetry\n"
        "from skilldeck.core.search import agent_search\n"
        "from skilldeck.core.telemetry import emit\n"
        "HUMAN_LIMIT = 20\n"
        "self.workspace.search_once('q', 3)\n"
        "ws.agent_search('q', 3)\n"
        "workspace.rank('q', 5)\n"
        "self.workspace.explain('q')\n"
        "self.query_one(ExplainView).explain(workspace, 'q', skill)\n"
        "emit('skill_loaded', name='x')\n",
        encoding="utf-8",
    )
    doors = _search_door_uses(bad)
    assert len(doors) == 6, doors  # the widget's own explain() is not a workspace door
    assert any("HUMAN_LIMIT" in u for u in doors)
    writers = _module_telemetry_uses(bad)
    assert len(writers) == 3, writers


def _events(home: Path) -> set[str]:
    return {
        json.loads(line)["event"]
        for path in (home / "telemetry").glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


def test_a_faces_settings_decide_its_telemetry(tmp_path: Path, isolated_home: Path) -> None:
    """Telemetry off in a face's Settings (left on in the environment and config): its
    search and load emit neither ``skill_selected`` nor ``skill_loaded``; on, they do."""
    from conftest import write_skill
    from skilldeck.core.config import Settings, load_settings
    from skilldeck.core.workspace import Workspace
    from skilldeck.mcp.service import SkillService

    root = tmp_path / "skills"
    write_skill(root, "csv-cleaner", "Clean CSV files. Use when a CSV file is messy.")
    assert load_settings().telemetry, "the environment leaves telemetry on"
    wanted = {"skill_selected", "skill_loaded"}
    for on in (False, True):
        settings = Settings(semantic=False, telemetry=on)
        workspace = Workspace(settings, [root])
        workspace.discover()
        workspace.search("clean csv files", scope="visible", agent=True)
        service = SkillService(settings, [root])
        try:
            service.search_skills("clean csv files")
            service.load_skill("csv-cleaner")
        finally:
            service.close()
        events = _events(isolated_home)
        assert (wanted <= events) if on else events.isdisjoint(wanted), (on, events)


# -- one write door: faces change state only through Workspace.actions -----------------------

WRITE_NAMES = {
    "load_skill",
    "read_resource",
    "record_load",
    "load_and_record",
    "read_and_record",
    "execute",
    "call_toolset",
    "mount_toolset",
    "record_shown",
    "approve",
}
"""Core functions that change state (load, read, record, run, call, mount, approve a remote
skill): only :class:`~skilldeck.core.workspace.Actions` and
:class:`~skilldeck.core.workspace.RemoteSource` call them."""
SECOND_SEARCH = {"CombinedSearch", "Federation", "SearchIndex"}
"""What a face would use to search (or list remote skills) beside ``Workspace.search`` and
``Workspace.remotes``."""
WRITE_METHODS = {"activate_skill"} | {
    "add_pending",
    "append_audit",
    "create_session",
    "end_session",
    "set_tool_state",
}
"""Store (and storage backend) methods a face would call to compose a load or a session
change itself (``Actions.load``/``force_load``/``create``/``end``…)."""
STORE_WRITES = {
    "approve",
    "deny",
    "revoke",
    "set_mode",
    "create",
    "end",
    "check",
    "prune",
    "record",
    "request_approval",
}
"""Session changes a face makes through ``Actions`` (``approve``, ``deny``, ``revoke``,
``set_mode``, ``create``, ``end``, ``check``, ``prune``; ``record`` and
``request_approval`` are the core's), never on a store: there the operator-only rule, the
ended-session rule and the audit rows are applied once."""


def _core_module_names(tree: ast.Module) -> set[str]:
    """Local names bound to a ``skilldeck.core`` module (``from skilldeck.core import
    loader``, ``import skilldeck.core.loader as loader``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "skilldeck.core":
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.asname and "skilldeck.core" in a.name)
    return names


def _is_store(owner: ast.expr) -> bool:
    """``store``, ``self.deck.store``, ``self.store()``, ``self._store``, ``store.backend``:
    an expression that names a session store (or its storage)."""
    text = ast.unparse(owner).removesuffix("()").removesuffix(".backend")
    return text.rsplit(".", 1)[-1].lstrip("_").endswith("store")


def _write_door_uses(path: Path) -> list[str]:
    """Where ``path`` imports or calls a core write function, composes a load with the
    store, or reaches a second search path."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules = _core_module_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skilldeck.core"):
            names = {a.name for a in node.names} & (WRITE_NAMES | SECOND_SEARCH)
            if names and not _type_only(tree, node):
                found += [f"line {node.lineno}: imports {n}" for n in sorted(names)]
        elif isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in modules:
                if node.attr in WRITE_NAMES | SECOND_SEARCH:
                    found.append(f"line {node.lineno}: uses {owner.id}.{node.attr}")
            elif node.attr in WRITE_METHODS or (node.attr in STORE_WRITES and _is_store(owner)):
                found.append(f"line {node.lineno}: calls {ast.unparse(owner)}.{node.attr}")
    return found


def test_faces_change_state_only_through_the_write_door() -> None:
    """The CLI, TUI and MCP server load, read, run, call toolsets, mount, start, end and
    govern sessions (approve, deny, revoke, mode, check, prune) and reach remote catalogs
    through ``Workspace.actions``, ``Workspace.remotes`` and ``Workspace.search``; none
    composes them from the core's functions (issue #33: nine such call sites let the faces
    disagree)."""
    files = _face_files()
    offenders = {
        str(p.relative_to(p.parents[2])): uses for p in files if (uses := _write_door_uses(p))
    }
    assert offenders == {}, f"faces change state only through Workspace.actions: {offenders}"


def test_write_door_check_catches_a_face_that_writes_itself(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from skilldeck.core import execution, loader, remote\n"
        "from skilldeck.core.loader import load_skill, record_load\n"
        "from skilldeck.core.remote import CombinedSearch\n"
        "loader.load_and_record(skill)\n"
        "execution.execute(settings, skill, 'x', [])\n"
        "execution.call_toolset(settings, skill, 's', 't', {})\n"
        "remote.Federation(settings).listing()\n"
        "remote.approve(entry, digest)\n"
        "store.activate_skill(sid, 'x', [])\n"
        "self.deck.store.deny(sid, 'Bash')\n"
        "store.revoke(sid, 'Bash', actor='operator')\n"
        "store.set_mode(sid, 'permissive')\n"
        "self.deck.store.create(actor='operator')\n"
        "self.store().end(sid, actor='agent')\n"
        "self._store.check(sid, 'Bash')\n"
        "session_store.prune(30)\n"
        "store.backend.end_session(sid, 'operator', 0.0)\n"
        "workspace.actions.end(actor='operator', session=here)\n"  # the door: fine
        "self.sessions.end(client_key)\n"  # the MCP's client sessions: not a store
        "install.check(lock)\n"  # an install check: not a store
        "workspace.actions.load('x', actor='cli', source='cli')\n"  # the door: fine
        "workspace.actions.approve('Bash', actor='operator', session=here)\n"  # fine
        "self.workspace.remotes.approve('team:x', digest)\n"  # the remote source: fine
        "service.load_skill('x')\n",  # the MCP tool of that name: not a core module
        encoding="utf-8",
    )
    uses = _write_door_uses(bad)
    assert len(uses) == 17, uses
    assert not any(w in u for u in uses for w in ("workspace", "service", "sessions", "install"))


# -- one door for store notices ----------------------------------------------------------------

NOTICE_WRITE = re.compile(r"\.notices\s*(?:\.(?:append|extend|insert)\(|\+=)")
"""A store's notices changed by hand instead of through ``LocalStore.notice``."""


def _notice_writes(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"line {n}: {t.strip()}" for n, t in enumerate(lines, 1) if NOTICE_WRITE.search(t)]


def test_store_notices_have_one_door() -> None:
    """Only :meth:`~skilldeck.core.store.LocalStore.notice` adds a notice to a store."""
    store = Path(skilldeck.core.__file__).parent / "store.py"
    offenders = {
        str(p): uses for p in _package_files() if p != store and (uses := _notice_writes(p))
    }
    assert offenders == {}, f"use store.notice(text): {offenders}"
    assert len(_notice_writes(store)) == 1  # inside notice() itself


def test_notice_check_catches_a_direct_append(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("store.notices.append('x')\nself.notices += ['y']\nnotices += ['ok']\n")
    assert len(_notice_writes(bad)) == 2


# -- one door into each core package: lazy facades, no deep imports, constants defined once ---


def _core_packages() -> list[Path]:
    core = Path(skilldeck.core.__file__).parent
    return sorted(p.parent for p in core.glob("*/__init__.py"))


CORE_PACKAGES = {p.name for p in _core_packages()}
"""``skilldeck.core.<pkg>`` packages: a face imports their names from the package itself."""


def _deep_imports(path: Path) -> list[str]:
    """Where ``path`` imports ``skilldeck.core.<pkg>.<module>`` instead of the package."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if len(parts) > 3 and parts[:2] == ["skilldeck", "core"] and parts[2] in CORE_PACKAGES:
                found.append(f"line {node.lineno}: imports {module}")
    return found


def test_faces_import_core_packages_through_their_facades() -> None:
    """The CLI, TUI and MCP server import ``from skilldeck.core.<pkg> import X``: the
    modules inside a package can be split, merged or renamed without touching a face."""
    assert {"sessions", "search", "install", "workspace"} <= CORE_PACKAGES
    offenders = {
        str(p.relative_to(p.parents[2])): uses for p in _face_files() if (uses := _deep_imports(p))
    }
    assert offenders == {}, f"import from the package, not its modules: {offenders}"


def test_deep_import_check_catches_a_module_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from skilldeck.core.install.sync import MARKER\n"
        "import skilldeck.core.sessions.sqlite\n"
        "from skilldeck.core.install import check\n"  # the facade: fine
        "from skilldeck.core.limits import AGENT_LIMIT\n"  # a plain module: fine
        "def f():\n"
        "    from skilldeck.core.search.evaluate import select_split\n",
        encoding="utf-8",
    )
    assert [u.split(":")[0] for u in _deep_imports(bad)] == ["line 1", "line 2", "line 6"]


SHARED_CONSTANTS: dict[tuple[str, str], str] = {}
"""Constants allowed in two modules with the same name and value, and why."""

_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")


def _literal_constants(path: Path) -> list[tuple[str, str]]:
    """The module-level ``UPPER_CASE = <literal>`` assignments of ``path`` (name, value)."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            literal = ast.literal_eval(value)
        except ValueError:
            continue
        found += [
            (t.id, repr(literal))
            for t in targets
            if isinstance(t, ast.Name) and _CONSTANT.fullmatch(t.id)
        ]
    return found


def _duplicated_constants(files: list[Path]) -> dict[tuple[str, str], list[str]]:
    homes: dict[tuple[str, str], list[str]] = {}
    for path in files:
        for constant in _literal_constants(path):
            homes.setdefault(constant, []).append(path.name)
    return {k: v for k, v in homes.items() if len(v) > 1}


def test_constants_are_defined_once() -> None:
    """A constant copied into a second module drifts (the session modes were defined four
    times, the search limits three): define it once and import it."""
    duplicated = _duplicated_constants(_package_files())
    assert set(duplicated) - set(SHARED_CONSTANTS) == set(), duplicated
    assert set(SHARED_CONSTANTS) <= set(duplicated), "an allowed pair is gone: drop it"


def test_constant_check_catches_a_copy(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text('MODES = ("strict", "approval")\nLIMIT = 3\n_PRIVATE = 1\n')
    (tmp_path / "b.py").write_text('MODES = ("strict", "approval")\nLIMIT = 4\n_PRIVATE = 1\n')
    duplicated = _duplicated_constants(sorted(tmp_path.glob("*.py")))
    assert list(duplicated) == [("MODES", "('strict', 'approval')")]


INIT_MAX_LINES = 40
"""Lines of a package ``__init__.py`` besides its docstring and its lists of names."""


class InitParts(NamedTuple):
    """What a package ``__init__.py`` holds."""

    lines: int
    """Non-blank lines besides the docstring and the name lists (``__all__``, the lazy
    table ``_NAMES`` and its docstring, the ``if TYPE_CHECKING:`` imports)."""
    exported: set[str]
    """The names in ``__all__``."""
    lazy: set[str]
    """The names of the lazy table."""
    for_types: set[str]
    """The names imported under ``if TYPE_CHECKING:``."""
    eager: set[str]
    """The names imported when the package is (besides :func:`skilldeck.core.lazy.facade`)."""
    defined: list[str]
    """The functions and classes it defines."""


def _init_parts(path: Path) -> InitParts:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    listed: set[int] = set()
    parts = InitParts(0, set(), set(), set(), set(), [])
    for node in tree.body:
        span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            listed |= span  # the module's docstring, or the lazy table's
        elif (
            isinstance(node, ast.Assign)
            and isinstance(target, ast.Name)
            and target.id
            in (
                "__all__",
                "_NAMES",
            )
        ):
            listed |= span
            names = set(ast.literal_eval(node.value))
            (parts.exported if target.id == "__all__" else parts.lazy).update(names)
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            listed |= span
            imports = [s for s in node.body if isinstance(s, ast.Import | ast.ImportFrom)]
            parts.for_types.update(a.asname or a.name for s in imports for a in s.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skilldeck."):
            parts.eager.update(a.asname or a.name for a in node.names if a.name != "facade")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            parts.defined.append(node.name)
    text = path.read_text(encoding="utf-8").splitlines()
    counted = sum(1 for n, line in enumerate(text, 1) if line.strip() and n not in listed)
    return parts._replace(lines=counted)


def _init_problem(path: Path) -> str | None:
    """What is wrong with the package ``__init__.py`` at ``path``, or None."""
    parts = _init_parts(path)
    if parts.lines >= INIT_MAX_LINES or parts.defined:
        return f"{parts.lines} lines, defines {parts.defined}"
    if parts.lazy and parts.exported != parts.lazy | parts.eager:
        return f"__all__ vs the lazy table: {sorted(parts.exported ^ parts.lazy)}"
    if parts.lazy != parts.for_types:
        return f"TYPE_CHECKING vs the lazy table: {sorted(parts.lazy ^ parts.for_types)}"
    return None


def test_package_inits_only_hand_names_on() -> None:
    """Each package ``__init__.py`` hands names on (lazily, for the core packages) and
    holds no implementation: no functions or classes, a few lines besides the name lists;
    ``__all__``, the lazy table and the type checkers' imports list the same names."""
    package = Path(skilldeck.core.__file__).parent.parent
    inits = sorted(package.rglob("__init__.py"))
    assert len(inits) > 10
    problems = {
        str(p.relative_to(package)): problem for p in inits if (problem := _init_problem(p))
    }
    assert problems == {}, problems
    assert len([p for p in inits if _init_parts(p).lazy]) == len(_core_packages())


def test_init_check_catches_implementation_and_drift(tmp_path: Path) -> None:
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        '"""Doc."""\n\nfrom typing import TYPE_CHECKING\n\n'
        "if TYPE_CHECKING:\n    from skilldeck.core.x.a import f, g\n\n"
        '__all__ = ["f", "g"]\n_NAMES = {"f": "a", "g": "a"}\n',
        encoding="utf-8",
    )
    assert _init_problem(lazy) is None
    drifted = tmp_path / "drifted.py"
    drifted.write_text(lazy.read_text().replace('"g": "a"', '"h": "a"'), encoding="utf-8")
    assert "lazy table" in (_init_problem(drifted) or "")
    fat = tmp_path / "fat.py"
    fat.write_text('"""Doc."""\n\ndef helper() -> None:\n    pass\n', encoding="utf-8")
    assert "defines ['helper']" in (_init_problem(fat) or "")
    long = tmp_path / "long.py"
    long.write_text("".join(f"X{i} = {i}\n" for i in range(INIT_MAX_LINES)), encoding="utf-8")
    assert "40 lines" in (_init_problem(long) or "")


def test_facades_are_lazy_and_complete() -> None:
    """Importing a core package imports none of its modules (``sessions`` no SQLite
    backend, ``search`` no numpy); every name of its ``__all__`` then resolves, to the
    right thing even once every module of the package is imported."""
    packages = [f"skilldeck.core.{p.name}" for p in _core_packages()]
    code = (
        "import importlib, pkgutil, sys, types\n"
        f"packages = {packages!r}\n"
        "for name in packages: importlib.import_module(name)\n"
        "inner = sorted(m for m in sys.modules if m.count('.') > 2 and m.split('.')[2]\n"
        "               in {p.split('.')[2] for p in packages})\n"
        "print('EAGER', ' '.join(m for m in inner if not m.endswith('.evaluate')))\n"
        "print('NUMPY', 'numpy' in sys.modules)\n"
        "for name in packages:\n"
        "    pkg = sys.modules[name]\n"
        "    for info in pkgutil.iter_modules(pkg.__path__):\n"
        "        importlib.import_module(f'{name}.{info.name}')\n"
        "bad = [f'{p}.{n}' for p in packages for n in sys.modules[p].__all__\n"
        "       if isinstance(getattr(sys.modules[p], n), types.ModuleType)]\n"
        "print('MODULES', ' '.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["EAGER ", "NUMPY False", "MODULES "], out.stdout


# -- one walk of a skill folder ----------------------------------------------------------------

FOLDER_LISTERS = {"scandir", "walk", "fwalk", "listdir", "iterdir", "rglob"}
"""Calls that list a folder: in ``core/`` only :mod:`skilldeck.core.skillfolder` lists a
skill folder's files (one skip list, one name rule, one digest)."""
OTHER_LISTINGS = {
    "skillfolder.py": "the one walk of a skill folder",
    "discovery/scan.py": "finds skill folders under a root (never inside a skill)",
    "discovery/pipeline.py": "lists a root's ``.agents/skills``-style folders for skills",
    "loader/resources.py": "lists one folder beside a missing path for did-you-mean hints",
    "install/review.py": "find_skill_folders: finds skills in a fetched repository",
    "install/local_copy.py": "copies a local source by folder descriptors, race-free, before "
    "the review walks the copy",
    "install/staging.py": "a stage folder of its own, not a skill",
    "install/archive.py": "checks that an extraction target is empty",
    "agents/visibility.py": "lists the skill folders under an agent's root",
    "execution/shown_paths.py": "folders named in a run's arguments, not the skill",
    "telemetry.py": "its own telemetry folder",
    "search/semantic.py": "the embedding model's cache folder",
}
"""Modules of ``core/`` that list a folder which is not a skill folder's files, and why."""


def _folder_listings(path: Path) -> list[str]:
    """Where ``path`` calls ``os.scandir``, ``os.walk`` (or one imported from ``os``),
    ``Path.iterdir`` or ``Path.rglob``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    from_os = {
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "os"
        for a in node.names
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = ast.unparse(func.value)
            hit = func.attr in {"iterdir", "rglob"} or (
                owner == "os" and func.attr in FOLDER_LISTERS
            )
            name = func.attr
        else:
            name = getattr(func, "id", "")
            hit = name in from_os and name in FOLDER_LISTERS
        if hit:
            found.append(f"line {node.lineno}: {name}")
    return found


def test_skill_folders_are_walked_in_one_place() -> None:
    """Every reader of a skill folder's files (the snapshot approvals pin, the install lock
    and review, lint, the installer hash) goes through :func:`skilldeck.core.skillfolder
    .walk`: a module that lists folders itself must say here why it is not a skill's files."""
    core = Path(skilldeck.core.__file__).parent
    listing = {
        p.relative_to(core).as_posix(): uses
        for p in sorted(core.rglob("*.py"))
        if (uses := _folder_listings(p))
    }
    offenders = {k: v for k, v in listing.items() if k not in OTHER_LISTINGS}
    assert offenders == {}, f"walk a skill folder with skilldeck.core.skillfolder.walk: {offenders}"
    assert set(OTHER_LISTINGS) <= set(listing), "a module no longer lists folders: drop it"


def test_walk_check_catches_a_private_walk(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os\nfrom os import scandir\nfor x in os.walk(d): pass\nlist(scandir(d))\n"
        "list(path.iterdir())\nlist(path.rglob('*'))\nskillfolder.walk(d)\nwalk(d)\n",
        encoding="utf-8",
    )
    assert [u.split(": ")[1] for u in _folder_listings(bad)] == [
        "walk",
        "scandir",
        "iterdir",
        "rglob",
    ]


# -- one rule system: one catalogue, no validate <-> lint cycle, small core modules ----------

CORE_MAX_LINES = 600
"""Lines of any core module: past this, split it by what its parts do."""
OVER_MAX_LINES: dict[str, str] = {}
"""Core modules allowed over :data:`CORE_MAX_LINES` for now, and why."""


def _long_modules(root: Path, limit: int) -> dict[str, int]:
    """The ``.py`` files under ``root`` with more than ``limit`` lines, by relative path."""
    counts = {
        p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(root.rglob("*.py"))
    }
    return {path: n for path, n in counts.items() if n > limit}


def test_no_core_module_is_over_600_lines() -> None:
    long = _long_modules(Path(skilldeck.core.__file__).parent, CORE_MAX_LINES)
    assert set(long) - set(OVER_MAX_LINES) == set(), f"split these: {long}"
    assert set(OVER_MAX_LINES) <= set(long), "a module is back under the limit: drop it"


def test_line_check_catches_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 601, encoding="utf-8")
    (tmp_path / "short.py").write_text("x = 1\n" * 600, encoding="utf-8")
    assert _long_modules(tmp_path, CORE_MAX_LINES) == {"pkg/long.py": 601}


def _runtime_imports(path: Path, package: str) -> set[str]:
    """The modules under ``package`` that ``path`` imports when it runs (at module level or
    inside a function; ``if TYPE_CHECKING:`` imports do not run). Importing a package
    counts as importing every module in it: its facade can hand any of them on."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            # ``from pkg import module`` imports the module, ``from pkg import name`` the pkg
            names = [n if _is_module(n, path, package) else node.module for n in names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n == package or n.startswith(package + "."))
    return found


def _is_module(name: str, path: Path, package: str) -> bool:
    """Whether ``name`` (under ``package``) is a module or package file, found from the
    package root above ``path``."""
    if not name.startswith(package + "."):
        return False
    root = next(p for p in path.parents if p.name == package.rsplit(".", 1)[-1])
    rel = Path(*name.removeprefix(package + ".").split("."))
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def _import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports at run time, packages expanded."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join((package, *path.relative_to(root).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for target in _runtime_imports(path, package):
            inside = {m for m in modules if m.startswith(target + ".")}
            edges |= inside | ({target} if target in modules else set())
        graph[name] = edges - {name}
    return graph


def _reaches(graph: dict[str, set[str]], start: set[str], goal: set[str]) -> bool:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in graph.get(todo.pop(), set()):
            if nxt in goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _mutual(graph: dict[str, set[str]], a: str, b: str) -> bool:
    """Whether some module of ``a`` reaches one of ``b`` and back (an import cycle)."""
    side_a = {m for m in graph if m == a or m.startswith(a + ".")}
    side_b = {m for m in graph if m == b or m.startswith(b + ".")}
    return _reaches(graph, side_a, side_b) and _reaches(graph, side_b, side_a)


def test_validate_and_lint_do_not_import_each_other() -> None:
    """Validation may reuse lint (the shipped profile's dead links), lint never needs
    validation: both read their rules from :mod:`skilldeck.core.rules`, which imports
    neither."""
    graph = _import_graph(Path(skilldeck.core.__file__).parent, "skilldeck.core")
    assert not _mutual(graph, "skilldeck.core.validate", "skilldeck.core.lint")
    assert not _reaches(
        graph,
        {m for m in graph if m.startswith("skilldeck.core.rules")},
        {"skilldeck.core.validate", *(m for m in graph if m.startswith("skilldeck.core.lint"))},
    )


def test_cycle_check_catches_a_cycle_through_a_third_module(tmp_path: Path) -> None:
    root = tmp_path / "core"
    (root / "lint").mkdir(parents=True)
    (root / "validate.py").write_text("from core.lint import lint_skill\n", encoding="utf-8")
    (root / "lint" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.validate import x\n",
        encoding="utf-8",
    )
    (root / "lint" / "engine.py").write_text(
        "def f():\n    from core import fieldspec\n", encoding="utf-8"
    )
    (root / "fieldspec.py").write_text("SEMVER = 1\n", encoding="utf-8")
    assert not _mutual(_import_graph(root, "core"), "core.validate", "core.lint")
    (root / "fieldspec.py").write_text("import core.validate\n", encoding="utf-8")
    assert _mutual(_import_graph(root, "core"), "core.validate", "core.lint")


_CODE = re.compile(r"S[DVLTI]\d{3}")


def _codes_in(path: Path) -> set[str]:
    """Every ``S[DVLTI]NNN`` code in the string literals of ``path`` (messages, tables,
    f-string parts, docstrings)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {
        code
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for code in _CODE.findall(node.value)
    }


def test_every_code_the_core_names_is_in_the_catalogue() -> None:
    """A code reported, documented or matched anywhere in ``core/`` has its rule in the one
    catalogue, so ``skilldeck rules CODE`` explains it."""
    from skilldeck.core.rules import CATALOGUE

    core = Path(skilldeck.core.__file__).parent
    named = {
        p.relative_to(core).as_posix(): missing
        for p in sorted(core.rglob("*.py"))
        if (missing := _codes_in(p) - set(CATALOGUE))
    }
    assert named == {}, f"add these codes to skilldeck.core.rules: {named}"


def test_code_check_reads_every_kind_of_string(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Reports SD777."""\nX = {"SV888": 1}\ndef f(n):\n    return f"ST999 {n} SI12"\n'
        "# SL555 in a comment is not a string\n",
        encoding="utf-8",
    )
    assert _codes_in(bad) == {"SD777", "SV888", "ST999"}
