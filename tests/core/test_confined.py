"""The one confinement rule: every read of a skill's files is bounded and stays inside it."""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
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


def _exchange() -> Callable[[Path, Path], None] | None:
    """``renameat2(RENAME_EXCHANGE)`` (atomic swap of two names), None where missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return None

    def swap(one: Path, other: Path) -> None:
        if renameat2(-100, bytes(one), -100, bytes(other), 2) != 0:  # AT_FDCWD, EXCHANGE
            raise OSError(ctypes.get_errno(), "renameat2")

    return swap


def swap_race(
    tmp_path: Path, read: Callable[[Path, Path], bytes], reads: int = 4000, fifo: bool = False
) -> tuple[int, int]:
    """Read ``docs/notes.md`` of a skill ``reads`` times while a thread swaps ``docs`` for a
    symlink to an outside folder and back in a tight loop (atomically where the system
    can, so the path always exists). Returns (leaks, reads served). ``fifo``: the file
    inside is a FIFO (never fine to read) instead of a regular file."""
    folder = write_skill(tmp_path / "skills", "racy").parent
    docs, link = folder / "docs", folder / "docs.link"
    docs.mkdir()
    if fifo:
        os.mkfifo(docs / "notes.md")
    else:
        (docs / "notes.md").write_bytes(b"inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_bytes(b"SECRET\n")
    link.symlink_to(outside)
    exchange = _exchange()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            if exchange is not None:
                exchange(docs, link)
                continue
            held = folder / "docs.real"
            os.rename(docs, held)
            os.rename(link, docs)
            os.rename(docs, link)
            os.rename(held, docs)

    swapper = threading.Thread(target=swap, daemon=True)
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    swapper.start()
    leaks = served = 0
    try:
        for _ in range(reads):
            try:
                data = read(docs / "notes.md", folder)
            except SkilldeckError:
                continue
            served += 1
            leaks += b"SECRET" in data
    finally:
        stop.set()
        swapper.join()
        sys.setswitchinterval(old_interval)
    return leaks, served


def test_a_folder_swapped_for_a_symlink_never_leaks_an_outside_file(tmp_path: Path) -> None:
    """The last component alone was opened with O_NOFOLLOW: swapping a listed folder for a
    symlink between the check and the open leaked the outside file (the old code leaks
    here in most runs; see the report of issue 32)."""
    leaks, served = swap_race(tmp_path, lambda p, f: read_confined(p, f, cap=100).data)
    assert leaks == 0
    assert served > 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_refusal_judges_the_file_it_walked_to_not_one_swapped_in(tmp_path: Path) -> None:
    """Inside, ``docs/notes.md`` is a FIFO (refused); outside, a regular file. The old
    ``refusal`` checked the path, then stat'ed whatever the swapped symlink led to, and
    called the outside file fine (None); each verdict must be about one file walked to."""

    def judged(path: Path, folder: Path) -> bytes:
        problem = refusal(path, folder)
        if problem is None:
            return b"SECRET judged fine"
        raise SkilldeckError(ErrorCode.PERMISSION_DENIED, problem)

    if _exchange() is None:
        pytest.skip("needs renameat2: a plain rename leaves moments where the path is missing")
    assert swap_race(tmp_path, judged, fifo=True) == (0, 0)


def test_links_inside_the_folder_are_resolved_beneath_it(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "links").parent
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "real.txt").write_bytes(b"deep\n")
    (folder / "hop").symlink_to("a/b")
    (folder / "a" / "up").symlink_to("../hop/real.txt")
    (folder / "abs").symlink_to(folder / "a" / "b" / "real.txt")
    for rel in ("hop/real.txt", "a/up", "abs", "a/b/../b/real.txt"):
        assert read_confined(folder / rel, folder, cap=100).data == b"deep\n", rel
        assert refusal(folder / rel, folder) is None


@pytest.mark.parametrize(
    "target", ["..", "../..", "a/../../x", "/etc", "/"], ids=["up", "upup", "climb", "abs", "root"]
)
def test_a_link_climbing_out_is_refused_before_anything_is_opened_outside(
    tmp_path: Path, target: str
) -> None:
    folder = write_skill(tmp_path / "skills", "climb").parent
    (folder / "a").mkdir()
    (tmp_path / "skills" / "passwd").write_bytes(b"SECRET\n")
    (folder / "out").symlink_to(target)
    path = folder / "out" / "passwd"
    assert refusal(path, folder) == "resolves outside the skill folder"
    with pytest.raises(SkilldeckError) as err:
        read_confined(path, folder, cap=100)
    assert err.value.code is ErrorCode.PERMISSION_DENIED


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "loop").parent
    (folder / "x").symlink_to("y")
    (folder / "y").symlink_to("x")
    with pytest.raises(SkilldeckError) as err:
        read_confined(folder / "x", folder, cap=100)
    assert "outside the skill folder" in err.value.message


def test_a_symlinked_skill_folder_is_the_anchor(tmp_path: Path) -> None:
    """The skill folder itself may be a symlink (a skills folder of links): its files are
    read by the path the user sees and by their real path alike."""
    real = write_skill(tmp_path / "store", "anchored", body="# A\n\nanchored\n").parent
    (tmp_path / "skills").mkdir()
    seen = tmp_path / "skills" / "anchored"
    seen.symlink_to(real)
    assert b"anchored" in read_confined(seen / "SKILL.md", seen, cap=1000).data
    assert b"anchored" in read_confined(real / "SKILL.md", seen, cap=1000).data


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_refusal_names_a_fifo_without_opening_it(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "pipe").parent
    os.mkfifo(folder / "pipe")
    assert refusal(folder / "pipe", folder) == "is a FIFO"
