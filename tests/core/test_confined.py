"""The one confinement rule: every read of a skill's files is bounded and stays inside it."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.confined import read_confined, refusal
from skilldeck.core.discovery.frontmatter import MAX_BODY_READ, parse_skill_file, read_body
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import load_skill, read_resource


def _skill_with_file(tmp_path: Path, target: Path | str, name: str = "odd") -> Path:
    """A skill whose SKILL.md is a good file and ``extra`` a symlink to ``target``."""
    md = write_skill(tmp_path, name)
    (md.parent / "extra").symlink_to(target)
    return md.parent / "extra"


def test_regular_file_inside_is_read(tmp_path: Path) -> None:
    md = write_skill(tmp_path, "good", body="# T\n\nhello\n")
    read = read_confined(md, md.parent, cap=10_000)
    assert b"hello" in read.data and not read.truncated


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/etc/passwd"])
def test_symlink_out_of_the_folder_is_refused(tmp_path: Path, target: str) -> None:
    extra = _skill_with_file(tmp_path, target)
    with pytest.raises(SkilldeckError) as err:
        read_confined(extra, extra.parent, cap=1000)
    assert err.value.code is ErrorCode.PERMISSION_DENIED
    assert refusal(extra, extra.parent) == "resolves outside the skill folder"


def test_symlink_inside_the_folder_is_followed(tmp_path: Path) -> None:
    md = write_skill(tmp_path, "inner")
    (md.parent / "real.txt").write_text("inside\n", encoding="utf-8")
    (md.parent / "alias.txt").symlink_to("real.txt")
    assert read_confined(md.parent / "alias.txt", md.parent, cap=100).data == b"inside\n"


def test_device_inside_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "dev-skill"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(folder / "zero", 0o600 | 0o020000, os.makedev(1, 5))
    with pytest.raises(SkilldeckError) as err:
        read_confined(folder / "zero", folder, cap=1000)
    assert "character device" in err.value.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_as_skill_md_does_not_block(tmp_path: Path) -> None:
    folder = tmp_path / "fifo-skill"
    folder.mkdir()
    os.mkfifo(folder / "SKILL.md")
    skill = parse_skill_file(folder / "SKILL.md", root=tmp_path)
    assert [d.code for d in skill.errors] == ["SD118"]
    with pytest.raises(SkilldeckError) as err:
        read_body(skill)
    assert "FIFO" in err.value.message


def test_sparse_file_is_cut_at_the_cap(tmp_path: Path) -> None:
    md = write_skill(tmp_path, "sparse")
    with open(md, "r+b") as handle:
        handle.truncate(3 * 1024**3)  # 3 GB, almost no disk
    read = read_confined(md, md.parent, cap=4096)
    assert read.truncated and len(read.data) == 4096 and read.size == 3 * 1024**3
    skill = parse_skill_file(md, root=tmp_path)
    assert len(read_body(skill).encode()) <= MAX_BODY_READ


def test_hard_link_refused_unless_allowed(tmp_path: Path, isolated_home: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n", encoding="utf-8")
    md = write_skill(tmp_path / "skills", "linked")
    os.link(outside, md.parent / "notes.md")
    skill = parse_skill_file(md, root=tmp_path / "skills")
    with pytest.raises(SkilldeckError) as err:
        read_resource(skill, "notes.md")
    assert err.value.code is ErrorCode.PERMISSION_DENIED
    assert "hard links" in err.value.message
    (isolated_home / "config.toml").write_text("allow_hardlinks = true\n", encoding="utf-8")
    assert read_resource(skill, "notes.md").text == "secret\n"


def test_skill_md_symlinked_outside_is_not_served(tmp_path: Path) -> None:
    folder = tmp_path / "passwdlink"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to("/etc/passwd")
    skill = parse_skill_file(folder / "SKILL.md", root=tmp_path)
    assert not skill.valid
    assert [d.code for d in skill.errors] == ["SD118"]
    with pytest.raises(SkilldeckError) as err:
        load_skill(skill)
    assert err.value.code is ErrorCode.PERMISSION_DENIED


def test_load_of_dev_zero_body_stays_bounded(tmp_path: Path) -> None:
    """A SKILL.md inside the folder that is endless: memory stays bounded (child process
    under a 512 MB address-space limit)."""
    md = write_skill(tmp_path, "endless")
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (512 * 1024**2, 512 * 1024**2))\n"
        "from pathlib import Path\n"
        "from skilldeck.core.discovery.frontmatter import parse_skill_file\n"
        "from skilldeck.core.loader import load_skill\n"
        f"p = Path({str(md)!r})\n"
        "s = parse_skill_file(p)\n"
        "with open(p, 'r+b') as f: f.truncate(3 * 1024**3)\n"
        "print(len(load_skill(s).text) < 10_000_000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "True", out.stderr[-2000:]
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 600_000


def test_skill_md_of_another_skill_outside_is_invalid(tmp_path: Path) -> None:
    """A SKILL.md symlinked to a well-formed SKILL.md elsewhere: invalid all the same."""
    other = write_skill(tmp_path / "elsewhere", "other")
    folder = tmp_path / "skills" / "other"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(other)
    skill = parse_skill_file(folder / "SKILL.md", root=tmp_path / "skills")
    assert [d.code for d in skill.errors] == ["SD118"]
    assert "outside the skill folder" in skill.errors[0].message
