"""Skill vectors kept in the local store: a one-shot search over an unchanged catalog
embeds only its query, a changed skill is the only one embedded again, and stored rows
are keyed by model id and checked when read.

The tests that embed skip without the extra, unless ``SKILLDECK_REQUIRE_SEMANTIC=1`` (CI)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import need_semantic_extra, write_skill
from skilldeck.core.config import Settings
from skilldeck.core.search import vectors
from skilldeck.core.search.semantic import Embedder
from skilldeck.core.store import PRUNE_AFTER_S, LocalStore
from skilldeck.core.workspace import Workspace
from skilldeck.core.workspace.oneshot import LazySkills

SKILLS = {
    "resume-tailor": "Tailor a resume to a job description. Use for job applications.",
    "bread": "Bake sourdough bread at home. Use for baking.",
    "k8s": "Write Kubernetes manifests. Use for cluster deployments.",
    "grafana-dashboards": "Create Grafana dashboards for metrics.",
    "postmortem-writing": "Write blameless postmortems after incidents.",
}
QUERY = "adjust my CV for this vacancy"


@pytest.fixture
def extra() -> None:
    need_semantic_extra()


@pytest.fixture
def calls(extra: None, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every batch of texts embedded, in order (queries are not remembered: each search
    stands for a command of its own)."""
    monkeypatch.setattr(Embedder, "query", lambda self, text: self.encode([text])[0])
    seen: list[list[str]] = []
    real = Embedder.encode

    def counted(self: Embedder, texts: list[str], cap: int | None = None) -> np.ndarray:
        seen.append(list(texts))
        return real(self, texts, cap)

    monkeypatch.setattr(Embedder, "encode", counted)
    return seen


def _age(root: Path) -> None:
    """Date the files 10 s back: a catalog fingerprint ignores files changed just now."""
    when = time.time_ns() - 10_000_000_000
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(when, when))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    for name, description in SKILLS.items():
        write_skill(base, name, description)
    _age(base)
    return base


def _search(root: Path) -> tuple[Workspace, list[str]]:
    """One command's search, as ``skilldeck search`` makes it (a new workspace)."""
    workspace = Workspace(Settings(), [root], store=LocalStore.open())
    response = workspace.search(QUERY, scope="active", limit=3, semantic=True)
    return workspace, [r.skill.name for r in response.results]


def test_a_warm_search_embeds_only_the_query(root: Path, calls: list[list[str]]) -> None:
    _, cold = _search(root)
    assert cold[0] == "resume-tailor"
    assert sorted(len(batch) for batch in calls) == [1, len(SKILLS)]
    calls.clear()
    workspace, warm = _search(root)
    assert warm == cold
    assert calls == [[QUERY]]
    assert workspace.generation == 0  # the saved index answered: no catalog was built
    index = workspace.quick_index("active", semantic=True)
    assert index.semantic and index.embedded == 0
    assert isinstance(index.skills, LazySkills) and len(index.skills.loaded) <= 3


def test_a_warm_search_reads_the_catalog_matrix(
    root: Path, calls: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second search finds every row and keeps them as one matrix; the third reads
    only it (the rows are gone) and answers the same; a changed skill is embedded again."""
    monkeypatch.setattr(vectors, "MATRIX_MIN", 2)
    _, cold = _search(root)
    _, warm = _search(root)
    conn = LocalStore.open().connect()
    assert conn.execute("SELECT count(*) FROM text_matrices").fetchone()[0] == 1
    conn.execute("DELETE FROM text_vectors")
    calls.clear()
    _, matrix = _search(root)
    assert warm == cold == matrix and calls == [[QUERY]]
    write_skill(root, "bread", "Bake rye bread at home. Use for baking.")
    _age(root)
    calls.clear()
    _search(root)
    assert sorted(len(batch) for batch in calls) == [1, len(SKILLS)]  # no row, no matrix


def test_a_changed_skill_is_the_only_one_embedded_again(root: Path, calls: list[list[str]]) -> None:
    _search(root)
    path = root / "bread" / "SKILL.md"
    path.write_text(path.read_text().replace("sourdough bread", "rye bread"), encoding="utf-8")
    _age(root)
    calls.clear()
    _search(root)
    assert calls == [["bread: Bake rye bread at home. Use for baking."], [QUERY]]
    calls.clear()
    _search(root)
    assert calls == [[QUERY]]


def test_damaged_vector_rows_are_embedded_again(root: Path, calls: list[list[str]]) -> None:
    _, cold = _search(root)
    conn = LocalStore.open().connect()
    conn.execute("UPDATE text_vectors SET vector = X'0000803f'")  # one float: too short
    calls.clear()
    _, warm = _search(root)
    assert warm == cold
    assert sorted(len(batch) for batch in calls) == [1, len(SKILLS)]


def test_vectors_are_kept_per_model_id(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    row = np.zeros(4, dtype=np.float32)
    row[0] = 1.0
    assert vectors.save(store, "model-a", {"k": row})
    assert set(vectors.load(store, "model-a", ["k", "x"], 4)) == {"k"}
    assert vectors.load(store, "model-b", ["k"], 4) == {}
    assert vectors.load(store, "model-a", ["k"], 8) == {}  # another width: not this model
    bad = np.full(4, np.nan, dtype=np.float32)
    vectors.save(store, "model-a", {"nan": bad, "long": np.ones(4, dtype=np.float32)})
    assert set(vectors.load(store, "model-a", ["k", "nan", "long"], 4)) == {"k"}


def test_unused_vectors_are_pruned(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    row = np.array([1.0, 0.0], dtype=np.float32)
    vectors.save(store, "m", {"k": row})
    store.prune(time.time() + PRUNE_AFTER_S / 2)
    assert set(vectors.load(store, "m", ["k"], 2)) == {"k"}
    store.prune(time.time() + PRUNE_AFTER_S + 60)
    assert vectors.load(store, "m", ["k"], 2) == {}


def test_live_updates_embed_only_the_changed_skill(root: Path, calls: list[list[str]]) -> None:
    """The TUI's path: a workspace that discovered, with embeddings switched on."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file

    workspace = Workspace(Settings(), [root], store=LocalStore.open())
    workspace.discover()
    assert workspace.enable_semantic("all")
    index = workspace.index("all")
    assert index.embedded == len(SKILLS)
    calls.clear()
    path = write_skill(root, "soup", "Cook vegetable soup. Use for dinner.")
    index.update(parse_skill_file(path, root=root))
    assert calls == [["soup: Cook vegetable soup. Use for dinner."]]
    assert index.semantic and index.search("make a vegetable broth").results[0].skill.name == "soup"
    assert index.remove(path) and index.semantic and len(calls) == 2  # + the query


def test_a_vector_row_fits_in_its_page(tmp_path: Path) -> None:
    """A 384-wide vector is stored inside the table's page, not in an overflow page of its
    own (the old ``WITHOUT ROWID`` layout took 4.7 KB a row: a one-shot hybrid search at
    10k skills read 47 MB)."""
    store = LocalStore.open(tmp_path / "home")
    rows = np.random.default_rng(1).standard_normal((1000, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    conn = store.connect()
    before = conn.execute("PRAGMA page_count").fetchone()[0]
    assert vectors.save(store, "m", {f"k{i}": row for i, row in enumerate(rows)})
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0] - before
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    assert pages * page_size < 1000 * 2 * rows[0].nbytes
    loaded = vectors.load(store, "m", [f"k{i}" for i in range(1000)], 384)
    np.testing.assert_array_equal(np.stack([loaded[f"k{i}"] for i in range(1000)]), rows)


def test_the_old_vector_table_is_dropped(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    with store.write() as conn:
        conn.execute("CREATE TABLE skill_vectors (key TEXT PRIMARY KEY, vector BLOB)")
    assert vectors.load(store, "m", ["k"], 4) == {}
    tables = {name for (name,) in store.connect().execute("SELECT name FROM sqlite_master")}
    assert "skill_vectors" not in tables and "text_vectors" in tables


def _unit_rows(count: int, dim: int = 8, seed: int = 2) -> dict[str, np.ndarray]:
    rows = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return {f"k{i}": row for i, row in enumerate(rows)}


def _drop_rows(store: LocalStore) -> None:
    with store.write() as conn:
        conn.execute("DELETE FROM text_vectors")


def test_keys_read_whole_are_kept_as_one_matrix(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    rows = _unit_rows(vectors.MATRIX_MIN)
    vectors.save(store, "m", rows)
    keys = list(rows)
    vectors.load(store, "m", keys, 8)  # every row found: kept as one matrix too
    _drop_rows(store)  # what is read now comes from the matrix alone
    again = vectors.load(store, "m", keys, 8)
    assert list(again) == keys
    np.testing.assert_array_equal(np.stack(list(again.values())), np.stack(list(rows.values())))
    assert vectors.load(store, "m2", keys, 8) == {}  # another model
    assert vectors.load(store, "m", keys, 4) == {}  # another width


def test_a_matrix_serves_only_its_own_keys(tmp_path: Path) -> None:
    """One skill changed (its key too), or the same keys in another order: the matrix of
    the old list is not used, its rows are not handed out under other keys."""
    store = LocalStore.open(tmp_path / "home")
    rows = _unit_rows(vectors.MATRIX_MIN)
    vectors.save(store, "m", rows)
    keys = list(rows)
    vectors.load(store, "m", keys, 8)
    _drop_rows(store)
    vectors.save(store, "m", {k: rows[k] for k in keys[:-1]})
    changed = vectors.load(store, "m", [*keys[:-1], "changed"], 8)
    assert set(changed) == set(keys[:-1])
    _drop_rows(store)
    assert vectors.load(store, "m", keys[::-1], 8) == {}


def test_a_damaged_matrix_is_not_used(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    rows = _unit_rows(vectors.MATRIX_MIN)
    vectors.save(store, "m", rows)
    keys = list(rows)
    vectors.load(store, "m", keys, 8)
    conn = store.connect()
    (blob,) = conn.execute("SELECT matrix FROM text_matrices").fetchone()
    nan = np.full(8, np.nan, dtype="<f4").tobytes()  # the last row not finite
    with store.write() as tx:
        tx.execute("UPDATE text_matrices SET matrix = ?", (blob[: -len(nan)] + nan,))
    _drop_rows(store)
    assert vectors.load(store, "m", keys, 8) == {}  # neither the matrix nor rows
    vectors.save(store, "m", rows)
    again = vectors.load(store, "m", keys, 8)  # from the rows, and kept anew
    np.testing.assert_array_equal(np.stack([again[k] for k in keys]), np.stack(list(rows.values())))
    _drop_rows(store)
    assert list(vectors.load(store, "m", keys, 8)) == keys


def test_few_matrices_are_kept_and_unused_ones_pruned(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "home")
    rows = _unit_rows(vectors.MATRIX_MIN + vectors.MATRICES_KEPT + 1)
    vectors.save(store, "m", rows)
    keys = list(rows)
    for skip in range(vectors.MATRICES_KEPT + 2):  # as many catalogs, each one key less
        vectors.load(store, "m", keys[skip : skip + vectors.MATRIX_MIN], 8)
    conn = store.connect()
    assert conn.execute("SELECT count(*) FROM text_matrices").fetchone()[0] == vectors.MATRICES_KEPT
    store.prune(time.time() + PRUNE_AFTER_S + 60)
    assert conn.execute("SELECT count(*) FROM text_matrices").fetchone()[0] == 0
