"""The sandbox as a non-root user gets it: a real user made for the test runs the very
command line Skilldeck builds, against a real server on 127.0.0.1 that the host can reach,
at both levels (``bwrap`` with a user namespace, and ``unshare -r --net``)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilldeck.core.execution import sandbox

USER = "skilldeck-sandbox-test"
PROBE = """\
import os, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()
    print("network")
except OSError:
    print("no network")
print(os.getuid())
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
    inner = ["/usr/bin/python3", "-E", "-s", str(where / "probe.py"), str(port)]
    argv = sandbox.command(level, inner, where, copy, tmp)
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
    assert run_as(user, level, place, server) == ["no", "network", str(user[0])]


def test_rlimits_only_as_a_non_root_user_has_no_network(
    user: tuple[int, int], server: int, place: Path, as_non_root: None
) -> None:
    if sandbox._unshare() is None:
        pytest.skip("unshare -r --net does not work for a non-root user here")
    level = sandbox.Sandbox(sandbox.RLIMITS_ONLY, True)
    words = run_as(user, level, place, server)
    assert words[:2] == ["no", "network"]
