"""Hostile names and broken machines against the session store: refused, reported, healed.

Disk-full cases use real SQLite: ``PRAGMA max_page_count`` makes SQLite answer
``SQLITE_FULL`` exactly as a full disk does, and (where unprivileged mount namespaces
work) a tiny tmpfs gives the real ``ENOSPC`` from the kernel.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import TOOL_NAME_MAX, SessionStore, check_name

BAD_NAMES = [
    "Bash\x1b[2J",
    "Edit\x1b]0;pwned\x07",
    "Read\nallowed: everything",
    "Write\r",
    "Tool\x00",
    "Tool\x9b31m",
    "Bash(\u202erm -rf)",
    "Edit\u2066x\u2069",
    "Edit\tnow",
    "x" * (TOOL_NAME_MAX + 1),
    "",
    "   ",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore(tmp_path / "sessions.db") as opened:
        yield opened


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_bad_tool_names_are_refused_everywhere(store: SessionStore, bad: str) -> None:
    session = store.create(mode="approval")
    for call in (store.approve, store.deny, store.revoke, store.check):
        with pytest.raises(SkilldeckError) as err:
            call(session.id, bad)
        assert err.value.code is ErrorCode.INVALID_PARAM
        assert "\x1b" not in err.value.message and "\n" not in err.value.message
        assert len(err.value.message) < 200
    after = store.get(session.id)
    assert after.approved == [] and after.denied == [] and after.pending == []
    assert [e.action for e in store.audit(session.id)] == ["create"]


def test_good_names_still_pass_and_are_normalised(store: SessionStore) -> None:
    session = store.create(mode="approval")
    assert check_name("  Bash(git  log:*) ") == "Bash(git log:*)"
    assert check_name("x" * TOOL_NAME_MAX) == "x" * TOOL_NAME_MAX
    assert check_name("mcp__srv__outil_é") == "mcp__srv__outil_é"
    store.approve(session.id, "Bash(git  log:*)")
    assert store.check(session.id, "Bash(git log -1)").allowed


def test_activation_refuses_a_bad_skill_name_and_drops_bad_allowed_tools(
    store: SessionStore,
) -> None:
    session = store.create(mode="strict")
    with pytest.raises(SkilldeckError) as err:
        store.activate_skill(session.id, "skill\x1b[31m", ["Read"])
    assert err.value.code is ErrorCode.INVALID_PARAM
    active = store.activate_skill(session.id, "good", ["Read", "Bash\x1b[2J", "y" * 600])
    assert active.allowed_tools == ["Read"]
    assert not store.check(session.id, "Bash").allowed


def _fill_until_full(store: SessionStore, session_id: str) -> SkilldeckError:
    conn = store.backend._conn  # type: ignore[attr-defined]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    for i in range(1000):
        try:
            store.approve(session_id, f"Tool{i}-" + "x" * 400)
        except SkilldeckError as exc:
            return exc
    raise AssertionError("the database never filled up")


def test_full_disk_is_reported_as_full_and_heals(store: SessionStore) -> None:
    session = store.create(mode="approval")
    error = _fill_until_full(store, session.id)
    assert error.code is ErrorCode.EXECUTION_ERROR
    assert error.details["diagnostic"] == "SS005"
    assert error.message.startswith("disk full")
    assert "damaged" not in error.message
    assert store.get(session.id).mode == "approval", "reads still work on a full disk"
    conn = store.backend._conn  # type: ignore[attr-defined]
    conn.execute("PRAGMA max_page_count = 1073741823")
    healed = store.approve(session.id, "AfterSpaceFreed")
    assert "AfterSpaceFreed" in healed.approved
    assert store.check(session.id, "AfterSpaceFreed").allowed
    with SessionStore(store.path) as other:
        assert "AfterSpaceFreed" in other.get(session.id).approved


_ENOSPC_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from skilldeck.core.errors import SkilldeckError
    from skilldeck.core.sessions import SessionStore

    db = Path(sys.argv[1]) / "sessions.db"
    store = SessionStore(db)
    session = store.create(mode="approval")
    try:
        for i in range(100000):
            store.approve(session.id, f"Tool{i}-" + "x" * 400)
    except SkilldeckError as exc:
        print("ERROR", exc.details.get("diagnostic"), exc.message)
    (Path(sys.argv[1]) / "ballast").unlink()
    store.approve(session.id, "AfterSpaceFreed")
    print("HEALED", "AfterSpaceFreed" in store.get(session.id).approved)
    """
)


def _can_mount_tmpfs(where: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {where}"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


def test_real_enospc_on_a_tiny_tmpfs(tmp_path: Path) -> None:
    """The kernel's ENOSPC (a 512 KiB tmpfs in a private mount namespace)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if not _can_mount_tmpfs(mount):
        pytest.skip("unprivileged mount namespaces are not available here")
    script = tmp_path / "fill.py"
    script.write_text(_ENOSPC_SCRIPT, encoding="utf-8")
    shell = (
        f"mount -t tmpfs -o size=512k tmpfs {mount} && "
        f"dd if=/dev/zero of={mount}/ballast bs=1k count=160 2>/dev/null && "
        f"{sys.executable} {script} {mount}"
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", shell], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ERROR SS005 disk full"), done.stdout + done.stderr
    assert lines[-1] == "HEALED True", done.stdout + done.stderr
