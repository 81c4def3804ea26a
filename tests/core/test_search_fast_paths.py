"""Search speed-ups keep answers unchanged: merged postings (both field weightings),
keystroke cache (per weighting), name tables."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from conftest import write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.model import Skill, Source
from skilldeck.core.search import SearchIndex
from skilldeck.core.search.index import FIELD_WEIGHTS, FIELDS, SEMANTIC_FIELD_WEIGHTS
from skilldeck.core.search.postings import FieldPostings
from skilldeck.core.search.semantic import extra_installed
from skilldeck.core.search.text import RAW_TOKEN, raw_token_bytes

HAVE_SEMANTIC = extra_installed()
SEMANTIC_VECTOR = [SEMANTIC_FIELD_WEIGHTS[f] for f in FIELDS]

WORDS = [
    "deploy",
    "kubernetes",
    "manifests",
    "grafana",
    "panels",
    "postmortem",
    "timeline",
    "terraform",
    "modules",
]


def _catalog(root: Path, count: int = 40, seed: int = 3) -> list[Skill]:
    rng = random.Random(seed)
    for i in range(count):
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i}"
        body = "\n".join(
            f"## {rng.choice(WORDS)}\n{' '.join(rng.choices(WORDS, k=30))}" for _ in range(3)
        )
        write_skill(root, name, " ".join(rng.choices(WORDS, k=12)) + ".", body=body)
    return [
        parse_skill_file(p, source=Source.EXPLICIT, root=root)
        for p in sorted(root.rglob("SKILL.md"))
    ]


def _ranking(index: SearchIndex, query: str) -> list[tuple[str, float]]:
    return [(r.skill.name, round(r.score, 9)) for r in index.search(query).results]


@pytest.mark.parametrize(
    "text", ["Hello, wörld! camelCase x2 ünï\u0301code--dash_under 42", "", "  \n\t", "a\x00b"]
)
def test_raw_token_bytes_matches_the_regex(text: str) -> None:
    assert [t.decode() for t in raw_token_bytes(text)] == RAW_TOKEN.findall(text)


def test_keystroke_cache_gives_the_same_answers_as_a_fresh_index(tmp_path: Path) -> None:
    skills = _catalog(tmp_path / "s")
    typed = SearchIndex.build(skills, semantic=False)
    query = "grafana kubernetes timeline postmortem"
    for i in range(1, len(query) + 1):
        fresh = SearchIndex.build(skills, semantic=False)
        assert _ranking(typed, query[:i]) == _ranking(fresh, query[:i]), query[:i]


def test_merged_contributions_equal_weighted_field_bm25(tmp_path: Path) -> None:
    index = SearchIndex.build(_catalog(tmp_path / "s"), semantic=False)
    postings = index.postings
    terms = postings.pair_terms()
    for pair in range(0, len(postings.docs), 7):
        term, doc = int(terms[pair]), int(postings.docs[pair])
        exact = sum(
            index.field_weights[name] * postings.field_score(f, term, doc)
            for f, name in enumerate(FIELDS)
        )
        assert postings.contrib[pair] == pytest.approx(exact, rel=1e-6)
    result = index.search("grafana panels", explain=True).results[0]
    weighted = sum(index.field_weights[f] * result.signals[f"bm25.{f}"] for f in FIELDS)
    assert result.signals["bm25.raw"] == pytest.approx(weighted)


def _prefix_reference(skills: list[Skill], prefix: str) -> list[str]:
    ranked = []
    for skill in skills:
        name = skill.name.lower()
        if name.startswith(prefix):
            ranked.append((0, name, str(skill.path)))
        elif any(part.startswith(prefix) for part in name.split("-")[1:]):
            ranked.append((1, name, str(skill.path)))
    return [name for _, name, _ in sorted(ranked)]


def test_name_prefix_tables_follow_updates(tmp_path: Path) -> None:
    root = tmp_path / "s"
    skills = _catalog(root)
    index = SearchIndex.build(skills, semantic=False)
    added = parse_skill_file(write_skill(root, "zz-grafana", "Grafana things."), root=root)
    index.update(added)
    assert index.remove(skills[0].path)
    current = index.skills
    for prefix in ("g", "gr", "k", "te", "zz", "q"):
        response = index.search(prefix, limit=1000)
        expected = _prefix_reference(list(current), prefix)
        assert [r.skill.name for r in response.results] == expected, prefix
        if expected:
            assert response.total == len(expected)


def test_update_keeps_merged_postings_consistent(tmp_path: Path) -> None:
    root = tmp_path / "s"
    skills = _catalog(root)
    index = SearchIndex.build(skills, semantic=False)
    changed = write_skill(root, skills[3].name, "Bake sourdough bread at home.")
    index.update(parse_skill_file(changed, root=root))
    index.remove(skills[5].path)
    rebuilt = SearchIndex.build(index.skills, semantic=False)
    for query in ("sourdough", "grafana kubernetes", "postmortem timel"):
        assert _ranking(index, query) == _ranking(rebuilt, query), query
    np.testing.assert_allclose(
        index.postings.contrib.sum(dtype=np.float64),
        rebuilt.postings.contrib.sum(dtype=np.float64),
        rtol=1e-6,
    )


def _pair_values(index: SearchIndex, values: np.ndarray) -> dict[tuple[str, str], float]:
    """(term, skill path) -> value of that pair, comparable across indexes."""
    inverse = {tid: term for term, tid in index.vocab.items()}
    postings = index.postings
    terms = postings.pair_terms().tolist()
    docs = postings.docs.tolist()
    paths = [str(s.path) for s in index.skills]
    return {
        (inverse[t], paths[d]): float(v)
        for t, d, v in zip(terms, docs, values.tolist(), strict=True)
    }


def test_semantic_weighting_is_kept_only_while_set(tmp_path: Path) -> None:
    index = SearchIndex.build(_catalog(tmp_path / "s"), semantic=False)
    postings = index.postings
    assert postings.alt_contrib is None and postings.alt_weights is None
    lexical_bytes = postings.nbytes()
    postings.set_alt_weights(SEMANTIC_VECTOR)
    assert postings.alt_contrib is not None
    assert postings.nbytes() == lexical_bytes + postings.alt_contrib.nbytes
    terms = postings.pair_terms()
    for pair in range(0, len(postings.docs), 7):
        term, doc = int(terms[pair]), int(postings.docs[pair])
        exact = sum(
            SEMANTIC_FIELD_WEIGHTS[name] * postings.field_score(f, term, doc)
            for f, name in enumerate(FIELDS)
        )
        assert postings.alt_contrib[pair] == pytest.approx(exact, rel=1e-6)
    postings.set_alt_weights(None)
    assert postings.alt_contrib is None and postings.nbytes() == lexical_bytes
    with pytest.raises(ValueError):
        postings.add_scores(np.zeros(len(index)), int(terms[0]), alt=True)


def test_semantic_weighting_follows_updates_and_removes(tmp_path: Path) -> None:
    root = tmp_path / "s"
    skills = _catalog(root)
    index = SearchIndex.build(skills, semantic=False)
    index.postings.set_alt_weights(SEMANTIC_VECTOR)
    changed = write_skill(
        root, skills[3].name, "Bake sourdough bread.", body="## Sourdough\nflour water salt\n"
    )
    index.update(parse_skill_file(changed, root=root))
    added = write_skill(root, "zz-new", "Grafana panels.", body="## Panels\ngrafana timeline\n")
    index.update(parse_skill_file(added, root=root))
    assert index.remove(skills[5].path)
    assert index.remove(skills[0].path)
    postings = index.postings
    assert postings.alt_contrib is not None
    same_ids = FieldPostings(
        postings.field_arrays(),
        postings.doc_len,
        postings.vocab_size,
        [FIELD_WEIGHTS[f] for f in FIELDS],
        SEMANTIC_VECTOR,
    )
    assert same_ids.alt_contrib is not None
    np.testing.assert_array_equal(postings.alt_contrib, same_ids.alt_contrib)
    np.testing.assert_array_equal(postings.contrib, same_ids.contrib)
    rebuilt = SearchIndex.build(index.skills, semantic=False)
    rebuilt.postings.set_alt_weights(SEMANTIC_VECTOR)
    assert rebuilt.postings.alt_contrib is not None
    got = _pair_values(index, postings.alt_contrib)
    want = _pair_values(rebuilt, rebuilt.postings.alt_contrib)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-6), key


@pytest.mark.skipif(not HAVE_SEMANTIC, reason="semantic extra not installed")
def test_keystroke_cache_is_kept_per_field_weighting(tmp_path: Path, isolated_home: Path) -> None:
    skills = _catalog(tmp_path / "s", count=30)
    index = SearchIndex.build(skills, semantic=True)
    assert index.semantic, index.semantic_error
    query = "grafana kubernetes timeline"
    for i in range(4, len(query) + 1):
        # the TUI types without embeddings and searches with them at a pause
        for semantic in (False, True, False):
            fresh = SearchIndex.build(skills, semantic=semantic)
            got = [
                (r.skill.name, round(r.score, 9))
                for r in index.search(query[:i], semantic=semantic).results
            ]
            want = [
                (r.skill.name, round(r.score, 9))
                for r in fresh.search(query[:i], semantic=semantic).results
            ]
            assert got == want, (query[:i], semantic)
    for semantic, weights in ((False, FIELD_WEIGHTS), (True, SEMANTIC_FIELD_WEIGHTS)):
        result = index.search("grafana panels", explain=True, semantic=semantic).results[0]
        assert ("semantic" in result.signals) is semantic
        assert not any(name.startswith("bm25.weight") for name in result.signals)
        raw = sum(weights[f] * result.signals[f"bm25.{f}"] for f in FIELDS)
        assert result.signals["bm25.raw"] == pytest.approx(raw)


# ---------------------------------------------------------------- one-pass build


_HEADING_PIECES = ["#", "##", "###### ", " ", "   ", "\n", "\n\n", "\t", "\x0b", "\u2028", "\x85"]
_HEADING_PIECES += ["a", "b c", "x#", "# #", "\r\n", "`#`", "####### "]


@pytest.mark.parametrize("bound", [-1, 4, 10_000])
def test_headings_near_each_hash_equal_the_scan(
    bound: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.search import text

    monkeypatch.setattr(text, "HEADING_SCAN_HASHES", bound)
    rng = random.Random(bound)
    for _ in range(4000):
        body = "".join(rng.choice(_HEADING_PIECES) for _ in range(rng.randint(0, 40)))
        assert text.headings(body) == [m.group(1) for m in text._HEADING.finditer(body)], body


def _reference_build(
    skills: list[Skill], body_bytes: int
) -> tuple[dict[str, int], list[dict[tuple[int, int], int]], dict[str, int]]:
    """The per-document build the one-pass build replaced: new raw tokens of each
    (document, field) analysed in byte order, counted with a Counter."""
    from collections import Counter

    from skilldeck.core.search.analysis import Tokens, field_texts, read_body

    tokens = Tokens({})
    ids: dict[bytes, int] = {}
    postings: list[dict[tuple[int, int], int]] = [{} for _ in FIELDS]
    seen: dict[str, set[int]] = {}
    for doc, skill in enumerate(skills):
        for f, text in enumerate(field_texts(skill, read_body(skill, body_bytes))):
            counter = Counter(raw_token_bytes(text))
            for raw in sorted(set(counter).difference(ids)):
                ids[raw] = tokens.new(raw)
            for raw, count in counter.items():
                rid = ids[raw]
                lo, hi = tokens.ptr[rid], tokens.ptr[rid + 1]
                for term, sid in zip(tokens.terms[lo:hi], tokens.surface[lo:hi], strict=True):
                    key = (term, doc)
                    postings[f][key] = postings[f].get(key, 0) + count
                    if sid >= 0:
                        seen.setdefault(list(tokens.surface_ids)[sid], set()).add(doc)
    return tokens.vocab, postings, {w: len(docs) for w, docs in seen.items()}


@pytest.mark.parametrize("chunk", [1, 3, 2048])
def test_one_pass_build_equals_the_per_document_build(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.search import analysis

    skills = _catalog(tmp_path / "s", count=23)
    write_skill(tmp_path / "s", "odd-one", "The MixedCase HTTPServer x2 and the 42.", body="")
    skills.append(parse_skill_file(tmp_path / "s" / "odd-one" / "SKILL.md", root=tmp_path))
    vocab, want, surface = _reference_build(skills, 8192)
    monkeypatch.setattr(analysis, "CHUNK_DOCS", chunk)
    got_vocab: dict[str, int] = {}
    doc_len, fields, surface_df, surface_ids = analysis.index_arrays(skills, got_vocab, 8192)
    assert list(got_vocab.items()) == list(vocab.items())  # same ids, same order
    for f, (terms, docs, tfs) in enumerate(fields):
        got = dict(zip(zip(terms.tolist(), docs.tolist(), strict=True), tfs.tolist(), strict=True))
        assert got == want[f]
        lengths = np.zeros(len(skills), dtype=np.int64)
        for (_term, doc), tf in want[f].items():
            lengths[doc] += tf
        assert doc_len[f].tolist() == lengths.tolist()
    assert {w: int(surface_df[i]) for w, i in surface_ids.items()} == surface


def test_one_pass_build_of_nothing(tmp_path: Path) -> None:
    from skilldeck.core.search import analysis

    doc_len, fields, surface_df, surface_ids = analysis.index_arrays([], {}, 8192)
    assert doc_len.shape == (len(FIELDS), 0)
    assert all(len(a) == 0 for field in fields for a in field)
    assert len(surface_df) == 0 and surface_ids == {}
    assert len(SearchIndex.build([], semantic=False)) == 0


def test_field_postings_consume_a_list(tmp_path: Path) -> None:
    index = SearchIndex.build(_catalog(tmp_path / "s"), semantic=False)
    arrays = index.postings.field_arrays()
    again = FieldPostings(
        arrays, index.postings.doc_len, index.postings.vocab_size, [1.0] * len(FIELDS)
    )
    assert all(len(a) == 0 for field in arrays for a in field)
    np.testing.assert_array_equal(again.docs, index.postings.docs)
    np.testing.assert_array_equal(again.masks, index.postings.masks)
