"""Metadata cache: warm starts parse nothing, stale entries are re-parsed, bad files discarded."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import os
import pickle
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import skilldeck.core.discovery as discovery
from conftest import write_skill
from skilldeck.core.cache import (
    MAGIC,
    MetadataCache,
    clear_all,
    code_fingerprint,
    compose,
    pack_records,
    skill_from_record,
    skill_to_record,
)
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.model import Skill, Source, ToolRef, block_size, pack_block
from skilldeck.core.parse import parse_skill_file


@pytest.fixture
def parse_counter(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every SKILL.md that discovery actually parses (the real parser still runs)."""
    calls: list[str] = []
    real: Callable[..., Any] = discovery.read_head  # type: ignore[attr-defined]

    def counting(path: str, *args: Any) -> Any:
        calls.append(path)
        return real(path, *args)

    monkeypatch.setattr(discovery, "read_head", counting)
    return calls


def run(root: Path, **kwargs: Any) -> Any:
    return discover([Root(root, Source.EXPLICIT)], Settings(), **kwargs)


def make_skills(root: Path, n: int = 5) -> list[Path]:
    return [write_skill(root, f"skill-{i}", extra=f"version: '{i}'\n") for i in range(n)]


def test_warm_run_parses_nothing(tmp_path: Path, parse_counter: list[str]) -> None:
    make_skills(tmp_path)
    cold = run(tmp_path)
    assert len(parse_counter) == 5
    parse_counter.clear()
    warm = run(tmp_path)
    assert parse_counter == []
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in cold.skills]


def test_changed_and_new_files_are_reparsed(tmp_path: Path, parse_counter: list[str]) -> None:
    paths = make_skills(tmp_path)
    run(tmp_path)
    parse_counter.clear()
    paths[2].write_text("---\nname: skill-2\ndescription: Changed now.\n---\n")
    new = write_skill(tmp_path, "fresh")
    catalog = run(tmp_path)
    assert sorted(parse_counter) == sorted([str(paths[2]), str(new)])
    assert catalog.get("skill-2").description == "Changed now."  # type: ignore[union-attr]
    parse_counter.clear()
    paths[0].unlink()
    catalog = run(tmp_path)
    assert parse_counter == []
    assert "skill-0" not in catalog.names()


def test_same_size_same_mtime_change_is_detected_by_mtime(tmp_path: Path) -> None:
    (path,) = make_skills(tmp_path, 1)
    run(tmp_path)
    text = path.read_text().replace("Does a thing", "Does a think")
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1000))
    assert "think" in run(tmp_path).skills[0].description


def test_parse_diagnostics_are_cached(tmp_path: Path, parse_counter: list[str]) -> None:
    folder = tmp_path / "crlf"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(
        b"---\r\nname: crlf\r\ndescription: d\r\nname: crlf\r\n---\r\n"
    )
    cold = run(tmp_path)
    warm = run(tmp_path)
    assert len(parse_counter) == 1
    assert [d.to_dict() for d in warm.skills[0].diagnostics] == [
        d.to_dict() for d in cold.skills[0].diagnostics
    ]
    assert {"SD105", "SD116"} <= {d.code for d in warm.skills[0].diagnostics}


def test_profile_change_revalidates_without_reparsing(
    tmp_path: Path, parse_counter: list[str]
) -> None:
    write_skill(tmp_path, "Bad_Name", folder="bad")
    default = run(tmp_path)
    strict = run(tmp_path, profile="agentskills")
    assert len(parse_counter) == 1
    assert default.skills[0].valid != strict.skills[0].valid or (
        [d.code for d in default.skills[0].diagnostics]
        != [d.code for d in strict.skills[0].diagnostics]
    )
    again = run(tmp_path)
    assert [d.code for d in again.skills[0].diagnostics] == [
        d.code for d in default.skills[0].diagnostics
    ]


def test_no_cache_mode_writes_nothing(tmp_path: Path, isolated_home: Path) -> None:
    make_skills(tmp_path, 2)
    run(tmp_path, use_cache=False)
    assert not (isolated_home / "cache").exists()
    run(tmp_path)
    assert list((isolated_home / "cache" / "discovery").glob("*.cache"))
    assert clear_all() == 1


def cache_file(root: Path) -> Path:
    return MetadataCache(root).file


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda blob: b"garbage",
        lambda blob: b"",
        lambda blob: MAGIC + b"\x00\x01" + blob[len(MAGIC) + 2 :],  # other version
        lambda blob: blob[:-10] + bytes(10),  # torn / flipped payload
        lambda blob: blob[: len(blob) // 2],  # truncated
    ],
    ids=["garbage", "empty", "version", "flipped", "truncated"],
)
def test_corrupt_cache_is_discarded_and_rebuilt(
    tmp_path: Path, parse_counter: list[str], corrupt: Callable[[bytes], bytes]
) -> None:
    make_skills(tmp_path, 3)
    expected = [s.to_dict() for s in run(tmp_path).skills]
    path = cache_file(tmp_path)
    path.write_bytes(corrupt(path.read_bytes()))
    assert MetadataCache.load(tmp_path).discarded
    parse_counter.clear()
    assert [s.to_dict() for s in run(tmp_path).skills] == expected
    assert len(parse_counter) == 3
    assert MetadataCache.load(tmp_path).discarded == ""


@pytest.mark.parametrize("where", ["head", "segment"])
def test_foreign_pickle_is_never_executed(tmp_path: Path, where: str) -> None:
    """A file with valid checksums whose pickles would run code is discarded unrun."""
    make_skills(tmp_path, 1)
    run(tmp_path)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    head: dict[str, Any] = {
        "root": str(tmp_path),
        "code": code_fingerprint(),
        "validator": "",
        "tree": {},
        "segments": 1,
    }
    segment: dict[str, Any] = {"entries": {}, "validated": {}, "resources": {}}
    if where == "head":
        head["tree"] = Evil()
    else:
        segment["entries"] = {"x": Evil()}
    first, rest = pickle.dumps(head), [pickle.dumps(segment)]
    cache_file(tmp_path).write_bytes(compose(first, rest) + first + rest[0])
    cache = MetadataCache.load(tmp_path)
    assert cache.discarded == "corrupt (UnpicklingError)"
    assert not marker.exists()
    assert run(tmp_path).names() == ["skill-0"]


def test_a_file_with_valid_checksums_is_read(tmp_path: Path) -> None:
    """The counterpart of the test above: the same composition with plain data loads."""
    head = {"root": str(tmp_path), "code": code_fingerprint(), "tree": {}, "segments": 1}
    segment: dict[str, Any] = {"entries": {}, "validated": {}, "resources": {}}
    first, rest = pickle.dumps(head), [pickle.dumps(segment)]
    cache_file(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    cache_file(tmp_path).write_bytes(compose(first, rest) + first + rest[0])
    assert MetadataCache.load(tmp_path).discarded == ""
    cache_file(tmp_path).write_bytes(compose(first, rest) + first + rest[0] + b"x")
    assert MetadataCache.load(tmp_path).discarded == "corrupt (checksum mismatch)"


def test_cache_of_another_root_is_not_trusted(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_skills(a, 2)
    make_skills(b, 1)
    run(a)
    cache_file(b).parent.mkdir(parents=True, exist_ok=True)
    cache_file(b).write_bytes(cache_file(a).read_bytes())
    assert MetadataCache.load(b).discarded == "foreign content"
    assert run(b).names() == ["skill-0"]


def test_record_round_trip_with_yaml_dates(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "dated", extra="created: 2024-05-01\nmeta: {a: [1, 2]}\n")
    os.utime(path, ns=(10**18, 10**18))  # old enough to be trusted on (mtime, size)
    skill = parse_skill_file(path, root=tmp_path)
    assert skill.frontmatter["created"] == datetime.date(2024, 5, 1)
    cache = MetadataCache(tmp_path)
    cache.put(str(path), skill)
    assert cache.save()
    loaded = MetadataCache.load(tmp_path)
    assert loaded.discarded == ""
    record = loaded.get(str(path), str(path), skill.mtime_ns, skill.size)
    assert record is not None
    again = skill_from_record(record, skill.path, skill.base_dir, skill.source, tmp_path, "dated")
    again.resources = skill.resources
    assert again.to_dict() == skill.to_dict()
    assert skill_to_record(again) == skill_to_record(skill)


def test_cached_details_are_unpacked_on_first_read(tmp_path: Path) -> None:
    """A skill rebuilt from the cache keeps its details (frontmatter, tags, tools, …)
    packed until one is read or set; a value set before that survives the unpacking."""
    extra = (
        "allowed-tools: Read Bash(git:*)\nmetadata:\n  tags: [a, b]\n  version: '2'\n"
        "triggers:\n  keywords: [pdf]\n"
    )
    path = write_skill(tmp_path, "lazy", extra=extra)
    skill = parse_skill_file(path, root=tmp_path)
    assert skill.tags == ("a", "b") and skill.triggers.keywords == ("pdf",)
    other_skill = parse_skill_file(write_skill(tmp_path, "other"), root=tmp_path)
    record, _other = pack_records([skill_to_record(skill), skill_to_record(other_skill)])
    assert record is not None and _other is not None
    assert record[-2] is _other[-2] and block_size(record[-2]) == 2  # one block for both

    def rebuilt() -> Skill:
        assert record is not None
        return skill_from_record(record, skill.path, skill.base_dir, skill.source, tmp_path, "lazy")

    lazy = rebuilt()
    assert skill_to_record(lazy) == record  # the block is kept, nothing pickled again
    assert lazy.field_lines == skill.field_lines
    for name in ("frontmatter", "tags", "version", "triggers", "tools", "allowed_tools"):
        assert getattr(lazy, name) == getattr(skill, name), name
    assert skill_to_record(lazy)[-2] is None  # unpacked: its row again
    again = rebuilt()
    assert again.frontmatter == lazy.frontmatter
    assert again.frontmatter is not lazy.frontmatter  # each skill its own mutable values
    assert lazy.tools[0] is again.tools[0]  # frozen tool references are shared
    other = rebuilt()
    other.tags = ("set",)
    assert other.frontmatter == skill.frontmatter
    assert other.tags == ("set",)
    assert skill_to_record(other)[-1][5] == ("set",)
    fresh, unpacked = rebuilt(), rebuilt()
    assert unpacked.version == "2"
    assert fresh == unpacked == skill  # equality reads through the packing
    assert repr(rebuilt()) == repr(skill)
    assert isinstance(lazy.tools[0], ToolRef)


def test_a_packed_skill_behaves_like_a_plain_one(tmp_path: Path) -> None:
    """Copies, replace, asdict, equality both ways, unknown attributes and threads reading
    while it unpacks all see the same skill."""
    path = write_skill(tmp_path, "twin", extra="metadata:\n  tags: [a, b]\n")
    skill = parse_skill_file(path, root=tmp_path)
    records = pack_records([skill_to_record(skill)] * 2)
    assert records[0] is not None

    def rebuilt() -> Skill:
        record = records[0]
        assert record is not None
        return skill_from_record(record, skill.path, skill.base_dir, skill.source, tmp_path, "twin")

    assert skill == rebuilt() and rebuilt() == skill
    assert rebuilt() != dataclasses.replace(skill, name="other")
    assert copy.copy(rebuilt()) == skill
    assert dataclasses.replace(rebuilt(), name="renamed").tags == ("a", "b")
    assert dataclasses.asdict(rebuilt()) == dataclasses.asdict(skill)
    packed = rebuilt()
    with pytest.raises(AttributeError):
        packed.no_such_field  # type: ignore[attr-defined]  # noqa: B018
    assert type(packed) is not Skill  # asking for a missing name unpacks nothing
    packed.resources = ("x.md",)  # not a detail: still packed
    assert type(packed) is not Skill

    for _ in range(20):
        many = [rebuilt() for _ in range(200)]
        seen: list[tuple[str, ...]] = []

        def read(skills: list[Skill] = many, out: list[tuple[str, ...]] = seen) -> None:
            out.extend(s.tags for s in skills)

        workers = [threading.Thread(target=read) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert seen == [("a", "b")] * 800


def test_a_foreign_packed_block_is_neither_run_nor_fatal(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "odd", extra="metadata:\n  tags: [a]\n")
    skill = parse_skill_file(path, root=tmp_path)
    (record,) = pack_records([skill_to_record(skill)])
    assert record is not None
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    (good,) = pickle.loads(record[-2][4:])
    forgeries = [
        pack_block([(Evil(), *good[1:])]),
        b"\x00\x00\x00\x01not a pickle",
        pack_block(["wrong shape"]),
        pack_block([(*good[:5], "tags not a tuple", *good[6:])]),
        pack_block([(*good[:12], (("not", "a", "tool", "row", "at all"),))]),
    ]
    for block in forgeries:
        forged = (*record[:-2], block, 0)
        again = skill_from_record(forged, skill.path, skill.base_dir, skill.source, tmp_path, ".")
        assert again.frontmatter == {}
        assert again.field_lines == {}
        assert again.tags == () and again.tools == ()
        assert again.name == "odd"
    out_of_range = (*record[:-2], record[-2], 5)
    again = skill_from_record(out_of_range, skill.path, skill.base_dir, skill.source, tmp_path, ".")
    assert again.tags == ()
    assert not marker.exists()


def test_blocks_mostly_of_gone_skills_are_repacked(tmp_path: Path) -> None:
    """Entries keep the block of details they were saved in; once most of a block's rows
    belong to skills that are gone, the rest are packed into a new block."""
    paths = make_skills(tmp_path, 10)

    def blocks() -> list[int]:
        loaded = MetadataCache.load(tmp_path)
        assert loaded.discarded == ""
        return sorted({block_size(r[-2]) for r in loaded.entries.values()})

    run(tmp_path)
    assert blocks() == [10]
    for path in paths[:5]:
        shutil.rmtree(path.parent)
    assert run(tmp_path).names() == [f"skill-{i}" for i in range(5, 10)]
    assert blocks() == [10]  # half the rows still live: kept as it is
    shutil.rmtree(paths[5].parent)
    catalog = run(tmp_path)
    assert blocks() == [4]
    assert [s.version for s in catalog.skills] == ["6", "7", "8", "9"]
    assert [s.version for s in run(tmp_path).skills] == ["6", "7", "8", "9"]


def test_racy_entry_is_checked_by_hash(tmp_path: Path, parse_counter: list[str]) -> None:
    (path,) = make_skills(tmp_path, 1)
    run(tmp_path)  # just written: the entry is "racy"
    st = path.stat()
    path.write_text(path.read_text().replace("Does a thing", "Does a thong"))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime tick
    assert path.stat().st_size == st.st_size
    assert "thong" in run(tmp_path).skills[0].description
    parse_counter.clear()
    assert "thong" in run(tmp_path).skills[0].description
    assert parse_counter == []  # hash matched: no parse


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    make_skills(tmp_path, 2)
    run(tmp_path)
    folder = cache_file(tmp_path).parent
    assert [p.name for p in folder.iterdir()] == [cache_file(tmp_path).name]


def test_concurrent_writers_never_leave_a_torn_file(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "root"
    paths = make_skills(root, 20)
    code = (
        "import sys, os\n"
        "from pathlib import Path\n"
        "from skilldeck.core.config import Settings\n"
        "from skilldeck.core.discovery import Root, discover\n"
        "from skilldeck.core.model import Source\n"
        "root = Path(sys.argv[1]); p = Path(sys.argv[2])\n"
        "for i in range(15):\n"
        "    os.utime(p, ns=(i, i * 1000 + int(sys.argv[3])))\n"
        "    assert len(discover([Root(root, Source.EXPLICIT)], Settings()).skills) == 20\n"
    )
    env = dict(os.environ, SKILLDECK_HOME=str(isolated_home))
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(root), str(paths[i]), str(i)], env=env)
        for i in range(2)
    ]
    problems = set()
    while any(p.poll() is None for p in procs):
        cache = MetadataCache.load(root)
        if cache.discarded:
            problems.add(cache.discarded)
    assert [p.wait() for p in procs] == [0, 0]
    assert problems == set()
    assert MetadataCache.load(root).discarded == ""


def test_resource_listing_cache_follows_folder_changes(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "res")
    folder = path.parent
    (folder / "a.txt").write_text("a")
    old = 1_000_000_000_000_000_000
    os.utime(folder, ns=(old, old))
    assert run(tmp_path).skills[0].resources == ("a.txt",)
    cache = MetadataCache.load(tmp_path)
    assert cache.get_resources(str(path), old) == (("a.txt",), False)
    assert run(tmp_path).skills[0].resources == ("a.txt",)  # served from the cache
    (folder / "b.txt").write_text("b")  # changes the folder mtime
    assert run(tmp_path).skills[0].resources == ("a.txt", "b.txt")
    (folder / "sub").mkdir()
    (folder / "sub" / "c.txt").write_text("c")
    os.utime(folder, ns=(old + 5, old + 5))
    assert run(tmp_path).skills[0].resources == ("a.txt", "b.txt", "sub/c.txt")
    (folder / "sub" / "d.txt").write_text("d")  # folder mtime unchanged: not cached, still seen
    assert run(tmp_path).skills[0].resources == ("a.txt", "b.txt", "sub/c.txt", "sub/d.txt")


def test_body_edit_and_touch_reuse_frontmatter(tmp_path: Path, parse_counter: list[str]) -> None:
    (path,) = make_skills(tmp_path, 1)
    run(tmp_path)
    parse_counter.clear()
    path.write_text(path.read_text() + "\nMore body text.\n")  # body only: same frontmatter
    os.utime(path, ns=(5, 5))
    skill = run(tmp_path).skills[0]
    assert parse_counter == []
    assert (skill.size, skill.mtime_ns) == (path.stat().st_size, 5)
    assert skill.description == "Does a thing. Use when testing."
    path.write_text(path.read_text().replace("Does a thing", "Does another thing"))
    assert run(tmp_path).skills[0].description == "Does another thing. Use when testing."
    assert parse_counter == [str(path)]
