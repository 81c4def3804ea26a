"""The search index kept in the local store: same answers, only changed bodies read, a
damaged or foreign saved index rebuilt (never trusted, never a crash), concurrent use."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import REPO, need_semantic_extra, write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.model import Skill
from skilldeck.core.search import SearchIndex, analysis
from skilldeck.core.search.persist import load_or_build
from skilldeck.core.store import LocalStore

KEY = "workspace-a"
WORD_TEXT = (
    "deploy kubernetes cluster helm chart terraform module cloud postgres migration "
    "schema index query python test fixture pytest mock docker image build release "
    "changelog commit review security audit secret token rotate incident postmortem "
    "timeline metrics dashboard alert grafana prometheus logging trace latency cache"
)
WORDS = WORD_TEXT.split()
QUERIES = [
    "deploy kubernetes",
    "kubernets cluster",
    "postgres migration schema",
    "write a postmortem",
    "dock",
    "secret rotat",
    "grafana dashboard alert",
    "pytest fixtures",
    "$skill-7",
    "use the skill-3 skill",
    "zzz nothing here",
    "te",
    "release changelog commit",
]


def _make_corpus(root: Path, count: int = 40, seed: int = 3) -> None:
    rng = random.Random(seed)
    for i in range(count):
        desc = " ".join(rng.choices(WORDS, k=10)) + ". Use when " + " ".join(rng.sample(WORDS, 3))
        extra = f"tags: [{', '.join(rng.sample(WORDS, 2))}]\n"
        if i % 9 == 0:
            extra += f"triggers:\n  keywords: [{rng.choice(WORDS)} now]\n"
        body = f"# Skill {i}\n\n## {' '.join(rng.sample(WORDS, 2))}\n\n"
        body += " ".join(rng.choices(WORDS, k=60)) + "\n"
        write_skill(root, f"skill-{i}", desc, body=body, extra=extra)


def _skills(root: Path) -> list[Skill]:
    return [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]


def _answers(index: SearchIndex) -> list[Any]:
    out = []
    for query in QUERIES:
        data = index.search(query, limit=10, explain=True).to_dict(explain=True)
        data.pop("elapsed_ms")
        out.append(data)
    return out


def _rounded(answers: list[Any]) -> list[Any]:
    """Answers with every float rounded (a rebuilt index may sum in another order)."""

    def walk(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, 6)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return [walk(a) for a in answers]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    _make_corpus(folder)
    return folder


@pytest.fixture
def store(isolated_home: Path) -> LocalStore:
    return LocalStore.open(isolated_home)


@pytest.fixture
def body_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the skills whose body the index reads."""
    seen: list[str] = []
    real = analysis.read_body

    def counting(skill: Skill, max_bytes: int) -> str:
        seen.append(skill.name)
        return real(skill, max_bytes)

    monkeypatch.setattr(analysis, "read_body", counting)
    import skilldeck.core.search.index as index_module

    monkeypatch.setattr(index_module, "read_body", counting)
    return seen


def _fresh(skills: list[Skill]) -> SearchIndex:
    return SearchIndex.build(skills, semantic=False)


# ---------------------------------------------------------------- save and load


def test_loaded_index_answers_exactly_like_the_built_one(
    root: Path, store: LocalStore, body_reads: list[str]
) -> None:
    skills = _skills(root)
    built = load_or_build(skills, store, KEY, semantic=False)
    assert len(body_reads) == len(skills)
    body_reads.clear()
    again = _skills(root)
    loaded = load_or_build(again, store, KEY, semantic=False)
    assert body_reads == []
    assert loaded.skills == again and all(a is b for a, b in zip(loaded.skills, again, strict=True))
    assert _answers(loaded) == _answers(built)
    assert loaded.search("deploy kubernetes").results[0].skill in again
    assert store.notices == []


def test_typing_on_a_loaded_index_matches(root: Path, store: LocalStore) -> None:
    skills = _skills(root)
    built = load_or_build(skills, store, KEY, semantic=False)
    loaded = load_or_build(_skills(root), store, KEY, semantic=False)
    query = "grafana dashbo"
    for i in range(1, len(query) + 1):
        a = [r.skill.name for r in built.search(query[:i]).results]
        b = [r.skill.name for r in loaded.search(query[:i]).results]
        assert a == b, query[:i]
    assert loaded.corrections("dashbaord") == built.corrections("dashbaord")


def test_keys_are_separate_and_no_store_just_builds(root: Path, store: LocalStore) -> None:
    skills = _skills(root)
    load_or_build(skills[:10], store, "small", semantic=False)
    load_or_build(skills, store, "all", semantic=False)
    assert len(load_or_build(skills[:10], store, "small", semantic=False)) == 10
    assert len(load_or_build(skills, None, "x", semantic=False)) == len(skills)
    assert _answers(load_or_build(skills, store, "all", semantic=False)) == _answers(_fresh(skills))


def test_index_save_method(root: Path, store: LocalStore, body_reads: list[str]) -> None:
    skills = _skills(root)
    assert _fresh(skills).save(store, KEY)
    body_reads.clear()
    load_or_build(skills, store, KEY, semantic=False)
    assert body_reads == []


# ---------------------------------------------------------------- changes


def test_one_edited_skill_is_the_only_body_read(
    root: Path, store: LocalStore, body_reads: list[str]
) -> None:
    load_or_build(_skills(root), store, KEY, semantic=False)
    path = root / "skill-5" / "SKILL.md"
    path.write_text(path.read_text() + "\nQuasar nebula telescope.\n")  # body only
    body_reads.clear()
    skills = _skills(root)
    updated = load_or_build(skills, store, KEY, semantic=False)
    assert body_reads == ["skill-5"]
    assert updated.search("quasar nebula").results[0].skill.name == "skill-5"
    assert _rounded(_answers(updated)) == _rounded(_answers(_fresh(skills)))
    body_reads.clear()
    again = load_or_build(_skills(root), store, KEY, semantic=False)
    assert body_reads == []  # the update was saved
    assert again.search("quasar nebula").results[0].skill.name == "skill-5"


def test_added_and_removed_skills_are_applied(
    root: Path, store: LocalStore, body_reads: list[str]
) -> None:
    load_or_build(_skills(root), store, KEY, semantic=False)
    write_skill(root, "zebra-care", "Feed and groom zebras. Use for zebra husbandry.")
    for file in (root / "skill-2").iterdir():
        file.unlink()
    (root / "skill-2").rmdir()
    body_reads.clear()
    skills = _skills(root)
    updated = load_or_build(skills, store, KEY, semantic=False)
    assert body_reads == ["zebra-care"]
    assert len(updated) == len(skills)
    assert updated.search("zebra").results[0].skill.name == "zebra-care"
    assert "skill-2" not in {r.skill.name for r in updated.search("$skill-2").results}
    assert _rounded(_answers(updated)) == _rounded(_answers(_fresh(skills)))


def test_a_word_only_a_removed_skill_had_is_unknown_again(root: Path, store: LocalStore) -> None:
    write_skill(root, "oddity", "Xylograph engraving. Use for xylographs.")
    load_or_build(_skills(root), store, KEY, semantic=False)
    for file in (root / "oddity").iterdir():
        file.unlink()
    (root / "oddity").rmdir()
    updated = load_or_build(_skills(root), store, KEY, semantic=False)
    assert updated.query_terms("xylograph")[2] == 1  # counted unknown, as after a build


def test_another_order_of_the_same_skills(root: Path, store: LocalStore) -> None:
    skills = _skills(root)
    load_or_build(skills, store, KEY, semantic=False)
    shuffled = list(reversed(_skills(root)))
    loaded = load_or_build(shuffled, store, KEY, semantic=False)
    assert loaded.skills == shuffled
    assert _rounded(_answers(loaded)) == _rounded(_answers(_fresh(shuffled)))


def test_many_changes_rebuild_in_full(root: Path, store: LocalStore, body_reads: list[str]) -> None:
    skills = _skills(root)
    load_or_build(skills, store, KEY, semantic=False)
    body_reads.clear()
    load_or_build(skills[: len(skills) // 2], store, KEY, semantic=False)
    assert len(body_reads) == len(skills) // 2  # a full build of what is left


# ---------------------------------------------------------------- damaged stores


def _tamper_blob(store: LocalStore, name: str, change: Callable[[bytes], bytes]) -> None:
    with store.write() as conn:
        (data,) = conn.execute(
            "SELECT data FROM index_blobs WHERE key = ? AND name = ?", (KEY, name)
        ).fetchone()
        conn.execute(
            "UPDATE index_blobs SET data = ? WHERE key = ? AND name = ?",
            (change(data), KEY, name),
        )


def _tamper_meta(store: LocalStore, change: Callable[[dict[str, Any]], object]) -> None:
    with store.write() as conn:
        (text,) = conn.execute("SELECT meta FROM index_meta WHERE key = ?", (KEY,)).fetchone()
        conn.execute(
            "UPDATE index_meta SET meta = ? WHERE key = ?", (change(json.loads(text)), KEY)
        )


def _resign(store: LocalStore, name: str, data: bytes) -> None:
    """Replace a blob and fix its CRC, as a foreign writer could."""
    _tamper_blob(store, name, lambda _: data)

    def fix(meta: dict[str, Any]) -> str:
        meta["crc"][name] = zlib.crc32(data)
        return json.dumps(meta)

    _tamper_meta(store, fix)


def _flip(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF]) if data else b"\x01"


def _docs_out_of_range(store: LocalStore) -> None:
    conn = store.connect()
    (data,) = conn.execute(
        "SELECT data FROM index_blobs WHERE key = ? AND name = 'docs'", (KEY,)
    ).fetchone()
    docs = np.frombuffer(data, dtype="<i4").copy()
    docs[-1] = 10_000
    _resign(store, "docs", docs.tobytes())


def _docs_unsorted(store: LocalStore) -> None:
    conn = store.connect()
    (data,) = conn.execute(
        "SELECT data FROM index_blobs WHERE key = ? AND name = 'docs'", (KEY,)
    ).fetchone()
    docs = np.frombuffer(data, dtype="<i4").copy()
    docs[:] = docs[::-1]
    _resign(store, "docs", docs.tobytes())


def _wrong_dtype(store: LocalStore) -> None:
    conn = store.connect()
    (data,) = conn.execute(
        "SELECT data FROM index_blobs WHERE key = ? AND name = 'docs'", (KEY,)
    ).fetchone()
    _resign(store, "docs", np.frombuffer(data, dtype="<i4").astype("<i8").tobytes())


def _wrong_shape(store: LocalStore) -> None:
    def grow(meta: dict[str, Any]) -> str:
        meta["vocab_size"] += 3
        return json.dumps(meta)

    _tamper_meta(store, grow)


def _bad_counts(store: LocalStore) -> None:
    def shift(meta: dict[str, Any]) -> str:
        meta["tf_len"][0] -= 1
        meta["tf_len"][1] += 1
        return json.dumps(meta)

    _tamper_meta(store, shift)


def _nan_scores(store: LocalStore) -> None:
    conn = store.connect()
    (data,) = conn.execute(
        "SELECT data FROM index_blobs WHERE key = ? AND name = 'contrib'", (KEY,)
    ).fetchone()
    contrib = np.frombuffer(data, dtype="<f4").copy()
    contrib[0] = np.nan
    _resign(store, "contrib", contrib.tobytes())


def _blob_as_text(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute(
            "UPDATE index_blobs SET data = 'hello' WHERE key = ? AND name = 'masks'", (KEY,)
        )


def _missing_blob(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute("DELETE FROM index_blobs WHERE key = ? AND name = 'tf3'", (KEY,))


def _extra_blob(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute("INSERT INTO index_blobs VALUES (?, 'pickle', x'80049500')", (KEY,))


def _meta_as_number(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute("UPDATE index_meta SET meta = 42 WHERE key = ?", (KEY,))


def _meta_as_blob(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute("UPDATE index_meta SET meta = x'7b7d' WHERE key = ?", (KEY,))


def _paths_miscounted(store: LocalStore) -> None:
    _resign(store, "paths", b"/one/path")


def _vocab_repeats(store: LocalStore) -> None:
    conn = store.connect()
    (data,) = conn.execute(
        "SELECT data FROM index_blobs WHERE key = ? AND name = 'vocab'", (KEY,)
    ).fetchone()
    words = data.split(b"\0")
    words[1] = words[0]
    _resign(store, "vocab", b"\0".join(words))


DAMAGE: dict[str, Callable[[LocalStore], None]] = {
    "flipped byte": lambda s: _tamper_blob(s, "contrib", _flip),
    "truncated blob": lambda s: _tamper_blob(s, "docs", lambda d: d[: len(d) // 2]),
    "wrong dtype": _wrong_dtype,
    "wrong shape": _wrong_shape,
    "counts do not add up": _bad_counts,
    "doc id out of range": _docs_out_of_range,
    "unsorted postings": _docs_unsorted,
    "nan score": _nan_scores,
    "truncated meta": lambda s: _tamper_meta(s, lambda m: json.dumps(m)[:40]),
    "meta not an object": lambda s: _tamper_meta(s, lambda m: json.dumps([m])),
    "meta count a string": lambda s: _tamper_meta(s, lambda m: json.dumps({**m, "n_docs": "9"})),
    "meta crc missing": lambda s: _tamper_meta(s, lambda m: json.dumps({**m, "crc": None})),
    "meta as a number": _meta_as_number,
    "meta as a blob": _meta_as_blob,
    "blob as text": _blob_as_text,
    "missing blob": _missing_blob,
    "extra blob": _extra_blob,
    "paths miscounted": _paths_miscounted,
    "vocabulary repeats": _vocab_repeats,
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damaged_index_is_rebuilt_with_a_notice(
    damage: str, root: Path, store: LocalStore, body_reads: list[str]
) -> None:
    skills = _skills(root)
    expected = _answers(load_or_build(skills, store, KEY, semantic=False))
    DAMAGE[damage](store)
    body_reads.clear()
    rebuilt = load_or_build(skills, store, KEY, semantic=False)
    assert len(body_reads) == len(skills)  # rebuilt, not trusted
    assert any("search index" in n for n in store.notices), store.notices
    assert _answers(rebuilt) == expected
    body_reads.clear()
    assert _answers(load_or_build(skills, store, KEY, semantic=False)) == expected
    assert body_reads == []  # the rebuilt index was saved over the damaged one


def test_stale_format_is_rebuilt_quietly(root: Path, store: LocalStore) -> None:
    skills = _skills(root)
    load_or_build(skills, store, KEY, semantic=False)
    _tamper_meta(store, lambda m: json.dumps({**m, "analysis": "older"}))
    load_or_build(skills, store, KEY, semantic=False)
    assert store.notices == []


def test_unreadable_store_still_answers(root: Path, tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "h")
    skills = _skills(root)
    load_or_build(skills, store, KEY, semantic=False)
    with store.write() as conn:
        conn.execute("DROP TABLE index_blobs")
    index = load_or_build(skills, store, KEY, semantic=False)
    assert _answers(index) == _answers(_fresh(skills))
    assert any("search index" in n for n in store.notices)


def test_duplicate_paths_are_indexed_without_the_store(root: Path, store: LocalStore) -> None:
    skills = _skills(root)
    index = load_or_build([*skills, skills[0]], store, KEY, semantic=False)
    assert len(index) == len(skills) + 1
    tables = {name for (name,) in store.connect().execute("SELECT name FROM sqlite_master")}
    assert "index_meta" not in tables  # the store was not even touched (tables are lazy)


# ---------------------------------------------------------------- several processes


_WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.search.persist import load_or_build
    from skilldeck.core.store import LocalStore

    root, home, extra = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
    store = LocalStore.open(home)
    paths = sorted(root.rglob("SKILL.md"))
    if not extra:
        paths = [p for p in paths if p.parent.name != "zebra-care"]
    skills = [parse_skill_file(p, root=root) for p in paths]
    for _ in range(8):
        index = load_or_build(skills, store, "shared", semantic=False)
        assert len(index) == len(skills), (len(index), len(skills))
        top = index.search("zebra husbandry", limit=1).results
        assert bool(top and top[0].skill.name == "zebra-care") == extra
    print("ok", len(store.notices))
    """
)


def test_two_processes_share_one_key(root: Path, isolated_home: Path) -> None:
    write_skill(root, "zebra-care", "Feed and groom zebras. Use for zebra husbandry.")
    env = {**os.environ, "PYTHONPATH": str(REPO / "tui")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(root), str(isolated_home), flag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for flag in ("0", "1")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        assert out.startswith("ok"), out
    conn = sqlite3.connect(isolated_home / "store.sqlite3")
    assert conn.execute("SELECT count(*) FROM index_meta").fetchone()[0] == 1


# ---------------------------------------------------------------- building in chunks


def test_chunked_build_gives_the_same_arrays(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skills = _skills(root)
    whole = _fresh(skills)
    monkeypatch.setattr(analysis, "CHUNK_DOCS", 3)
    chunked = _fresh(skills)
    for name in ("docs", "masks", "contrib", "indptr", "df", "doc_len"):
        assert np.array_equal(getattr(whole.postings, name), getattr(chunked.postings, name))
    for a, b in zip(whole.postings.tfs, chunked.postings.tfs, strict=True):
        assert np.array_equal(a, b)
    assert whole.surface_df.words == chunked.surface_df.words
    assert np.array_equal(whole.surface_df.counts, chunked.surface_df.counts)
    assert _answers(whole) == _answers(chunked)


def test_an_empty_catalog_is_saved_and_loaded(store: LocalStore) -> None:
    for _ in range(2):
        index = load_or_build([], store, KEY, semantic=False)
        assert len(index) == 0
        assert index.search("anything").results == []
    assert store.notices == []


# ---------------------------------------------------------------- the second weighting


@pytest.fixture
def weightings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many weightings each ``FieldPostings._contributions`` call computed (over
    postings that hold any pair: a new index starts empty)."""
    from skilldeck.core.search.postings import FieldPostings

    seen: list[int] = []
    real = FieldPostings._contributions

    def counted(self: FieldPostings, weight_sets: Any) -> Any:
        if len(self.docs):
            seen.append(len(weight_sets))
        return real(self, weight_sets)

    monkeypatch.setattr(FieldPostings, "_contributions", counted)
    return seen


def _alt(index: SearchIndex) -> list[float]:
    return index._weight_vector(index.semantic_field_weights)


def _held(index: SearchIndex) -> np.ndarray:
    """The second weighting ``index`` holds (it must hold one)."""
    assert index.postings.alt_contrib is not None
    return index.postings.alt_contrib


def _computed_alt(index: SearchIndex, weights: list[float]) -> np.ndarray:
    (contrib,) = index.postings._contributions([np.asarray(weights, dtype=np.float64)])
    return contrib


def test_the_second_weighting_is_kept_once_computed(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    skills = _skills(root)
    first = load_or_build(skills, store, KEY, semantic=False)
    first.postings.set_alt_weights(_alt(first))  # computed, then kept with the index
    expected = _held(first)
    weightings.clear()
    loaded = load_or_build(_skills(root), store, KEY, semantic=False)
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == []  # read back, not computed
    assert np.array_equal(_held(loaded), expected)
    assert np.array_equal(_held(loaded), _computed_alt(loaded, _alt(loaded)))
    assert store.notices == []


def test_a_saved_second_weighting_of_other_weights_is_not_used(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    first = load_or_build(_skills(root), store, KEY, semantic=False)
    first.postings.set_alt_weights(_alt(first))
    loaded = load_or_build(_skills(root), store, KEY, semantic=False)
    loaded.semantic_field_weights["body"] = 2.5
    weightings.clear()
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == [1]
    assert np.array_equal(_held(loaded), _computed_alt(loaded, _alt(loaded)))
    assert not np.array_equal(_held(loaded), _held(first))


def test_a_damaged_second_weighting_is_computed_again(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    first = load_or_build(_skills(root), store, KEY, semantic=False)
    first.postings.set_alt_weights(_alt(first))
    _tamper_blob(store, "alt_contrib", lambda data: data[:-4] + np.float32(1e6).tobytes())
    loaded = load_or_build(_skills(root), store, KEY, semantic=False)
    weightings.clear()
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == [1]
    assert np.array_equal(_held(loaded), _held(first))


def test_a_second_weighting_of_a_replaced_save_is_never_kept(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    """A process holding an older save computes its weighting after another process
    saved the same skills in another order (same sizes, other pairs): it is not kept."""
    old = load_or_build(_skills(root), store, KEY, semantic=False)
    shuffled = list(reversed(_skills(root)))
    new = load_or_build(shuffled, store, KEY, semantic=False)
    assert len(new.postings.docs) == len(old.postings.docs)
    old.postings.set_alt_weights(_alt(old))
    weightings.clear()
    loaded = load_or_build(list(reversed(_skills(root))), store, KEY, semantic=False)
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == [1]
    assert np.array_equal(_held(loaded), _computed_alt(loaded, _alt(loaded)))


def test_a_live_update_saves_its_second_weighting(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    skills = _skills(root)
    first = load_or_build(skills, store, KEY, semantic=False)
    first.postings.set_alt_weights(_alt(first))
    changed = load_or_build(skills[:-1], store, KEY, semantic=False)  # a skill removed
    changed.postings.set_alt_weights(_alt(changed))
    expected = _held(changed)
    weightings.clear()
    loaded = load_or_build(_skills(root)[:-1], store, KEY, semantic=False)
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == []
    assert np.array_equal(_held(loaded), expected)
    assert np.array_equal(expected, _computed_alt(loaded, _alt(loaded)))


def test_hybrid_answers_are_the_same_with_a_saved_second_weighting(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    need_semantic_extra()
    skills = _skills(root)
    fresh = SearchIndex.build(skills, semantic=True)
    load_or_build(_skills(root), store, KEY, semantic=True)
    weightings.clear()
    loaded = load_or_build(_skills(root), store, KEY, semantic=True)
    assert loaded.semantic and weightings == []
    assert _answers(loaded) == _answers(fresh)


def test_an_index_saved_without_a_save_id_keeps_its_second_weighting(
    root: Path, store: LocalStore, weightings: list[int]
) -> None:
    """An index saved before saves had ids is named by its blobs' CRCs."""
    load_or_build(_skills(root), store, KEY, semantic=False)
    _tamper_meta(store, lambda meta: json.dumps({k: v for k, v in meta.items() if k != "save"}))
    first = load_or_build(_skills(root), store, KEY, semantic=False)
    first.postings.set_alt_weights(_alt(first))
    weightings.clear()
    loaded = load_or_build(_skills(root), store, KEY, semantic=False)
    loaded.postings.set_alt_weights(_alt(loaded))
    assert weightings == []
    assert np.array_equal(_held(loaded), _computed_alt(loaded, _alt(loaded)))
    old = load_or_build(_skills(root), store, KEY, semantic=False)
    old.semantic_field_weights["body"] = 2.5  # not the kept weights: computed
    load_or_build(list(reversed(_skills(root))), store, KEY, semantic=False)  # saved anew
    old.postings.set_alt_weights(_alt(old))  # not kept: another save is there now
    weightings.clear()
    other = load_or_build(list(reversed(_skills(root))), store, KEY, semantic=False)
    other.semantic_field_weights["body"] = 2.5
    other.postings.set_alt_weights(_alt(other))
    assert weightings == [1]
    assert np.array_equal(_held(other), _computed_alt(other, _alt(other)))
