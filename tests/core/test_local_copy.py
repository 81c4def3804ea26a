"""A local folder source is copied only as regular files and folders, within the caps:
a device, FIFO or socket, or a source over a cap, is refused before anything is read."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import FILE_CAP
from skilldeck.core.install import local_copy
from skilldeck.core.install.git import fetch_source


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    write_skill(src, "x")
    return src


def _refused(source: Path, dest: Path) -> SkilldeckError:
    with pytest.raises(SkilldeckError) as err:
        fetch_source(str(source), None, dest)
    assert err.value.details.get("reason") == "unsafe_source", err.value.message
    assert err.value.code is ErrorCode.PERMISSION_DENIED
    return err.value


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_character_device_in_a_local_source_is_not_copied(tmp_path: Path) -> None:
    """The old copy wrote /dev/zero until the disk was full: here in a child process under
    a 256 MB file-size limit, which such a copy hits (SIGXFSZ) well before the timeout."""
    src = _source(tmp_path)
    os.mknod(src / "x" / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    dest = tmp_path / "dest"
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024**2, 256 * 1024**2))\n"
        "from pathlib import Path\n"
        "from skilldeck.core.errors import SkilldeckError\n"
        "from skilldeck.core.install.git import fetch_source\n"
        "try:\n"
        f"    fetch_source({str(src)!r}, None, Path({str(dest)!r}))\n"
        "except SkilldeckError as exc:\n"
        "    print(exc.details.get('reason'), exc.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("unsafe_source "), done.stdout
    assert "x/zero is a character device" in done.stdout
    assert not dest.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_in_a_local_source_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    src = _source(tmp_path)
    os.mkfifo(src / "x" / "pipe")
    dest = tmp_path / "dest"
    err = _refused(src, dest)
    assert "x/pipe is a FIFO" in err.message
    assert not dest.exists()


def test_a_device_named_as_the_source_is_refused(tmp_path: Path) -> None:
    err = _refused(Path("/dev/zero"), tmp_path / "dest")
    assert "is a character device, not a folder" in err.message


def test_a_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    src = _source(tmp_path)
    with open(src / "x" / "huge.bin", "wb") as handle:
        handle.truncate(3 * 1024**3)  # sparse: 3 GB that costs no disk
    start = time.monotonic()
    err = _refused(src, tmp_path / "dest")
    assert f"{FILE_CAP}-byte cap" in err.message and time.monotonic() - start < 5
    assert not (tmp_path / "dest").exists()


def test_too_many_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(The cap is lowered: creating 5,001 files takes seconds on a busy disk.)"""
    monkeypatch.setattr(local_copy, "MAX_FILES", 20)
    src = _source(tmp_path)
    many = src / "many"
    many.mkdir()
    for n in range(21):
        (many / str(n)).touch()
    assert "more than 20 files" in _refused(src, tmp_path / "dest").message


def test_a_plain_folder_is_copied_with_links_as_links(tmp_path: Path) -> None:
    src = _source(tmp_path)
    run = src / "x" / "run.sh"
    run.write_bytes(b"#!/bin/sh\necho ok\n")
    run.chmod(0o755)
    (src / "x" / "escape").symlink_to("/dev/zero")
    (src / "x" / ".git").mkdir()  # a nested one: the source itself is no repository
    (src / "x" / ".git" / "config").write_text("[core]\n")
    fetched = fetch_source(str(src), None, tmp_path / "dest")
    out = fetched.path / "x"
    assert fetched.commit is None
    assert (out / "SKILL.md").read_bytes() == (src / "x" / "SKILL.md").read_bytes()
    assert (out / "run.sh").read_bytes() == b"#!/bin/sh\necho ok\n"
    assert os.access(out / "run.sh", os.X_OK)
    assert os.readlink(out / "escape") == "/dev/zero"
    assert not (out / ".git").exists()


def test_a_missing_source_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(SkilldeckError) as err:
        fetch_source(str(tmp_path / "nowhere"), None, tmp_path / "dest")
    assert err.value.code is ErrorCode.NOT_FOUND
