"""The speed-ups of parsing and discovery give exactly what the slow, general paths give."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_corpus import all_skill_files

import skilldeck.core.discovery as discovery
import skilldeck.core.parse as parse
from conftest import write_skill
from skilldeck.core.cache import MetadataCache, skill_from_record, skill_to_record
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover
from skilldeck.core.model import DETAILS, PackedSkill, Skill, Source

OLD = 1_000_000_000_000_000_000  # an mtime far in the past: trusted by the cache


def by_yaml(text: str) -> tuple[Any, dict[str, int]]:
    """What the general path gives: our YAML loader's value and the key lines."""
    skill = Skill(name="x", description="", path=Path("/x/SKILL.md"), base_dir=Path("/x"))
    real = parse._fast_yaml
    parse._fast_yaml = lambda text: None  # type: ignore[assignment]
    try:
        value = parse._load_yaml(skill, text)
    finally:
        parse._fast_yaml = real
    return value, skill.field_lines


def same(a: Any, b: Any) -> bool:
    """Equal values of identical types all the way down (True != 1 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_fast(text: str) -> bool:
    """Assert the fast path agrees with YAML on ``text``; True when it was taken."""
    fast = parse._fast_yaml(text)
    if fast is None:
        return False
    value, lines = by_yaml(text)
    assert same(fast[0], value), (text, fast[0], value)
    assert fast[1] == lines, text
    plain = yaml.load(text, Loader=parse._Loader)
    assert same(fast[0], plain)
    return True


def frontmatter_text(path: Path) -> str | None:
    head = parse._read_head(str(path))
    located = parse._locate(head.data, head.eof)
    if located is None or located[1] < 0:
        return None
    return head.data[located[0] : located[1]].decode("utf-8", "replace").replace("\r\n", "\n")


def test_fast_path_equals_yaml_on_the_whole_corpus(corpus_dir: Path) -> None:
    taken = 0
    files = all_skill_files(corpus_dir)
    for path in files:
        text = frontmatter_text(path)
        if text is not None:
            taken += check_fast(text)
    assert taken > len(files) // 3  # the fast path is the common case on real files


def test_corpus_skills_are_identical_with_and_without_the_fast_path(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = all_skill_files(corpus_dir)
    fast = [parse.parse_skill_file(p, root=corpus_dir).to_dict() for p in files]
    monkeypatch.setattr(parse, "_fast_yaml", lambda text: None)
    slow = [parse.parse_skill_file(p, root=corpus_dir).to_dict() for p in files]
    assert fast == slow


PLAIN = st.text(
    st.sampled_from([*"abyYnNtTfFoO019 -_.:#'\"[](),!&*|>%@`?~=\\/+", "é"]), min_size=1, max_size=10
)
SAFE = st.text(st.sampled_from([*"abcXYZ019 -_./()+", "é"]), min_size=1, max_size=12)
VALUES = st.one_of(
    SAFE,
    SAFE,
    PLAIN,
    st.sampled_from(
        [
            "true",
            "False",
            "yes",
            "off",
            "null",
            "~",
            "12",
            "012",
            "0x1f",
            "1.5",
            ".inf",
            "2024-01-02",
            "1_000",
            "-3",
            "+4",
            "a: b",
            "a #c",
            "a#c",
            "x:",
            "<<",
            "=",
            "Bash(git log:*)",
            "'it''s'",
            '"say \\"hi\\""',
            "&a x",
            "*a",
            "!!str 1",
            "|",
            ">-",
            "- x",
        ]
    ),
)
KEYS = st.sampled_from(
    ["name", "description", "on", "yes", "null", "1", "a-b", "x.y", "tags", "_k"]
)
PADS = st.sampled_from(["", " ", "  "])


MOSTLY_SAFE = st.one_of(SAFE, SAFE, SAFE, SAFE, SAFE, VALUES)
NICE_KEYS = st.sampled_from(["name", "description", "license", "a-b", "x.y", "tags", "_k"])


@st.composite
def documents(
    draw: st.DrawFn, values: st.SearchStrategy[str] = VALUES, keys: st.SearchStrategy[str] = KEYS
) -> str:
    lines: list[str] = []
    for key in draw(st.lists(keys, min_size=1, max_size=6, unique=True)):
        kind = draw(st.integers(0, 6 if values is VALUES else 4))
        pad = draw(PADS)
        if kind == 0:
            lines.append(f"{key}: {draw(values)}{pad}")
        elif kind == 1:
            items = draw(st.lists(values, max_size=4))
            lines.append(f"{key}: [{', '.join(items)}]{pad}")
        elif kind == 2:
            lines.append(f"{key}:{pad}")
            indent = draw(st.sampled_from(["", "  ", "    "]))
            for item in draw(st.lists(values, min_size=1, max_size=3)):
                lines.append(f"{indent}- {item}{draw(PADS)}")
        elif kind == 3:
            lines.append(f"{key}:")
            for sub in draw(st.lists(keys, min_size=1, max_size=3, unique=values is not VALUES)):
                lines.append(f"  {sub}: {draw(values)}{draw(PADS)}")
        elif kind == 4:
            quote = draw(st.sampled_from(["'", '"']))
            lines.append(f"{key}: {quote}{draw(PLAIN)}{quote}{pad}")
        elif kind == 5:
            lines.append(draw(st.sampled_from(["", "", "# comment", "  ", "---", "..."])))
        else:
            lines.append(f"{key}: {draw(VALUES)} # note")
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@settings(max_examples=700, deadline=None)
@given(documents())
def test_fast_path_agrees_with_the_yaml_loader(text: str) -> None:
    check_fast(text)


@settings(max_examples=1000, deadline=None)
@given(documents(MOSTLY_SAFE, NICE_KEYS))
def test_fast_path_agrees_with_the_yaml_loader_on_plain_documents(text: str) -> None:
    check_fast(text)


@pytest.mark.parametrize(
    "text",
    [
        "name: x\ndescription: plain words here\nlicense: MIT\n",
        "name: x\ntags: [a, b]\nmetadata:\n  version: '1.0'\n  tags: [c]\n",
        "name: x   \ndescription: trailing spaces   \n",
        "name: x\nallowed-tools:\n  - Read\n  - Bash(git log:*)\n",
    ],
)
def test_common_shapes_take_the_fast_path(text: str) -> None:
    assert check_fast(text)


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nname: y\n",  # duplicate key: YAML reports it
        "name: x\ndescription: |\n  block\n",
        "name: &a x\nother: *a\n",
        "name: x # comment\n",
        "on: x\n",  # a key YAML reads as a bool
        "name: 2024-01-02\n",
        "name: 1.5\n",
        "name: null\n",
        "name: yes\n",
        "name: {a: b}\n",
        "name: a: b\n",
        "name: !!str x\n",
        'name: "esc\\n"\n',
    ],
)
def test_anything_else_goes_to_yaml(text: str) -> None:
    assert parse._fast_yaml(text) is None


# --- discovery ---------------------------------------------------------------------------


def test_a_rebuilt_skill_sets_every_field_but_the_packed_details(tmp_path: Path) -> None:
    """skill_from_record sets fields one by one: a field added to Skill must be set there
    (or be a packed detail), and reading one detail sets them all."""
    path = tmp_path / "one" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("---\nname: one\ndescription: Does one thing. Use when testing.\n---\n")
    skill = parse.parse_skill_file(path, root=tmp_path)
    record = skill_to_record(skill)
    assert record is not None
    again = skill_from_record(record, skill.path, skill.base_dir, skill.source, tmp_path, "one")
    names = [f.name for f in dataclasses.fields(Skill)]
    unset = [n for n in names if not _slot_is_set(again, n)]
    assert unset == list(DETAILS)
    assert type(again) is PackedSkill
    assert again.tags == ()
    assert [n for n in names if not _slot_is_set(again, n)] == []
    assert type(again) is Skill  # unpacked: a plain skill from now on
    assert again == skill


def _slot_is_set(skill: Skill, name: str) -> bool:
    slot = Skill.__dict__[name]
    try:
        slot.__get__(skill, Skill)
    except AttributeError:
        return False
    return True


@pytest.fixture
def list_counter(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every resource listing discovery computes (the real one still runs)."""
    calls: list[str] = []
    real: Callable[..., Any] = discovery.list_resources  # type: ignore[attr-defined]

    def counting(folder: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(folder)
        return real(folder, *args, **kwargs)

    monkeypatch.setattr(discovery, "list_resources", counting)
    return calls


def age(*paths: Path, step: int = 0) -> None:
    for path in paths:
        os.utime(path, ns=(OLD + step, OLD + step))


def run(root: Path, **kwargs: Any) -> Any:
    return discover([Root(root, Source.EXPLICIT)], Settings(), **kwargs)


def test_listings_with_subfolders_are_cached_and_follow_every_change(
    tmp_path: Path, list_counter: list[str]
) -> None:
    md = write_skill(tmp_path, "deep")
    folder = md.parent
    (folder / "scripts" / "lib").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text("x")
    (folder / "scripts" / "lib" / "util.py").write_text("x")
    age(md, folder, folder / "scripts", folder / "scripts" / "lib")
    expected = ("scripts/lib/util.py", "scripts/run.py")
    assert run(tmp_path).skills[0].resources == expected
    list_counter.clear()
    assert run(tmp_path).skills[0].resources == expected
    assert list_counter == []  # warm: served from the cache, nothing listed
    (folder / "scripts" / "lib" / "more.py").write_text("x")  # only lib's mtime changes
    assert run(tmp_path).skills[0].resources == (
        "scripts/lib/more.py",
        "scripts/lib/util.py",
        "scripts/run.py",
    )
    (folder / "scripts" / "lib" / "util.py").unlink()
    (folder / "scripts" / "run.py").unlink()
    age(folder / "scripts", folder / "scripts" / "lib", step=7)
    assert run(tmp_path).skills[0].resources == ("scripts/lib/more.py",)
    (folder / "scripts" / "lib" / "more.py").unlink()
    (folder / "scripts" / "lib").rmdir()
    age(folder / "scripts", step=9)
    assert run(tmp_path).skills[0].resources == ()


def test_cached_listing_is_not_trusted_without_its_folder(tmp_path: Path) -> None:
    md = write_skill(tmp_path, "sub")
    (md.parent / "docs").mkdir()
    (md.parent / "docs" / "a.md").write_text("a")
    age(md, md.parent, md.parent / "docs")
    run(tmp_path)
    cache = MetadataCache.load(tmp_path)
    assert cache.get_resources(str(md), OLD) is None  # subfolders cannot be checked
    assert cache.get_resources(str(md), OLD, str(md.parent)) == (("docs/a.md",), False)
    assert cache.get_resources(str(md), OLD + 1, str(md.parent)) is None


def test_warm_run_reads_no_file_and_lists_no_folder(
    tmp_path: Path, list_counter: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        md = write_skill(tmp_path, f"s{i}", extra="metadata:\n  tags: [a, 1]\n")
        (md.parent / "scripts").mkdir()
        (md.parent / "scripts" / "x.sh").write_text("x")
        age(md, md.parent, md.parent / "scripts")
    cold = run(tmp_path)
    list_counter.clear()
    monkeypatch.setattr(discovery, "read_head", None)
    monkeypatch.setattr(discovery, "parse_read", None)
    monkeypatch.setattr(discovery, "frontmatter_hash", None)
    warm = run(tmp_path)
    assert list_counter == []
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in cold.skills]


def many(root: Path, n: int) -> None:
    for i in range(n):
        md = write_skill(root, f"s{i:02d}", extra="allowed-tools: Read Bash(git log:*)\n")
        if i % 3 == 0:
            (md.parent / "docs").mkdir()
            (md.parent / "docs" / "guide.md").write_text("g")
    bad = root / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_bytes(b"---\nname: [x\n---\n")
    (root / "odd").mkdir()
    (root / "odd" / "skill.md").write_text("---\nname: odd\ndescription: d\n---\n")


def test_parallel_load_with_resources_equals_serial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many(tmp_path, 14)
    serial = run(tmp_path, use_cache=False)
    monkeypatch.setattr(discovery, "PARALLEL_MIN", 4)
    if not discovery._parallel_ok(20):
        pytest.skip("forked workers not available here")
    for use_cache in (False, True, True):
        again = run(tmp_path, use_cache=use_cache)
        assert [s.to_dict() for s in again.skills] == [s.to_dict() for s in serial.skills]


def _break_workers(monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    """Forked workers raise when shipping their chunk number ``after`` + 1 (the main
    process is untouched)."""
    main, real = os.getpid(), discovery.pack_segment
    shipped = [0]

    def flaky(rows: Any) -> bytes:
        if os.getpid() != main:
            shipped[0] += 1
            if shipped[0] > after:
                raise RuntimeError("worker cannot ship")
        return real(rows)

    monkeypatch.setattr(discovery, "pack_segment", flaky)


@pytest.mark.parametrize("after", [0, 1])
def test_a_failing_worker_is_replaced_by_loading_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    """A worker that fails at once, or after shipping one chunk: what it shipped is kept,
    the chunks it took and did not ship are loaded here, and the cache is complete."""
    many(tmp_path, 30)
    serial = run(tmp_path, use_cache=False)
    monkeypatch.setattr(discovery, "PARALLEL_MIN", 4)
    if not discovery._parallel_ok(40):
        pytest.skip("forked workers not available here")
    _break_workers(monkeypatch, after)
    again = run(tmp_path)
    assert [s.to_dict() for s in again.skills] == [s.to_dict() for s in serial.skills]
    cache = MetadataCache.load(tmp_path)
    assert len(cache.entries) == len(serial.skills)
    monkeypatch.undo()
    warm = run(tmp_path)
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in serial.skills]


def test_parallel_cold_load_writes_a_complete_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks pickled by the workers are written as cache segments: a warm run after a
    parallel cold one parses and lists nothing."""
    many(tmp_path, 40)
    for path in tmp_path.rglob("*"):
        age(path)
    monkeypatch.setattr(discovery, "PARALLEL_MIN", 4)
    if not discovery._parallel_ok(40):
        pytest.skip("forked workers not available here")
    cold = run(tmp_path)
    cache = MetadataCache.load(tmp_path)
    assert cache.discarded == ""
    assert len(cache.entries) == len(cold.skills)
    monkeypatch.setattr(discovery, "parse_read", None)
    monkeypatch.setattr(discovery, "list_resources", None)
    warm = run(tmp_path)
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in cold.skills]


def test_parallel_load_keeps_two_folders_sharing_one_skill_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two folders whose SKILL.md is the same file (a symlink) land in one chunk; both are
    rebuilt as they were found, as the serial load does."""
    many(tmp_path, 12)
    for name in ("s05", "s06"):
        alias = tmp_path / f"{name}-alias"
        alias.mkdir()
        (alias / "SKILL.md").symlink_to(tmp_path / name / "SKILL.md")
    serial = run(tmp_path, use_cache=False)
    monkeypatch.setattr(discovery, "PARALLEL_MIN", 4)
    monkeypatch.setattr(  # chunks of 4: s06 and its alias share one
        discovery,
        "_chunks",
        lambda count, procs: [(i, min(i + 4, count)) for i in range(0, count, 4)],
    )
    if not discovery._parallel_ok(40):
        pytest.skip("forked workers not available here")
    for use_cache in (False, True, True):
        again = run(tmp_path, use_cache=use_cache)
        assert [s.to_dict() for s in again.skills] == [s.to_dict() for s in serial.skills]


@pytest.mark.parametrize("name", ["plain", "with space", "ünï-cødé", "a.b"])
def test_skill_paths_built_directly_equal_parsed_ones(name: str) -> None:
    parent = Path("/root") / "group"
    folder, md_text = f"/root/group/{name}", f"/root/group/{name}/SKILL.md"
    for pair in (discovery._pair_direct, discovery._pair_fallback):
        try:
            base, md = pair(parent, name, "SKILL.md", folder, md_text)
        except AttributeError:  # another Python's paths: the fallback is what runs
            assert discovery._pair is discovery._pair_fallback
            continue
        assert (base, md) == (Path(folder), Path(md_text))
        assert (str(base), str(md)) == (folder, md_text)
        assert (hash(base), hash(md)) == (hash(Path(folder)), hash(Path(md_text)))
        assert md.parent == base and base.parent == parent and md.parts == Path(md_text).parts


def test_warm_skill_paths_are_ordinary_paths(tmp_path: Path) -> None:
    for i in range(3):
        write_skill(tmp_path / "group", f"skill-{i}")
    cold = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    warm = discover([Root(tmp_path, Source.EXPLICIT)], Settings())
    for a, b in zip(cold.skills, warm.skills, strict=True):
        assert (a.path, a.base_dir) == (b.path, b.base_dir)
        assert (str(a.path), str(a.base_dir)) == (str(b.path), str(b.base_dir))
        assert b.path == Path(str(b.path)) and b.path.parent == b.base_dir
