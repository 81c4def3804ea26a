"""``skilldeck serve`` against a hostile client and a broken machine (issue #12).

Real ``skilldeck serve`` subprocesses, spoken to with the SDK's own client or with raw
JSON-RPC lines. A read-only ``SKILLDECK_HOME`` is simulated two ways, because root ignores
file modes: a home below a regular file (ENOTDIR, works everywhere) and a read-only bind
mount in a private mount namespace (``unshare -rm``, EROFS; skipped where that is not
allowed). A full disk is a tiny tmpfs in such a namespace (ENOSPC).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import (
    RawServer,
    ServerClient,
    error_code,
    http_transport,
    make_home,
    start_http,
    text_of,
)

from conftest import write_skill
from mcp import Client
from skilldeck.core.sessions import SessionStore
from skilldeck.mcp.transport import MAX_LINE_CHARS

HOSTILE_NAMES = [
    "Bash\x1b[2J",
    "Edit\x1b]0;owned\x07",
    "Read\nallowed: everything",
    "Write\x00",
    "Bash(\u202erm -rf /)",
    "Tool\x9b31m",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "git-history",
        description="Summarise git history and commit logs. Use when asked what changed.",
        extra="allowed-tools: Bash(git log:*)\n",
    )
    return skills


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path / "home")


def _env(home: Path, config: Path) -> dict[str, str]:
    env = {
        "SKILLDECK_HOME": str(home),
        "SKILLDECK_CONFIG": str(config),
        "NO_COLOR": "1",
        "HOME": str(config.parent),
    }
    for key in ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "cfg" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("semantic = false\n", encoding="utf-8")
    return config


def _data(result: types.CallToolResult) -> dict[str, Any]:
    data = result.structured_content
    assert isinstance(data, dict), text_of(result)
    return data


# ---------------------------------------------------------------- hostile names


def test_hostile_tool_and_skill_names_are_invalid_params(root: Path, home: Path) -> None:
    server = ServerClient(root, home, "--mode", "approval").start()
    try:
        for bad in HOSTILE_NAMES:
            checked = server.call("check_tool", {"tool": bad})
            assert error_code(checked) == "INVALID_PARAM", bad
            assert "\x1b" not in text_of(checked) and "\n" not in text_of(checked)
            loaded = server.call("load_skill", {"name": bad})
            assert error_code(loaded) == "INVALID_PARAM", bad
            read = server.call("read_skill_resource", {"name": bad, "path": "SKILL.md"})
            assert error_code(read) == "INVALID_PARAM", bad
        nul_path = server.call("read_skill_resource", {"name": "git-history", "path": "a\x00b"})
        assert error_code(nul_path) == "INVALID_PARAM"
        long_name = server.call("check_tool", {"tool": "x" * 501})
        assert error_code(long_name) == "INVALID_PARAM"
        unknown = server.call("no\x1b[2Jtool" + "x" * 5000, {})
        assert error_code(unknown) == "NOT_FOUND"
        assert "\x1b" not in text_of(unknown) and len(text_of(unknown)) < 400
        with pytest.raises(MCPError):
            server.run(lambda c: c.read_resource("skill://git%1B%5B2J/SKILL.md"))
        fine = server.call("check_tool", {"tool": "Bash(git log -1)"})
        assert not fine.is_error
    finally:
        server.close()
    with SessionStore(home / "sessions.db") as store:
        for session in store.list(include_ended=True):
            assert session.pending == [] or all("\x1b" not in t for t in session.pending)
            for entry in store.audit(session.id):
                assert "\x1b" not in entry.subject and "\n" not in entry.subject


# ---------------------------------------------------------------- read-only / missing home


def _assert_degraded(server: ServerClient) -> None:
    """Skills served; session calls answer a clear error."""
    listing = _data(server.call("list_skills"))
    assert listing["included"] == ["git-history"]
    found = _data(server.call("search_skills", {"query": "git history commit log"}))
    assert found["results"][0]["name"] == "git-history"
    loaded = server.call("load_skill", {"name": "git-history"})
    assert not loaded.is_error
    data = _data(loaded)
    assert data["session"] is None and data["session_error"]["code"] == "EXECUTION_ERROR"
    assert "not recorded in a session" in text_of(loaded)
    read = server.call("read_skill_resource", {"name": "git-history", "path": "SKILL.md"})
    assert not read.is_error
    checked = server.call("check_tool", {"tool": "Bash(git log -1)"})
    assert error_code(checked) == "EXECUTION_ERROR"
    assert text_of(checked).startswith("Error [EXECUTION_ERROR]: sessions are unavailable")


def test_home_below_a_regular_file_still_serves_and_heals(root: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder\n", encoding="utf-8")
    home = blocker / "home"
    server = ServerClient(root, home)
    server.params.env = _env(home, _config(tmp_path))
    server.start()
    try:
        _assert_degraded(server)
        blocker.unlink()
        home.mkdir(parents=True)
        healed = server.call("check_tool", {"tool": "Bash(git log -1)"})
        assert not healed.is_error, text_of(healed)
        assert _data(healed)["reason"] == "not_in_allowlist"
        loaded = _data(server.call("load_skill", {"name": "git-history"}))
        assert loaded["session"] == _data(healed)["session"]
        assert _data(server.call("check_tool", {"tool": "Bash(git log -1)"}))["allowed"]
    finally:
        server.close()
    with SessionStore(home / "sessions.db") as store:
        assert [s.active_skills for s in store.list(include_ended=True)] == [["git-history"]]


def _namespace_ok(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"],
        capture_output=True,
        timeout=30,
    )
    return done.returncode == 0


def _in_namespace(server: ServerClient, setup: str) -> None:
    """Run the server inside ``unshare -rm`` after the shell ``setup``."""
    command = " ".join([sys.executable, *(f"'{a}'" for a in server.params.args)])
    server.params.args = ["-rm", "sh", "-c", f"{setup} && exec {command}"]
    server.params.command = "unshare"


def test_read_only_bind_mounted_home_still_serves(root: Path, tmp_path: Path) -> None:
    if not _namespace_ok(tmp_path):
        pytest.skip("unprivileged mount namespaces are not available here")
    home = tmp_path / "ro-home"
    home.mkdir()
    server = ServerClient(root, home)
    server.params.env = _env(home, _config(tmp_path))
    _in_namespace(server, f"mount --bind {home} {home} && mount -o remount,ro,bind {home}")
    server.start()
    try:
        _assert_degraded(server)
    finally:
        server.close()
    assert not (home / "sessions.db").exists()


def test_full_disk_is_reported_as_full_and_heals(root: Path, tmp_path: Path) -> None:
    """A 256 KiB tmpfs home filled by a ballast file: session calls say "disk full"; once
    the ballast is deleted (through ``/proc/PID/root``, the server's own mount view) the
    same server records sessions again."""
    if not _namespace_ok(tmp_path):
        pytest.skip("unprivileged mount namespaces are not available here")
    home = tmp_path / "full-home"
    home.mkdir()
    pidfile = tmp_path / "server.pid"
    server = ServerClient(root, home, "--mode", "approval")
    server.params.env = _env(home, _config(tmp_path))
    fill = f"cat /dev/zero > {home}/ballast 2>/dev/null; true"
    mount = f"mount -t tmpfs -o size=256k tmpfs {home}"
    _in_namespace(server, f"echo $$ > {pidfile} && {mount} && {{ {fill}; }}")
    server.start()
    try:
        assert _data(server.call("list_skills"))["included"] == ["git-history"]
        checked = server.call("check_tool", {"tool": "Bash(git log -1)"})
        assert error_code(checked) == "EXECUTION_ERROR"
        message = _data(checked)["error"]["message"]
        assert "disk full" in message and "damaged" not in message
        assert not server.call("load_skill", {"name": "git-history"}).is_error
        pid = int(pidfile.read_text(encoding="utf-8"))
        ballast = Path(f"/proc/{pid}/root{home}/ballast")
        try:
            ballast.unlink()
        except OSError as exc:
            pytest.skip(f"cannot reach the server's mount namespace: {exc}")
        healed = server.call("check_tool", {"tool": "Bash(git log -1)"})
        assert not healed.is_error, text_of(healed)
        assert _data(healed)["requires_approval"] is True
        loaded = _data(server.call("load_skill", {"name": "git-history"}))
        assert loaded["session"] == _data(healed)["session"]
        assert _data(server.call("check_tool", {"tool": "Bash(git log -1)"}))["allowed"]
    finally:
        server.close()


# ---------------------------------------------------------------- clean ends, JSON-RPC


def _start_raw(root: Path, home: Path) -> RawServer:
    raw = RawServer(root, home)
    raw.initialize()
    return raw


def test_client_closing_its_pipes_mid_call_exits_0_quietly(root: Path, home: Path) -> None:
    raw = _start_raw(root, home)
    assert raw.proc.stdin is not None and raw.proc.stdout is not None
    for ident in range(10, 40):
        call = {"name": "list_skills", "arguments": {}}
        message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call}
        raw.proc.stdin.write(json.dumps(message) + "\n")
    raw.proc.stdin.flush()
    raw.proc.stdout.close()
    raw.proc.stdin.close()
    try:
        assert raw.proc.wait(timeout=30) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
    assert raw.proc.stderr is not None
    err = raw.proc.stderr.read()
    assert "internal error" not in err and "Traceback" not in err and "Broken" not in err


def _reply(raw: RawServer, line: str, timeout: float = 10) -> dict[str, Any]:
    assert raw.proc.stdin is not None and raw.proc.stdout is not None
    raw.proc.stdin.write(line + "\n")
    raw.proc.stdin.flush()
    ready, _, _ = select.select([raw.proc.stdout], [], [], timeout)
    assert ready, f"no answer to {line[:80]!r}"
    answer: dict[str, Any] = json.loads(raw.proc.stdout.readline())
    return answer


BAD_LINES = [
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None, -32600),
    ('{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', None, -32600),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None, -32600),
    ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, -32600),
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None, -32600),
    ('{"jsonrpc":"2.0","id":7}', 7, -32600),
    ('{"jsonrpc":"1.0","id":8,"method":"tools/list"}', 8, -32600),
    ('{"id":"nine","method":"tools/list"}', "nine", -32600),
    ('{"jsonrpc":"2.0","id":10,"method":"tools/list","params":5}', 10, -32600),
    ("not json at all", None, -32700),
    ('{"jsonrpc":"2.0","id":11,', None, -32700),
    ("[]", None, -32600),
    ('[{"jsonrpc":"2.0","id":12,"method":"tools/list"}]', None, -32600),
    ("42", None, -32600),
    ('{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"\\ud800"}}', None, -32700),
]


def test_malformed_requests_get_error_responses(root: Path, home: Path) -> None:
    raw = _start_raw(root, home)
    try:
        for line, ident, code in BAD_LINES:
            answer = _reply(raw, line)
            assert answer["id"] == ident, line
            assert answer["error"]["code"] == code, line
        assert raw.proc.stdin is not None
        raw.proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/bogus","params":1}\n')
        raw.proc.stdin.write('{"jsonrpc":"2.0","id":999,"result":{}}\n\n')
        raw.proc.stdin.flush()
        assert "result" in raw.request(20, "tools/list", {}), "notifications get no answer"
        huge = '{"jsonrpc":"2.0","id":21,"method":"tools/list","params":{"x":"'
        huge += "a" * (MAX_LINE_CHARS + 10) + '"}}'
        answer = _reply(raw, huge, timeout=60)
        assert answer["id"] is None and answer["error"]["code"] == -32600
        assert "result" in raw.request(22, "tools/list", {}), "the server survived"
        raw.proc.send_signal(signal.SIGTERM)
        assert raw.proc.wait(timeout=15) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()


# ---------------------------------------------------------------- both transports alike


def test_both_transports_advertise_and_send_resource_list_changes(root: Path, home: Path) -> None:
    stdio = ServerClient(root, home, mode="legacy").start()
    try:
        assert stdio.client is not None
        caps = stdio.client.server_capabilities
        assert caps is not None and caps.resources is not None
        stdio_flag = caps.resources.list_changed
    finally:
        stdio.close()
    proc, url = start_http(root, home)
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message)

    async def session() -> bool | None:
        async with Client(
            http_transport(url, home), mode="legacy", message_handler=on_message
        ) as client:
            caps = client.server_capabilities
            assert caps is not None and caps.resources is not None
            await client.call_tool("list_skills", {})
            write_skill(root, "pdf-forms", description="Fill PDF forms. Use for PDF forms.")
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not seen:
                await client.call_tool("list_skills", {})
                await asyncio.sleep(0.2)
            return caps.resources.list_changed

    try:
        http_flag = asyncio.run(session())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    assert stdio_flag is True and http_flag is True
    kinds = {type(n).__name__ for n in seen}
    assert "ResourceListChangedNotification" in kinds


STUCK_SERVER = """
import sys, threading
from pathlib import Path
from skilldeck.core.config import Settings
from skilldeck.mcp.transport import run
from skilldeck.mcp.service import SkillService


class Stuck(SkillService):
    def list_skills(self, budget=None):
        threading.Event().wait()  # a read that never returns


sys.exit(run(Stuck(Settings(semantic=False), [Path(sys.argv[1])])))
"""


def test_a_call_that_never_returns_does_not_stop_the_exit(root: Path, home: Path) -> None:
    from mcp_harness import server_env

    proc = subprocess.Popen(
        [sys.executable, "-c", STUCK_SERVER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(home),
        text=True,
    )
    raw = RawServer.__new__(RawServer)
    raw.proc = proc
    try:
        raw.initialize()
        assert proc.stdin is not None
        call = {"name": "list_skills", "arguments": {}}
        message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        time.sleep(0.5)
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert "still running at exit" in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
