"""The local store under discovery: warm runs parse nothing, changes are seen, and a store
that is damaged, foreign, of another version or holds bad rows is rebuilt, never trusted."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skilldeck.core.discovery.pipeline as discovery
from conftest import REPO, write_skill
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover, records
from skilldeck.core.discovery.frontmatter import parse_file
from skilldeck.core.model import Catalog, Diagnostic, Severity, Source
from skilldeck.core.search.persist import load_or_build
from skilldeck.core.store import STORE_FILE, LocalStore
from skilldeck.core.workspace import lint_store

OLD_NS = 10**18  # 2001: far from "now", so rows are trusted on (mtime, size)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SKILL.md discovery parses (the real parser still runs)."""
    calls: list[str] = []
    real: Callable[..., Any] = parse_file  # what discovery calls (patched there below)

    def counting(path: Path, **kwargs: Any) -> Any:
        calls.append(str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(discovery, "parse_file", counting)
    return calls


@pytest.fixture
def store(isolated_home: Path) -> Iterator[LocalStore]:
    opened = LocalStore.open()
    yield opened
    opened.close()


def age(root: Path) -> None:
    """Make every file and folder under ``root`` look long unmodified."""
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(OLD_NS, OLD_NS))


def make_skills(root: Path, n: int = 5) -> list[Path]:
    paths = [write_skill(root, f"skill-{i}", extra=f"version: '{i}'\n") for i in range(n)]
    age(root)
    return paths


def run(root: Path, store: LocalStore | None, **kwargs: Any) -> Catalog:
    return discover([Root(root, Source.EXPLICIT)], Settings(), store=store, **kwargs)


def dicts(catalog: Catalog) -> list[dict[str, Any]]:
    return [s.to_dict() for s in catalog.skills]


# --- reuse and change ------------------------------------------------------------------


def test_warm_run_parses_nothing(tmp_path: Path, store: LocalStore, parsed: list[str]) -> None:
    make_skills(tmp_path)
    cold = run(tmp_path, store)
    assert len(parsed) == 5
    parsed.clear()
    warm = run(tmp_path, store)
    assert parsed == []
    assert dicts(warm) == dicts(cold) == dicts(run(tmp_path, None))


def test_edited_added_and_removed_files_are_seen(
    tmp_path: Path, store: LocalStore, parsed: list[str]
) -> None:
    paths = make_skills(tmp_path)
    run(tmp_path, store)
    parsed.clear()
    paths[2].write_text("---\nname: skill-2\ndescription: Changed now.\n---\n")
    new = write_skill(tmp_path, "fresh")
    catalog = run(tmp_path, store)
    assert sorted(parsed) == sorted([str(paths[2]), str(new)])
    assert catalog.get("skill-2").description == "Changed now."  # type: ignore[union-attr]
    age(tmp_path)
    run(tmp_path, store)
    parsed.clear()
    paths[0].unlink()
    catalog = run(tmp_path, store)
    assert parsed == []
    assert "skill-0" not in catalog.names() and "fresh" in catalog.names()


def test_every_tree_change_is_seen(tmp_path: Path, store: LocalStore) -> None:
    """After each change, discovering through the store gives what parsing everything does."""
    root = tmp_path / "root"
    make_skills(root / "group", 3)

    def moved() -> None:
        (root / "group" / "skill-1").rename(root / "skill-1")

    def nested() -> None:
        write_skill(root / "group" / "deeper" / "more", "nested")

    def emptied() -> None:
        (root / "group" / "skill-0" / "SKILL.md").unlink()
        write_skill(root / "group" / "skill-0" / "inner", "inner")

    def resourced() -> None:
        (root / "skill-1" / "notes.md").write_text("n")

    def hidden() -> None:
        (root / "group").rename(root / "_group")

    def edited() -> None:
        path = root / "skill-1" / "SKILL.md"
        path.write_text(path.read_text().replace("version: '1'", "version: '9'"))

    for change in (moved, nested, emptied, resourced, hidden, edited):
        run(root, store)
        change()
        assert dicts(run(root, store)) == dicts(run(root, None)), change.__name__
        age(root)
        assert dicts(run(root, store)) == dicts(run(root, None)), change.__name__


def test_same_size_change_is_seen_by_mtime(tmp_path: Path, store: LocalStore) -> None:
    (path,) = make_skills(tmp_path, 1)
    run(tmp_path, store)
    path.write_text(path.read_text().replace("Does a thing", "Does a think"))
    os.utime(path, ns=(OLD_NS, OLD_NS + 1000))
    assert "think" in run(tmp_path, store).skills[0].description


def test_recent_files_are_read_again(tmp_path: Path, store: LocalStore, parsed: list[str]) -> None:
    write_skill(tmp_path, "fresh")  # modified just now: its stat may not tell the next edit
    run(tmp_path, store)
    run(tmp_path, store)
    assert len(parsed) == 2


def test_parse_diagnostics_are_kept(tmp_path: Path, store: LocalStore, parsed: list[str]) -> None:
    folder = tmp_path / "crlf"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(
        b"---\r\nname: crlf\r\ndescription: d\r\nname: crlf\r\n---\r\n"
    )
    age(tmp_path)
    cold = run(tmp_path, store)
    warm = run(tmp_path, store)
    assert len(parsed) == 1
    assert dicts(warm) == dicts(cold)
    assert {"SD105", "SD116"} <= {d.code for d in warm.skills[0].diagnostics}


def test_profile_change_revalidates_without_parsing(
    tmp_path: Path, store: LocalStore, parsed: list[str]
) -> None:
    write_skill(tmp_path, "Bad_Name", folder="bad", extra="name: Bad_Name\n")
    age(tmp_path)
    default = run(tmp_path, store)
    strict = run(tmp_path, store, profile="agentskills")
    assert len(parsed) == 1
    dup = {d.code: d for d in strict.skills[0].diagnostics}["SD105"]
    assert dup.severity == "error"  # a duplicate key is an error under agentskills
    assert {d.code: d for d in default.skills[0].diagnostics}["SD105"].severity == "warning"
    again = run(tmp_path, store)
    assert dicts(again) == dicts(default)
    assert len(parsed) == 1


def test_yaml_dates_round_trip(tmp_path: Path, store: LocalStore) -> None:
    write_skill(tmp_path, "dated", extra="created: 2024-05-01\nmeta: {a: [1, 2]}\n")
    age(tmp_path)
    cold = run(tmp_path, store)
    warm = run(tmp_path, store)
    assert warm.skills[0].frontmatter["created"] == datetime.date(2024, 5, 1)
    assert dicts(warm) == dicts(cold)


def test_resource_listing_follows_folder_changes(tmp_path: Path, store: LocalStore) -> None:
    path = write_skill(tmp_path, "res")
    folder = path.parent
    (folder / "a.txt").write_text("a")
    age(tmp_path)
    assert run(tmp_path, store).skills[0].resources == ("a.txt",)
    assert run(tmp_path, store).skills[0].resources == ("a.txt",)
    (folder / "b.txt").write_text("b")
    assert run(tmp_path, store).skills[0].resources == ("a.txt", "b.txt")
    (folder / "sub").mkdir()
    (folder / "sub" / "c.txt").write_text("c")
    age(tmp_path)
    assert run(tmp_path, store).skills[0].resources == ("a.txt", "b.txt", "sub/c.txt")
    (folder / "sub" / "d.txt").write_text("d")  # only the subfolder's mtime changes
    assert run(tmp_path, store).skills[0].resources == ("a.txt", "b.txt", "sub/c.txt", "sub/d.txt")


def test_one_store_serves_several_roots(tmp_path: Path, store: LocalStore) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_skills(a, 2)
    make_skills(b, 3)
    run(a, store)
    run(b, store)
    count = store.connect().execute("SELECT count(*) FROM skills").fetchone()[0]
    assert count == 5  # nothing of the other root was deleted


def test_odd_names_and_values_are_served(tmp_path: Path, store: LocalStore) -> None:
    odd = os.fsencode(tmp_path) + b"/caf\xe9-skill"  # not UTF-8: a lone surrogate in str
    os.makedirs(odd)
    with open(odd + b"/SKILL.md", "wb") as handle:
        handle.write(b'---\nname: odd\ndescription: "\\ud800 lone surrogate"\n---\n')
    write_skill(tmp_path, "plain", description="Caf\u00e9 \U0001f600 ok.")
    age(tmp_path)
    cold = run(tmp_path, store)
    warm = run(tmp_path, store)
    assert len(cold.names()) == 2 and "plain" in cold.names()
    assert dicts(warm) == dicts(cold)
    assert [d for d in warm.diagnostics if d.code == "SD206"] == []


def test_an_aliased_skill_keeps_its_row(
    tmp_path: Path, store: LocalStore, parsed: list[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    (path,) = make_skills(a, 1)
    b.mkdir()
    (b / "alias").symlink_to(path.parent, target_is_directory=True)
    roots = [Root(a, Source.USER), Root(b, Source.PROJECT)]
    cold = discover(roots, Settings(), store=store)
    parsed.clear()
    warm = discover(roots, Settings(), store=store)
    assert [s.to_dict() for s in warm.skills] == [s.to_dict() for s in cold.skills]
    assert parsed == [str(b / "alias" / "SKILL.md")]  # the row stays the first path's


def test_without_a_store_nothing_is_written(tmp_path: Path, isolated_home: Path) -> None:
    make_skills(tmp_path, 2)
    run(tmp_path, None)
    assert not (isolated_home / STORE_FILE).exists()


# --- damage --------------------------------------------------------------------------------


def _store_file(home: Path) -> Path:
    return home / STORE_FILE


def _fill_store(root: Path, home: Path) -> Catalog:
    make_skills(root)
    first = LocalStore.open()
    catalog = run(root, first)
    first.close()
    return catalog


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 or 100])


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _other_version(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")


def _foreign(path: Path) -> None:
    path.unlink()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")


def _garbage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:4096] = os.urandom(3996)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage", [_truncate, _random_bytes, _other_version, _foreign, _garbage_header]
)
def test_a_damaged_store_is_rebuilt_with_a_notice(
    tmp_path: Path, isolated_home: Path, damage: Callable[[Path], None]
) -> None:
    cold = _fill_store(tmp_path, isolated_home)
    for suffix in ("-wal", "-shm"):
        Path(f"{_store_file(isolated_home)}{suffix}").unlink(missing_ok=True)
    damage(_store_file(isolated_home))
    store = LocalStore.open()
    catalog = run(tmp_path, store)
    assert dicts(catalog) == dicts(cold)
    notices = store.notices + [d.message for d in catalog.diagnostics]
    assert notices, "a rebuilt store must say so"
    assert dicts(run(tmp_path, store)) == dicts(cold)


def test_bad_rows_are_dropped_and_the_others_kept(
    tmp_path: Path, store: LocalStore, parsed: list[str]
) -> None:
    make_skills(tmp_path, 7)
    cold = run(tmp_path, store)
    parsed.clear()
    conn = store.connect()
    paths = [row[0] for row in conn.execute("SELECT path FROM skills ORDER BY path")]
    record = json.loads(conn.execute("SELECT record FROM skills").fetchone()[0])
    broken: list[tuple[str, object]] = [
        ("record", "{not json"),
        ("record", json.dumps({**record, "resources": 5})),
        ("record", json.dumps([1, 2, 3])),
        ("record", b"\x00\xff"),
        ("hash", 12),
        ("size", "big"),
    ]
    for (column, value), path in zip(broken, paths, strict=False):
        conn.execute(f"UPDATE skills SET {column} = ? WHERE path = ?", (value, path))
    catalog = run(tmp_path, store)
    assert dicts(catalog) == dicts(cold)
    assert sorted(parsed) == paths[:6]  # the seventh row was still good
    assert any("did not decode" in n for n in store.notices)
    parsed.clear()
    assert dicts(run(tmp_path, store)) == dicts(cold)
    assert parsed == []  # rewritten


def test_some_rows_bad_others_reused(tmp_path: Path, store: LocalStore, parsed: list[str]) -> None:
    make_skills(tmp_path, 6)
    cold = run(tmp_path, store)
    parsed.clear()
    conn = store.connect()
    (victim,) = conn.execute("SELECT path FROM skills ORDER BY path LIMIT 1").fetchone()
    conn.execute("UPDATE skills SET record = '{\"name\": 5}' WHERE path = ?", (victim,))
    assert dicts(run(tmp_path, store)) == dicts(cold)
    assert parsed == [victim]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["md", "frontmatter", "field_lines", "body", "diagnostics", "checks"]),
        JSON,
    ),
    st.one_of(st.integers(), st.text(max_size=4), st.none(), st.binary(max_size=4)),
)
def test_no_row_makes_decoding_raise(mutation: dict[str, Any], value: object) -> None:
    path = Path("/nowhere/demo/SKILL.md")
    good = {
        "md": str(path),
        "frontmatter": {"name": "demo", "description": "d"},
        "field_lines": {"name": 2, "description": 3},
        "body": [5, 40],
        "resources": [],
        "truncated": False,
        "stamps": [["", 5]],
        "diagnostics": [],
        "checks": {},
    }
    text = json.dumps({**good, **mutation})
    for row in (("k", 1, 2, "0" * 64, text), ("k", value, value, value, text)):
        entry = records.decode(row, path, Source.EXPLICIT, None, ".")
        assert entry is None or isinstance(entry.skill.name, str)


def test_a_table_gone_mid_run_rebuilds(tmp_path: Path, store: LocalStore) -> None:
    make_skills(tmp_path, 3)
    cold = run(tmp_path, store)
    store.connect().execute("DROP TABLE skills")
    catalog = run(tmp_path, store)
    assert dicts(catalog) == dicts(cold)
    assert store.notices
    assert store.connect().execute("SELECT count(*) FROM skills").fetchone()[0] == 3


def test_a_table_of_another_shape_rebuilds(tmp_path: Path, store: LocalStore) -> None:
    make_skills(tmp_path, 3)
    conn = store.connect()
    conn.execute("DROP TABLE IF EXISTS skills")  # a fresh store has no tables yet
    conn.execute("CREATE TABLE skills (path TEXT PRIMARY KEY, other TEXT NOT NULL)")
    catalog = run(tmp_path, store)
    assert len(catalog.skills) == 3
    assert store.notices
    assert dicts(run(tmp_path, store)) == dicts(catalog)


def test_a_full_disk_is_a_catalog_diagnostic(
    tmp_path: Path, store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skills(tmp_path, 3)

    def full(*_args: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "write", full)
    catalog = run(tmp_path, store)
    assert catalog.names() == ["skill-0", "skill-1", "skill-2"]
    (diag,) = [d for d in catalog.diagnostics if d.code == "SD206"]
    assert "disk is full" in diag.message


def test_core_has_no_pickle_fork_or_private_tricks() -> None:
    core = REPO / "tui" / "skilldeck" / "core"
    banned = ("import pickle", "os.fork", "import ctypes", "import gc", "__class__ =", "_packed")
    for path in core.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in banned:
            assert word not in text, f"{word!r} in {path}"


# --- several processes ----------------------------------------------------------------------

WORKER = """
import json, sys
from pathlib import Path
from skilldeck.core.config import Settings
from skilldeck.core.discovery import Root, discover, records
from skilldeck.core.model import Source
from skilldeck.core.store import LocalStore

store = LocalStore.open()
for _ in range(3):
    catalog = discover([Root(Path(sys.argv[1]), Source.EXPLICIT)], Settings(), store=store)
print(json.dumps({
    "skills": [s.to_dict() for s in catalog.skills],
    "diagnostics": [d.to_dict() for d in catalog.diagnostics],
    "notices": store.notices,
}))
"""


def test_four_processes_share_one_store(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "skills"
    for i in range(150):
        write_skill(root / f"g{i % 7}", f"skill-{i:03d}", extra=f"tags: [t{i % 5}]\n")
    age(root)
    env = {**os.environ, "SKILLDECK_HOME": str(isolated_home)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    results = [json.loads(out) for out, _err in outputs]
    for result in results:
        assert result["diagnostics"] == [] and result["notices"] == []
        assert result["skills"] == results[0]["skills"]
    assert len(results[0]["skills"]) == 150
    store = LocalStore.open()
    assert store.notices == []
    assert store.connect().execute("SELECT count(*) FROM skills").fetchone()[0] == 150
    assert [s.to_dict() for s in run(root, store).skills] == results[0]["skills"]


def test_prune_drops_old_indexes_and_rows_of_deleted_files(
    tmp_path: Path, store: LocalStore
) -> None:
    paths = make_skills(tmp_path / "skills")
    catalog = run(tmp_path / "skills", store)
    load_or_build(catalog.skills, store, "old", semantic=False)
    load_or_build(catalog.skills, store, "fresh", semantic=False)
    with store.write() as conn:
        conn.execute("UPDATE index_meta SET updated_ns = 1 WHERE key = 'old'")
    shutil.rmtree(paths[0].parent)
    assert store.prune() == (1, 1)
    conn = store.connect()
    assert [k for (k,) in conn.execute("SELECT DISTINCT key FROM index_blobs")] == ["fresh"]
    assert [k for (k,) in conn.execute("SELECT key FROM index_meta")] == ["fresh"]
    rows = {p for (p,) in conn.execute("SELECT path FROM skills")}
    assert rows == {os.path.realpath(p) for p in paths[1:]}
    assert store.prune() == (0, 0)
    # once a day at most: saving the indexes above pruned and left the marker
    marker = Path(str(store.path)).with_name("store.pruned")
    assert marker.exists()
    shutil.rmtree(paths[1].parent)
    store.prune_if_due()  # not due: the row of the deleted skill stays
    assert conn.execute("SELECT count(*) FROM skills").fetchone()[0] == len(rows)
    old = time.time() - 2 * 24 * 3600
    os.utime(marker, (old, old))
    store.prune_if_due()
    assert conn.execute("SELECT count(*) FROM skills").fetchone()[0] == len(rows) - 1


# --- tables belong to their owners ------------------------------------------------------------


def _tables(store: LocalStore) -> set[str]:
    query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {name for (name,) in store.connect().execute(query)}


def _findings(tmp_path: Path) -> dict[Path, list[Diagnostic]]:
    path = tmp_path / "demo" / "SKILL.md"
    return {path: [Diagnostic("SL001", Severity.WARNING, "too short", path, 3, 1)]}


def test_a_store_used_only_by_lint_store_has_only_its_table(tmp_path: Path) -> None:
    home, findings = tmp_path / "home", _findings(tmp_path)
    store = LocalStore.open(home)
    assert _tables(store) == set()
    assert lint_store.load(store, "key", "digest") is None
    lint_store.save(store, "key", "digest", findings)
    assert lint_store.load(store, "key", "digest") == findings
    assert lint_store.load(store, "key", "other") is None
    assert _tables(store) == {"lint_results"}
    store.close()
    again = LocalStore.open(home)  # the file is ours and of this version: kept as it is
    assert again.notices == []
    assert lint_store.load(again, "key", "digest") == findings


def test_tables_are_made_once_and_again_after_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, findings = LocalStore.open(tmp_path / "home"), _findings(tmp_path)
    store.ensure(lint_store.TABLES)
    with monkeypatch.context() as patch:
        patch.setattr(store, "write", lambda: pytest.fail("ensured twice"))
        store.ensure(lint_store.TABLES)  # cached: no transaction
    store.heal("a test says so")
    assert _tables(store) == set() and len(store.notices) == 1
    lint_store.save(store, "key", "digest", findings)  # made again in the new file
    assert lint_store.load(store, "key", "digest") == findings


def test_owners_tables_work_in_memory(tmp_path: Path) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("a file where the home should be")
    store, findings = LocalStore.open(home), _findings(tmp_path)
    assert store.path is None and len(store.notices) == 1
    lint_store.save(store, "key", "digest", findings)
    assert lint_store.load(store, "key", "digest") == findings
    assert _tables(store) == {"lint_results"}


def test_notice_is_the_door_for_notices() -> None:
    store = LocalStore.in_memory()
    store.notice("one sentence")
    assert store.notices == ["one sentence"]
