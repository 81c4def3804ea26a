"""A hostile skills tree against the MCP server and the CLI, as subprocesses under rlimits.

The tree is built at test time: SKILL.md files that are symlinks to ``/dev/zero``,
``/dev/urandom`` and ``/etc/passwd``, a FIFO, 3 GB sparse files (one all zeros, one with
valid frontmatter before the zeros), resources that are devices or FIFOs, and names and
descriptions laden with terminal escapes. Every process runs with an address-space limit
(``RLIMIT_AS``, set in a small wrapper before ``exec``) and every call has a deadline, so
an unbounded read shows up as a failure here rather than as a machine running out of
memory. Asserted: no hang, no traceback, bounded memory, every good skill still listed,
and the server still answering and stopping afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

sys.path.insert(0, str(Path(__file__).parent / "mcp"))

from mcp_harness import ServerClient, make_home

from conftest import write_skill
from mcp import Client

LIMIT_BYTES = 1536 * 1024 * 1024
"""Address-space limit of each subprocess (threads reserve stacks, so not too tight)."""
PEAK_RSS_MB = 400
"""Largest resident memory a process may reach on the hostile tree."""
CALL_SECONDS = 20.0
GOOD = ("good-a", "good-b", "escape-desc")
SPARSE_BYTES = 3 * 1024**3

WRAPPER = """
import os, resource, sys
limit, pidfile, errfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
fd = os.open(errfile, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
os.dup2(fd, 2)
with open(pidfile, "w") as handle:
    handle.write(str(os.getpid()))
os.execv(sys.executable, [sys.executable, *sys.argv[4:]])
"""

READER = "core/loader/ and core/discovery/frontmatter.py (the SKILL.md reader)"


def build_hostile_tree(base: Path) -> Path:
    """Good skills next to hostile ones; returns the skills root."""
    root = base / "skills"
    for name in ("good-a", "good-b"):
        write_skill(
            root,
            name,
            description=f"Good skill {name} for hostile-tree tests. Use when testing.",
            body=f"# {name}\n\nSee reference/ok.md.\n",
        )
    folder = root / "good-a"
    (folder / "reference").mkdir()
    (folder / "reference" / "ok.md").write_text("fine\n", encoding="utf-8")
    (folder / "zero.txt").symlink_to("/dev/zero")
    (folder / "random.bin").symlink_to("/dev/urandom")
    os.mkfifo(folder / "pipe.txt")
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    write_skill(
        root,
        "escape-desc",
        description='"Clears \\e[2J the screen, sets \\e]0;pwned\\a the title, \\u202e'
        'reversed. Use when testing."',
        body="Body with \x1b[31mred\x1b[0m and \x1b]0;title\x07.\n",
    )
    evil = root / "evil-name"
    evil.mkdir()
    (evil / "SKILL.md").write_text(
        '---\nname: "evil\\e[2J\\e]0;x\\a"\ndescription: Evil name. Use when testing.\n---\nB\n',
        encoding="utf-8",
    )
    for name, target in (("zero", "/dev/zero"), ("urandom", "/dev/urandom")):
        (root / name).mkdir()
        (root / name / "SKILL.md").symlink_to(target)
    (root / "passwd").mkdir()
    (root / "passwd" / "SKILL.md").symlink_to("/etc/passwd")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")
    (root / "sparse").mkdir()
    with (root / "sparse" / "SKILL.md").open("wb") as handle:
        handle.truncate(SPARSE_BYTES)
    valid = write_skill(root, "sparse-valid", description="Sparse body. Use when testing.")
    with valid.open("r+b") as handle:
        handle.truncate(SPARSE_BYTES)
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile_tree(tmp_path_factory.mktemp("hostile"))


def _limited(args: list[str], scratch: Path) -> list[str]:
    """``python -c WRAPPER ...``: run ``python args`` under the limit, pid and stderr kept."""
    pidfile, errfile = scratch / "pid", scratch / "stderr"
    return ["-c", WRAPPER, str(LIMIT_BYTES), str(pidfile), str(errfile), *args]


def _peak_rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


class HostileServer:
    """``skilldeck serve`` on the hostile tree, under the address-space limit."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.scratch = scratch
        home = make_home(scratch / "home")
        self.server = ServerClient(root, home)
        self.server.params.args = _limited(self.server.params.args, scratch)
        self.server.start()
        self.pid = int((scratch / "pid").read_text(encoding="utf-8"))

    def run(self, action: Callable[[Client], Awaitable[Any]]) -> Any:
        """One request under the deadline (a hang fails the test; the server is killed)."""
        return self.server.run(action, timeout=CALL_SECONDS)

    def stderr(self) -> str:
        """What the server wrote on stderr so far."""
        return (self.scratch / "stderr").read_text(encoding="utf-8", errors="replace")

    def stop(self) -> tuple[bool, float]:
        """Close stdin; True when the server stopped within 15 s. Also its peak RSS."""
        peak = _peak_rss_mb(self.pid)
        self.server.close()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _alive(self.pid):
            time.sleep(0.1)
        stopped = not _alive(self.pid)
        if not stopped:
            os.kill(self.pid, signal.SIGKILL)
        return stopped, peak


@pytest.fixture
def served(hostile: Path, tmp_path: Path) -> Iterator[HostileServer]:
    server = HostileServer(hostile, tmp_path)
    try:
        yield server
    finally:
        if _alive(server.pid):
            os.kill(server.pid, signal.SIGKILL)


def _finish(served: HostileServer) -> None:
    """The server still answers, stops on EOF, stayed small and printed no traceback."""
    listed = served.run(lambda c: c.call_tool("list_skills", {}))
    assert set(GOOD) <= set(listed.structured_content["included"])
    stopped, peak = served.stop()
    assert stopped, "the server did not stop within 15 s of EOF"
    assert peak < PEAK_RSS_MB, f"peak resident memory {peak:.0f} MB"
    err = served.stderr()
    assert "Traceback" not in err, err[-3000:]
    assert "\x1b" not in err, "raw escapes reached the server's log"


def test_listing_search_and_resources_survive(served: HostileServer) -> None:
    listed = served.run(lambda c: c.call_tool("list_skills", {}))
    assert not listed.is_error and set(GOOD) <= set(listed.structured_content["included"])
    found = served.run(lambda c: c.call_tool("search_skills", {"query": "hostile tree tests"}))
    assert not found.is_error
    resources = served.run(lambda c: c.list_resources())
    names = {r.name for r in resources.resources}
    assert set(GOOD) <= names
    for name in GOOD:
        loaded = served.run(_skill_md_call("load", name))
        assert not loaded.is_error, loaded.content
    completion = served.run(
        lambda c: c.complete(
            types.ResourceTemplateReference(uri="skill://{name}/{+path}"),
            {"name": "path", "value": ""},
            {"name": "good-a"},
        )
    )
    assert "reference/ok.md" in completion.completion.values
    _finish(served)


HOSTILE_SKILLS = ["zero", "urandom", "fifo", "sparse", "sparse-valid", "passwd", "evil-name"]
UNBOUNDED_READER: dict[tuple[str, str], str] = {}
"""(call, skill) -> reason, for cases that fail because of the SKILL.md reader (see
:data:`READER`); marked xfail. Empty now: the confinement rule refuses devices, FIFOs and
symlinks out of the folder, and the MCP service refuses invalid skills (a 3 GB file of
NULs is SD101/SD107)."""
RESPONSE_MAX = 1024 * 1024
"""Largest answer (characters of JSON) to one call on a hostile SKILL.md."""


def _skill_md_call(kind: str, name: str) -> Callable[[Client], Awaitable[Any]]:
    if kind == "load":
        return lambda c: c.call_tool("load_skill", {"name": name})
    if kind == "read":
        return lambda c: c.call_tool("read_skill_resource", {"name": name, "path": "SKILL.md"})
    return lambda c: c.read_resource(f"skill://{name}/SKILL.md")


def _cases() -> list[Any]:
    cases = []
    for name in HOSTILE_SKILLS:
        for kind in ("load", "read", "resource"):
            reason = UNBOUNDED_READER.get((kind, name))
            marks = [pytest.mark.xfail(strict=False, reason=reason)] if reason else []
            cases.append(pytest.param(kind, name, marks=marks, id=f"{kind}-{name}"))
    return cases


@pytest.mark.parametrize(("kind", "name"), _cases())
def test_hostile_skill_md(served: HostileServer, kind: str, name: str) -> None:
    """load_skill, read_skill_resource SKILL.md and skill://NAME/SKILL.md end quickly and
    stay small (an error answer is fine; a timeout or a memory blow-up is not)."""
    try:
        answer = served.run(_skill_md_call(kind, name))
    except Exception as exc:  # an MCP error answer is expected; a timeout is not
        assert not isinstance(exc, TimeoutError), exc
    else:
        size = len(answer.model_dump_json())
        assert size < RESPONSE_MAX, f"{size} characters answered"
        assert kind != "resource", "a hostile SKILL.md was served as a resource"
        assert answer.is_error, f"the hostile skill {name!r} was served"
    _finish(served)


@pytest.mark.parametrize("path", ["zero.txt", "random.bin", "pipe.txt", "passwd.txt"])
def test_hostile_resources_are_bounded(served: HostileServer, path: str) -> None:
    result = served.run(
        lambda c: c.call_tool("read_skill_resource", {"name": "good-a", "path": path})
    )
    if path == "passwd.txt":
        assert result.is_error, "a symlink out of the skill folder must not be read"
    try:
        served.run(lambda c: c.read_resource(f"skill://good-a/{path}"))
    except Exception as exc:
        assert not isinstance(exc, TimeoutError), exc
    _finish(served)


def _cli(hostile: Path, scratch: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = make_home(scratch / "cli-home")
    env = {
        "SKILLDECK_HOME": str(home),
        "HOME": str(home / "user-home"),
        "NO_COLOR": "1",
        "PATH": os.environ.get("PATH", ""),
    }
    argv = _limited(["-m", "skilldeck", "--root", str(hostile), *args], scratch)
    return subprocess.run(
        [sys.executable, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


CLI_CASES = [
    ("list",),
    ("list", "--all"),
    ("--format", "json", "list", "--all"),
    ("search", "hostile tree tests"),
    ("validate",),
    ("lint",),
    ("prompt",),
    ("show", "good-a"),
    ("load", "good-a"),
    ("read", "good-a", "zero.txt"),
    ("read", "good-a", "pipe.txt"),
    ("load", "sparse-valid"),
    ("show", "sparse-valid"),
]


@pytest.mark.parametrize("args", CLI_CASES, ids=" ".join)
def test_cli_on_the_hostile_tree(hostile: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    """The CLI (owned elsewhere): only no hang, no traceback, bounded memory, good skills."""
    done = _cli(hostile, tmp_path, *args)
    err = (tmp_path / "stderr").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in err and "MemoryError" not in err, err[-3000:]
    assert done.returncode in (0, 1, 2), err[-2000:]
    if args[-1] in ("list", "--all") and args[0] != "--format":
        for name in ("good-a", "good-b"):
            assert name in done.stdout
    assert "\x1b" not in done.stdout or "--format" in args
