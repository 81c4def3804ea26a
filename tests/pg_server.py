"""A real, throwaway PostgreSQL server for the session-store tests.

The server comes from the Debian ``postgresql`` package (``initdb`` and ``pg_ctl`` found
with ``pg_config --bindir``, under ``/usr/lib/postgresql/*/bin`` or on ``PATH``). It runs
in a temporary folder, listens on a free port of 127.0.0.1 only (its unix socket stays in
the folder) and is stopped at teardown. PostgreSQL refuses to run as root: when the tests
run as root the server runs as the ``postgres`` user the package creates. Tests that need
the server skip, saying why, only where the binaries (or that user) cannot be had.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PG_USER = "postgres"


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """One PostgreSQL cluster in a temporary folder; ``url`` of its ``postgres`` database."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        # as root, the server's user must reach the folder: stay out of a private TMPDIR
        parent = "/tmp" if os.geteuid() == 0 and os.path.isdir("/tmp") else None
        self.root = Path(tempfile.mkdtemp(prefix="skilldeck-pg-", dir=parent))
        self.data = self.root / "data"
        self.port = free_port()
        self.run_as: str | None = None
        if os.geteuid() == 0:
            self.run_as = PG_USER
            entry = pwd.getpwnam(PG_USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.user = self.run_as or pwd.getpwuid(os.geteuid()).pw_name

    def _run(self, *args: str, timeout: float = 60) -> None:
        result = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            user=self.run_as,
            cwd=self.root,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {result.stdout}\n{result.stderr}")

    def init(self) -> None:
        """``initdb`` with trust authentication on loopback only."""
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.user, "-E", "UTF8")

    def start(self) -> None:
        """Start (or restart after :meth:`stop`) on the same port."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root}"
            " -c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=300"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: disconnect clients, roll back open transactions)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, dbname: str = "postgres") -> str:
        """Connection URL of ``dbname``."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def cleanup(self) -> None:
        """Stop if running and delete the folder."""
        with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _why_unavailable() -> str | None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install '.[postgres]')"
    if find_bindir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(PG_USER)
        except KeyError:
            return f"running as root and there is no {PG_USER!r} user to run PostgreSQL"
    return None


def _unavailable(reason: str) -> None:
    """Skip, or fail when ``SKILLDECK_REQUIRE_POSTGRES=1`` (CI, where the package is
    installed, must not skip silently)."""
    message = f"PostgreSQL tests skipped: {reason}"
    if os.environ.get("SKILLDECK_REQUIRE_POSTGRES") == "1":
        pytest.fail(message.replace("skipped", "required but unavailable"), pytrace=False)
    pytest.skip(message)


def _started() -> PgServer:
    reason = _why_unavailable()
    if reason:
        _unavailable(reason)
    bindir = find_bindir()
    assert bindir is not None
    server = PgServer(bindir)
    try:
        server.init()
        server.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        server.cleanup()
        _unavailable(f"cannot start a server: {exc}")
    return server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A PostgreSQL server for the whole test run (skips when it cannot be had)."""
    server = _started()
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """URL of a fresh database on the shared test server."""
    return pg_server.create_database()


@pytest.fixture
def own_pg_server() -> Iterator[PgServer]:
    """A server of this test's own (to stop and start mid-run)."""
    server = _started()
    yield server
    server.cleanup()


def wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until true or ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


@pytest.fixture(params=["sqlite", "postgres"])
def sessions_url(request: pytest.FixtureRequest) -> str:
    """The shared backend suite's parameter: ``""`` (embedded SQLite) or the URL of a fresh
    database on the test PostgreSQL server."""
    if request.param == "sqlite":
        return ""
    url: str = request.getfixturevalue("pg_url")
    return url


def raw_sql(store: Any, sql: str, params: tuple[Any, ...] = ()) -> None:
    """Run ``sql`` on the store's database behind its back, in its own transaction.

    ``{p}`` in ``sql`` becomes the table prefix (``skilldeck_`` on PostgreSQL) and ``?``
    the driver's placeholder. Raises the driver's error (what the database refused).
    """
    from skilldeck.core.sessions import SqliteBackend

    backend = store.backend
    if isinstance(backend, SqliteBackend):
        import sqlite3

        conn = sqlite3.connect(backend.path)
        try:
            with conn:
                conn.execute(sql.format(p=""), params)
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(backend.url) as pg:
        pg.execute(sql.format(p="skilldeck_").replace("?", "%s"), params)


class CommitCutter:
    """A TCP proxy in front of the server that, when armed, lets the next ``COMMIT``
    reach the server and then drops the connection before its answer gets back: the
    client cannot know whether its transaction landed (a real in-doubt commit)."""

    def __init__(self, upstream_port: int) -> None:
        import threading

        self.upstream = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.armed = threading.Event()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            state = {"blackhole": False}
            threading.Thread(target=self._up, args=(client, server, state), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, state), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, state: dict[str, bool]) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                cut = self.armed.is_set() and b"COMMIT" in data
                if cut:
                    self.armed.clear()
                    state["blackhole"] = True  # the answer to this COMMIT never arrives
                server.sendall(data)
                if cut:
                    time.sleep(0.3)  # the server commits
                    self.cuts += 1
                    break
        for sock in (client, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _down(self, server: socket.socket, client: socket.socket, state: dict[str, bool]) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if not state["blackhole"]:
                    client.sendall(data)

    def url(self, url: str) -> str:
        """``url`` with its port replaced by the proxy's."""
        head, _, tail = url.rpartition(":")
        return f"{head}:{self.port}/{tail.split('/', 1)[1]}"

    def close(self) -> None:
        """Stop accepting connections."""
        self.listener.close()
