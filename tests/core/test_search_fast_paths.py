"""Search speed-ups keep answers unchanged: merged postings, keystroke cache, name tables."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from conftest import write_skill
from skilldeck.core.model import Skill, Source
from skilldeck.core.parse import parse_skill_file
from skilldeck.core.search import SearchIndex
from skilldeck.core.search.index import FIELDS
from skilldeck.core.search.text import RAW_TOKEN, raw_token_bytes

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
        expected = _prefix_reference(current, prefix)
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
