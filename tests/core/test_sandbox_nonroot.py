"""The sandbox as a non-root user gets it: a real user made for the test runs the very
command line Skilldeck builds, against a real server on 127.0.0.1 that the host can reach,
at both levels (``bwrap`` with a user namespace, and ``unshare -r --net``); under ``bwrap``
the script has no capability and the seccomp filter refuses file handles."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilldeck.core.execution import sandbox, seccomp

USER = "skilldeck-sandbox-test"
PROBE = """\
import os, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()
    print("network")
except OSError:
    print("no network")
print(os.getuid())
if len(sys.argv) > 2:
    import ctypes, struct
    status = open("/proc/self/status").read().splitlines()
    caps = [int(line.split()[1], 16) for line in status if line.startswith("Cap")]
    print("no-caps" if not any(caps) else "caps")
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(struct.pack("Ii", 128, 0) + bytes(128))
    mount_id = ctypes.c_int()
    done = libc.name_to_handle_at(-100, b"/usr", buf, ctypes.byref(mount_id), 0)
    print("handle-ok" if done == 0 else os.strerror(ctypes.get_errno()).replace(" ", "-"))
"""


@pytest.fixture(scope="module")
def user() -> tuple[int, int]:
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to create a non-root user")
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", USER], check=True)
        entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and closes connections."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join()
    listener.close()


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder the test user can reach (pytest's own are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="skilldeck-nonroot-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_as(uid_gid: tuple[int, int], level: sandbox.Sandbox, place: Path, port: int) -> list[str]:
    skill_dir, copy, tmp = place / "skill", place / "copy", place / "tmp"
    for folder in (skill_dir, copy, tmp):
        folder.mkdir(mode=0o755)
    (copy / "probe.py").write_text(PROBE, encoding="utf-8")
    (copy / "probe.py").chmod(0o644)
    os.chown(tmp, *uid_gid)
    where = skill_dir if level.level == sandbox.BWRAP else copy
    bwrap = level.level == sandbox.BWRAP
    flags = sandbox.python_flags(Path("/tmp") if bwrap else tmp)
    inner = ["/usr/bin/python3", *flags, "-E", "-s", str(where / "probe.py"), str(port)]
    inner += ["inside"] if bwrap else []
    with sandbox.filter_fd() as fd:
        argv = sandbox.command(level, inner, where, copy, tmp, fd if bwrap else None)
        done = subprocess.run(
            argv,
            user=uid_gid[0],
            group=uid_gid[1],
            extra_groups=[],
            cwd=str(copy),
            env={"PATH": "/usr/bin:/bin", **sandbox.environment(where, tmp)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            pass_fds=(fd,) if fd is not None and bwrap else (),
        )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture
def as_non_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Build command lines as Skilldeck would for a non-root user, with the system Python
    (this test's own interpreter may sit in root's home)."""
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3 for the non-root user")
    monkeypatch.setattr(sandbox, "is_root", lambda: False)
    monkeypatch.setattr(sandbox, "_python_dirs", lambda: [])
    sandbox._unshare.cache_clear()
    yield
    sandbox._unshare.cache_clear()


def test_the_host_reaches_the_server(server: int) -> None:
    socket.create_connection(("127.0.0.1", server), timeout=3).close()


def test_bwrap_as_a_non_root_user_has_no_network(
    user: tuple[int, int], server: int, place: Path, as_non_root: None
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    level = sandbox.Sandbox(sandbox.BWRAP, True)
    words = run_as(user, level, place, server)
    assert words[:3] == ["no", "network", str(user[0])]
    expected_handle = "Operation-not-permitted" if seccomp.program() else "handle-ok"
    assert words[3:] == ["no-caps", expected_handle]


def test_rlimits_only_as_a_non_root_user_has_no_network(
    user: tuple[int, int], server: int, place: Path, as_non_root: None
) -> None:
    if sandbox._unshare() is None:
        pytest.skip("unshare -r --net does not work for a non-root user here")
    level = sandbox.Sandbox(sandbox.RLIMITS_ONLY, True)
    words = run_as(user, level, place, server)
    assert words[:2] == ["no", "network"]


DRIVER = """\
import json, os, sys
sys.path[:0] = json.loads(sys.argv[1])
from skilldeck.core.config import load_settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.execution import add_to_allowlist, execute, resolve_script
from pathlib import Path
root = Path(sys.argv[2])
skill = parse_skill_file(root / "demo" / "SKILL.md", root=root)
add_to_allowlist(resolve_script(skill, "scripts/run.py"))
run = execute(load_settings(), skill, "scripts/run.py", [sys.argv[3]]).run
print(json.dumps({"sandbox": run.sandbox, "stdout": run.stdout, "stderr": run.stderr}))
"""


def test_require_sandbox_runs_end_to_end_as_a_non_root_user(
    user: tuple[int, int], place: Path
) -> None:
    """Skilldeck itself started by a non-root user, ``require_sandbox = true``: the run
    gets ``bwrap``, imports its sibling module and reads the file named in its arguments."""
    system = Path("/usr/bin/python3")
    if shutil.which("bwrap") is None or not system.exists():
        pytest.skip("needs bubblewrap and /usr/bin/python3")
    version = subprocess.run(
        [str(system), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if version != str(sys.version_info[:2]):
        pytest.skip(f"/usr/bin/python3 is {version}, the project's packages are for another")
    home, skills = place / "home", place / "skills" / "demo" / "scripts"
    skills.mkdir(parents=True)
    (skills.parent / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Demo skill. Use when testing.\n---\nBody.\n", "utf-8"
    )
    (skills / "run.py").write_text("import sys, helper\nprint(helper.read(sys.argv[1]))\n")
    (skills / "helper.py").write_text("def read(path):\n    return open(path).read().strip()\n")
    (place / "data.txt").write_text("named data\n", encoding="utf-8")
    home.mkdir()
    (home / "config.toml").write_text("skills_exec = true\nrequire_sandbox = true\n", "utf-8")
    for path in (place, *place.rglob("*")):
        os.chown(path, *user)
    reachable = [p for p in sys.path if p and Path(p).is_dir() and not p.startswith("/root")]
    done = subprocess.run(
        [str(system), "-c", DRIVER, json.dumps(reachable), str(place / "skills"),
         str(place / "data.txt")],
        user=user[0], group=user[1], extra_groups=[], cwd=str(place),
        env={"PATH": "/usr/bin:/bin", "HOME": str(place), "SKILLDECK_HOME": str(home)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result == {"sandbox": "bwrap", "stdout": "named data\n", "stderr": ""}
