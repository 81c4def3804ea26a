"""The sandbox holds when Skilldeck runs as root (issue 32, section 4): each attack a
script tried from inside ``bwrap`` as root, against the real runner and real ``bwrap``."""

from __future__ import annotations

import errno
import os
import py_compile
import shutil
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import allowed_skill as allowed
from seccomp_vm import run_filter
from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import (
    execute,
    runner,
    sandbox,
    sandbox_level,
    seccomp,
)
from skilldeck.core.execution.snapshot import Snapshot, snapshot_skill
from skilldeck.core.model import Skill
from skilldeck.core.sessions import SessionStore

AS_ROOT_IN_BWRAP = os.geteuid() == 0 and sandbox_level().level == "bwrap"
root_bwrap = pytest.mark.skipif(not AS_ROOT_IN_BWRAP, reason="needs root and a usable bwrap")

CAPS = """\
import os
status = dict(line.split(':\\t') for line in open('/proc/self/status').read().splitlines()
              if line.startswith(('Cap', 'Uid', 'Gid', 'Groups', 'NoNewPrivs')))
for key in sorted(status):
    print(key, status[key].strip())
"""

SHOCKER = """\
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    done = getattr(libc, name)(*args)
    return done, 'ok' if done >= 0 else errno_name(ctypes.get_errno())
def errno_name(number):
    import errno
    return errno.errorcode.get(number, str(number))
buf = ctypes.create_string_buffer(struct.pack('Ii', 128, 0) + bytes(128))
mount_id = ctypes.c_int()
named = call('name_to_handle_at', -100, b'/usr', buf, ctypes.byref(mount_id), 0)
print('name_to_handle_at', named[1])
# the "shocker" handle: the root inode (2, generation 0) of the file system holding /usr
handle = ctypes.create_string_buffer(struct.pack('IiII', 8, 1, 2, 0))
mount_fd = os.open('/usr', os.O_RDONLY)
fd, how = call('open_by_handle_at', mount_fd, handle, os.O_RDONLY | os.O_DIRECTORY)
print('open_by_handle_at', how)
if fd >= 0:
    for rel in sys.argv[1:]:
        try:
            print('READ', open(os.open(rel, os.O_RDONLY, dir_fd=fd), 'rb').read(200))
        except OSError as exc:
            print('openat', exc.strerror)
"""


def refusal(settings: Settings, skill: Skill, script: str, *args: str) -> SkilldeckError:
    with pytest.raises(SkilldeckError) as caught:
        execute(settings, skill, script, list(args))
    return caught.value


@root_bwrap
def test_require_sandbox_runs_as_root(exec_on: Settings, tmp_path: Path) -> None:
    exec_on.require_sandbox = True
    skill = allowed(tmp_path / "skills", {"run.py": "import os\nprint(os.getuid())\n"})
    result = execute(exec_on, skill, "run.py", [])
    assert (result.run.sandbox, result.run.stdout) == ("bwrap", "65534\n")


@root_bwrap
def test_the_script_runs_as_nobody_without_any_capability(
    exec_on: Settings, tmp_path: Path
) -> None:
    skill = allowed(tmp_path / "skills", {"caps.py": CAPS})
    result = execute(exec_on, skill, "caps.py", [])
    rows = dict(line.split(" ", 1) for line in result.run.stdout.splitlines())
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(rows[key], 16) == 0, (key, rows)
    assert rows["Uid"].split() == ["65534"] * 4 and rows["Groups"] == ""
    assert rows["NoNewPrivs"] == "1"


@root_bwrap
def test_open_by_handle_reads_no_host_file(exec_on: Settings, tmp_path: Path) -> None:
    """The shocker attack: a handle for the root inode of the file system holding
    ``/usr`` opens the host's root folder; from there ``etc/shadow`` is read. It read
    ``/etc/shadow`` while the script kept ``CAP_DAC_READ_SEARCH``."""
    skill = allowed(tmp_path / "skills", {"shocker.py": SHOCKER})
    result = execute(exec_on, skill, "shocker.py", ["etc/shadow", "etc/hostname"])
    assert result.run.exit_code == 0, result.run.stderr
    assert "READ" not in result.run.stdout
    assert result.run.stdout.splitlines() == [
        "name_to_handle_at EPERM",
        "open_by_handle_at EPERM",
    ]


@root_bwrap
def test_without_the_filter_the_dropped_capabilities_still_refuse_the_handle(
    readable_tmp: Path,
) -> None:
    """Capabilities alone hold: without the seccomp filter ``name_to_handle_at`` works
    (it needs no privilege) and the kernel refuses ``open_by_handle_at``."""
    words = _bare_run(readable_tmp, SHOCKER, ["etc/shadow"], seccomp_fd=None)
    assert words == ["name_to_handle_at ok", "open_by_handle_at EPERM"]


def _bare_run(place: Path, source: str, args: list[str], seccomp_fd: int | None) -> list[str]:
    """Run ``source`` through :func:`sandbox.command` as the runner would."""
    import subprocess

    skill_dir, copy, tmp = place / "skill", place / "copy", place / "tmp"
    for folder in (skill_dir, copy, tmp):
        folder.mkdir(mode=0o755)
    (copy / "s.py").write_text(source, encoding="utf-8")
    (copy / "s.py").chmod(0o644)
    inner = [runner.python_executable(), "-E", "-s", str(skill_dir / "s.py"), *args]
    level = sandbox.Sandbox(sandbox.BWRAP, True)
    argv = sandbox.command(level, inner, skill_dir, copy, tmp, seccomp_fd)
    fds = (seccomp_fd,) if seccomp_fd is not None else ()
    done = subprocess.run(
        argv, cwd="/", env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        timeout=30, check=False, pass_fds=fds,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("machine", sorted(seccomp.SYSCALLS))
def test_the_filter_refuses_exactly_the_handle_calls_on_every_abi(machine: str) -> None:
    program = seccomp.program(machine)
    assert program is not None and len(program) % 8 == 0
    refused = 0x00050000 | errno.EPERM
    for arch, numbers in seccomp.SYSCALLS[machine]:
        for nr in numbers:
            assert run_filter(program, arch, nr) == refused, (hex(arch), nr)
        for nr in (0, 1, 2, 59, 257, 262, 300, 305, 1000):
            assert run_filter(program, arch, nr) == 0x7FFF0000, (hex(arch), nr)
    assert run_filter(program, 0x12345678, 304) == 0x7FFF0000
    assert seccomp.program("no-such-machine") is None


@root_bwrap
@pytest.mark.parametrize(
    "path", ["/proc", "/proc/1", "/proc/self/root", "/sys", "/dev", "/dev/shm", "/", "/run"]
)
def test_pseudo_file_systems_are_never_shown(exec_on: Settings, tmp_path: Path, path: str) -> None:
    """``/proc`` named in the arguments replaced the private one: host processes, and a
    concurrent run's private ``/tmp`` through ``/proc/<pid>/root``, were visible."""
    lister = "import os, sys\nprint(sorted(os.listdir(sys.argv[1]))[:5])\n"
    skill = allowed(tmp_path / "skills", {"ls.py": lister})
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    caught = refusal(exec_on, skill, "ls.py", path)
    assert caught.details["reason"] == "path_refused", caught
    assert caught.code.value == "PERMISSION_DENIED" and path in caught.message


def _shadow_link(folder: Path) -> Path:
    link = folder / "looks-harmless.txt"
    try:
        os.link("/etc/shadow", link)
    except OSError as exc:
        pytest.skip(f"cannot hard-link /etc/shadow here: {exc.strerror}")
    return link


def _token(folder: Path) -> Path:
    token = folder / "mcp-token"
    token.write_text("s3cret-token\n", encoding="utf-8")
    token.chmod(0o600)
    return token


def _in_private_folder(folder: Path) -> Path:
    private = folder / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    inner = private / "config.txt"
    inner.write_text("token = s3cret\n", encoding="utf-8")
    inner.chmod(0o644)
    return inner


def _fifo(folder: Path) -> Path:
    fifo = folder / "pipe"
    os.mkfifo(fifo, 0o666)
    return fifo


def _folder_with_fifo(folder: Path) -> Path:
    data = folder / "data"
    data.mkdir(mode=0o755)
    (data / "ok.txt").write_text("fine\n", encoding="utf-8")
    os.mkfifo(data / "deep-pipe", 0o666)
    return data


@root_bwrap
@pytest.mark.parametrize(
    "make",
    [_shadow_link, _token, _in_private_folder, _fifo, _folder_with_fifo],
    ids=["hard-linked-shadow", "0600-token", "file-in-0700-folder", "fifo", "folder-with-fifo"],
)
def test_what_nobody_cannot_read_or_is_no_plain_file_is_refused(
    exec_on: Settings, tmp_path: Path, readable_tmp: Path, make: Callable[[Path], Path]
) -> None:
    """These were bind-mounted and read by a script that kept ``CAP_DAC_READ_SEARCH``."""
    target = make(readable_tmp)
    skill = allowed(
        tmp_path / "skills", {"cat.py": "import sys\nprint(open(sys.argv[1]).read())\n"}
    )
    caught = refusal(exec_on, skill, "cat.py", str(target))
    assert caught.details["reason"] == "path_refused", caught
    assert "s3cret" not in str(caught.to_dict())


@root_bwrap
def test_etc_shadow_is_refused(exec_on: Settings, tmp_path: Path) -> None:
    skill = allowed(
        tmp_path / "skills", {"cat.py": "import sys\nprint(open(sys.argv[1]).read())\n"}
    )
    caught = refusal(exec_on, skill, "cat.py", "/etc/shadow")
    assert caught.details["reason"] == "path_refused" and "nobody" in caught.message


@root_bwrap
def test_a_refused_path_is_said_audited_and_nothing_runs(
    exec_on: Settings, tmp_path: Path, readable_tmp: Path
) -> None:
    """Permission first (an unlisted script is ``not_allowed`` whatever its arguments),
    then the arguments: the refusal names the folder that blocks and nothing runs."""
    marker = readable_tmp / "ran"
    writer = f"open({str(marker)!r}, 'w').write('ran')\n"
    private = tmp_path / "data.txt"
    private.write_text("x\n", encoding="utf-8")
    unlisted = allowed(tmp_path / "other", {}, name="other")
    (unlisted.base_dir / "w.py").write_text(writer, encoding="utf-8")
    assert refusal(exec_on, unlisted, "w.py", str(private)).details["reason"] == "not_allowed"
    skill = allowed(tmp_path / "skills", {"w.py": writer})
    store = SessionStore()
    session = store.create(actor="agent")
    with pytest.raises(SkilldeckError) as caught:
        execute(exec_on, skill, "w.py", [str(private)], store=store, session_id=session.id)
    assert caught.value.details["reason"] == "path_refused"
    assert "cannot enter" in caught.value.message and "mode 700" in caught.value.message
    last = store.audit(session.id)[-1]
    assert (last.action, last.detail["reason"]) == ("script_refused", "path_refused")
    assert not marker.exists()


@pytest.fixture
def trust_socket(readable_tmp: Path) -> Iterator[tuple[Path, threading.Event]]:
    """A unix socket that answers anyone (as a trust-auth PostgreSQL socket does)."""
    path = readable_tmp / "sock" / ".s.PGSQL.5432"
    path.parent.mkdir(mode=0o755)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen()
    server.settimeout(0.2)
    reached, stop = threading.Event(), threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            reached.set()
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, reached
    stop.set()
    thread.join()
    server.close()


@root_bwrap
def test_a_unix_socket_is_never_shown(
    exec_on: Settings, tmp_path: Path, trust_socket: tuple[Path, threading.Event]
) -> None:
    path, reached = trust_socket
    dialer = (
        "import socket, sys\ns = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\nprint('connected')\n"
    )
    skill = allowed(tmp_path / "skills", {"dial.py": dialer})
    for named in (path, path.parent):
        caught = refusal(exec_on, skill, "dial.py", str(named))
        assert caught.details["reason"] == "path_refused", caught
    assert not reached.is_set()


@root_bwrap
def test_readable_files_and_folders_of_them_are_still_shown(
    exec_on: Settings, tmp_path: Path, readable_tmp: Path
) -> None:
    data = readable_tmp / "data"
    (data / "sub").mkdir(parents=True)
    for folder in (data, data / "sub"):
        folder.chmod(0o755)
    (data / "sub" / "a.txt").write_text("alpha\n", encoding="utf-8")
    (data / "sub" / "a.txt").chmod(0o644)
    reader = "import sys\nprint(open(sys.argv[1] + '/sub/a.txt').read().strip())\n"
    skill = allowed(tmp_path / "skills", {"read.py": reader})
    assert execute(exec_on, skill, "read.py", [str(data)]).run.stdout == "alpha\n"


WATCHER = """\
import os, sys, time
mine, theirs = sys.argv[1], sys.argv[2]
open(f'/tmp/{mine}', 'w').write('here')
seen = set()
end = time.monotonic() + 4
while time.monotonic() < end:
    places = ['/tmp'] + [f'/proc/{p}/root/tmp' for p in os.listdir('/proc') if p.isdigit()]
    for place in places:
        try:
            if theirs in os.listdir(place):
                seen.add(place)
        except OSError:
            pass
    time.sleep(0.1)
print(sorted(seen) or 'alone')
"""


@root_bwrap
def test_concurrent_runs_share_no_tmp(exec_on: Settings, tmp_path: Path) -> None:
    skill = allowed(tmp_path / "skills", {"watch.py": WATCHER})
    outputs: dict[str, str] = {}

    def run(mine: str, theirs: str) -> None:
        outputs[mine] = execute(exec_on, skill, "watch.py", [mine, theirs]).run.stdout

    threads = [
        threading.Thread(target=run, args=("mark-a", "mark-b")),
        threading.Thread(target=run, args=("mark-b", "mark-a")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outputs == {"mark-a": "alone\n", "mark-b": "alone\n"}
    assert refusal(exec_on, skill, "watch.py", "/proc").details["reason"] == "path_refused"


def test_rlimits_only_gives_each_run_its_own_0700_tmp(
    exec_on: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fallback = sandbox.Sandbox(sandbox.RLIMITS_ONLY, True)
    monkeypatch.setattr(runner, "probe", lambda: fallback)
    monkeypatch.setattr(sandbox, "probe", lambda: fallback)
    where = (
        "import os, stat\nt = os.environ['TMPDIR']\n"
        "print(t, oct(stat.S_IMODE(os.stat(t).st_mode)))\n"
    )
    skill = allowed(tmp_path / "skills", {"where.py": where})
    first, second = (execute(exec_on, skill, "where.py", []).run.stdout.split() for _ in "ab")
    assert first[1] == second[1] == "0o700"
    assert first[0] != second[0] and not first[0].startswith("/tmp/tmp")


BENIGN = "WORD = 'reviewed source'\n"
EVIL = "WORD = 'shipped bytecode'\n"
MAIN = "import helper\nprint(helper.WORD)\n"


class _ShipsBytecode(Snapshot):
    """A snapshot whose copy keeps its ``__pycache__`` (as if the copy step missed it):
    the interpreter must still ignore it."""

    def materialize(self, target: Path) -> None:
        shutil.copytree(self.folder, target, dirs_exist_ok=True)


@pytest.mark.parametrize("level", [sandbox.BWRAP, sandbox.RLIMITS_ONLY])
def test_python_never_uses_bytecode_the_skill_ships(
    tmp_path: Path, readable_tmp: Path, monkeypatch: pytest.MonkeyPatch, level: str
) -> None:
    if level == sandbox.BWRAP and sandbox_level().level != sandbox.BWRAP:
        pytest.skip("bubblewrap (bwrap) is not usable here")
    if level == sandbox.RLIMITS_ONLY:
        fallback = sandbox.Sandbox(level, True)
        monkeypatch.setattr(runner, "probe", lambda: fallback)
    folder = readable_tmp / "skill"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text(MAIN, encoding="utf-8")
    (folder / "scripts" / "helper.py").write_text(BENIGN, encoding="utf-8")
    evil = tmp_path / "helper.py"
    evil.write_text(EVIL, encoding="utf-8")
    pyc = folder / "scripts" / "__pycache__" / f"helper.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir()
    py_compile.compile(
        str(evil), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    pinned = snapshot_skill(folder)
    shipped = _ShipsBytecode(pinned.folder, pinned.files)
    program = runner.interpreter("scripts/run.py", MAIN.encode())
    result = runner.run_in_copy(
        shipped, lambda where: [*program, str(where / "scripts/run.py")], 20
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "reviewed source\n"
    assert stat.S_ISREG(os.stat(pyc).st_mode)  # it was there to be used
