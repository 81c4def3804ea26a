"""Search index: BM25 equivalence, fuzzy and prefix matching, triggers, ties, updates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.model import Skill, Source
from skilldeck.core.search import (
    BM25Postings,
    SearchIndex,
    SearchResponse,
    agent_search,
    stem,
    tokenize,
)
from skilldeck.core.search.index import FIELDS, body_bytes_for
from skilldeck.core.search.text import headings, words
from skilldeck.core.search.triggers import mentioned_names


def _skills(root: Path) -> list[Skill]:
    return [
        parse_skill_file(p, source=Source.EXPLICIT, root=root)
        for p in sorted(root.rglob("SKILL.md"))
    ]


def _index(root: Path, **kwargs: object) -> SearchIndex:
    return SearchIndex.build(_skills(root), semantic=False, **kwargs)  # type: ignore[arg-type]


def _names(response: SearchResponse) -> list[str]:
    return [r.skill.name for r in response.results]


@pytest.fixture
def catalog_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "postmortem-writing",
        "Write blameless postmortems with timelines and action items. Use after incidents.",
        body="# Postmortem\n\n## Timeline\n\nList what happened during the incident.\n",
    )
    write_skill(
        root,
        "terraform-modules",
        "Build reusable Terraform modules for cloud infrastructure. Use for IaC work.",
        body="# Terraform\n\n## Module layout\n\nVariables, outputs and providers.\n",
    )
    write_skill(
        root,
        "pdf-tools",
        "Extract text and tables from PDF files. Use when reading PDFs.",
        body="# PDF\n\nUse pdfplumber to read documents.\n",
    )
    write_skill(
        root,
        "grafana-dashboards",
        "Create Grafana dashboards for metrics and alerting. Use for monitoring.",
        body="# Dashboards\n\n## Panels\n\nPrometheus queries drive the panels.\n",
    )
    write_skill(
        root,
        "release-notes",
        "Draft release notes from the git log. Use at release time.",
        extra="triggers:\n  keywords: [changelog]\n  verbs: [ship]\n"
        "  patterns: ['v\\d+\\.\\d+', '([unclosed']\n",
        body="# Release notes\n",
    )
    return root


# ---------------------------------------------------------------- text


def test_stemmer_conflates_common_forms() -> None:
    assert stem("writing") == stem("write") == stem("writes")
    assert stem("deployment") == stem("deploying") == stem("deploy")
    assert stem("dashboards") == stem("dashboard")
    assert stem("policies") == stem("policy")
    assert stem("running") == "run"
    assert stem("css") == "css" and stem("status") == "status"


def test_tokenize_drops_stopwords_and_splits_camel_case() -> None:
    assert tokenize("Use the skill when writing the tests") == [stem("writing"), stem("tests")]
    assert "componentdidmount" in words("componentDidMount")
    assert {"component", "did", "mount"} <= set(words("componentDidMount"))
    assert headings("# One\ntext\n## Two ##\n#not\n") == ["One", "Two"]


def test_mentioned_names() -> None:
    assert mentioned_names("please $pdf-tools now") == ["pdf-tools"]
    assert mentioned_names("Use the `grafana-dashboards` skill for this") == ["grafana-dashboards"]
    assert mentioned_names("costs $5 and use the force") == ["5"]


# ---------------------------------------------------------------- BM25 equivalence


def _random_corpus(seed: int, docs: int = 300) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    return [rng.choices(vocab, weights, k=rng.randint(0, 40)) for _ in range(docs)]


def _postings(corpus: list[list[str]]) -> tuple[BM25Postings, dict[str, int]]:
    vocab: dict[str, int] = {}
    docs = []
    for doc in corpus:
        counts: dict[int, int] = {}
        for tok in doc:
            tid = vocab.setdefault(tok, len(vocab))
            counts[tid] = counts.get(tid, 0) + 1
        docs.append(counts)
    return BM25Postings(docs, [len(d) for d in corpus], len(vocab)), vocab


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vectorised_bm25_equals_bm25okapi(seed: int) -> None:
    corpus = _random_corpus(seed)
    corpus[0] = corpus[0] or ["w1"]
    reference = BM25Okapi(corpus)
    postings, vocab = _postings(corpus)
    rng = random.Random(seed)
    for _ in range(25):
        query = [*rng.choices(list(vocab), k=rng.randint(1, 6)), "never-seen"]
        expected = reference.get_scores(query)
        got = postings.get_scores([vocab.get(t, len(vocab) + 5) for t in query])
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_bm25_equals_bm25okapi_on_real_corpus_tokens(corpus_dir: Path) -> None:
    skills = _skills(corpus_dir)[:200]
    corpus = [tokenize(f"{s.name.replace('-', ' ')} {s.description}") for s in skills]
    reference = BM25Okapi(corpus)
    postings, vocab = _postings(corpus)
    for query in ("write a blameless postmortem", "terraform modules for aws", "pdf tables pdf"):
        toks = tokenize(query)
        expected = reference.get_scores(toks)
        got = postings.get_scores([vocab.get(t, 10**6) for t in toks])
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_index_fields_match_bm25okapi_after_update_and_remove(catalog_root: Path) -> None:
    index = _index(catalog_root)
    write_skill(catalog_root, "pdf-tools", "Merge and split PDF documents quickly.")
    index.update(parse_skill_file(catalog_root / "pdf-tools" / "SKILL.md", root=catalog_root))
    extra = write_skill(catalog_root, "kube-manifests", "Write Kubernetes manifests and PDF docs.")
    index.update(parse_skill_file(extra, root=catalog_root))
    assert index.remove(catalog_root / "grafana-dashboards" / "SKILL.md")
    assert len(index) == 5
    inverse = {tid: term for term, tid in index.vocab.items()}
    for field in FIELDS:
        postings = index.fields[field]
        docs: list[list[str]] = [[] for _ in range(len(index))]
        for tid in range(postings.vocab_size):
            start, end = postings.indptr[tid], postings.indptr[tid + 1]
            for doc, tf in zip(postings.doc_ids[start:end], postings.tfs[start:end], strict=True):
                docs[int(doc)].extend([inverse[tid]] * int(tf))
        if not any(docs):
            continue
        reference = BM25Okapi(docs)
        for term in ("pdf", stem("documents"), "terraform", "nothing"):
            tid = index.vocab.get(term, 10**6)
            np.testing.assert_allclose(
                postings.get_scores([tid]), reference.get_scores([term]), rtol=1e-9, atol=1e-12
            )


# ---------------------------------------------------------------- ranking


def test_lexical_query_ranks_the_right_skill(catalog_root: Path) -> None:
    index = _index(catalog_root)
    response = index.search("write a postmortem for the outage timeline")
    assert _names(response)[0] == "postmortem-writing"
    assert 0.0 <= response.results[-1].score <= response.results[0].score <= 1.0
    assert response.total >= 1 and response.elapsed_ms >= 0


def test_typos_are_corrected(catalog_root: Path) -> None:
    index = _index(catalog_root)
    response = index.search("terrafrom modle", explain=True)
    top = response.results[0]
    assert top.skill.name == "terraform-modules"
    assert "terrafrom→terraform" in top.matched["description"]
    assert index.corrections("dashbord")[0][0] == "dashboards"


def test_last_word_is_a_prefix_while_typing(catalog_root: Path) -> None:
    index = _index(catalog_root)
    assert _names(index.search("grafana dash"))[0] == "grafana-dashboards"
    assert _names(index.search("terra"))[0] == "terraform-modules"
    for i in range(1, len("postmortem") + 1):
        response = index.search("postmortem"[:i])
        if i >= 4:
            assert _names(response)[0] == "postmortem-writing"


def test_explain_reports_signals_and_fields(catalog_root: Path) -> None:
    result = _index(catalog_root).search("grafana panels", explain=True).results[0]
    assert result.skill.name == "grafana-dashboards"
    assert {"bm25", "coverage", "name", "bm25.description", "bm25.body"} <= set(result.signals)
    assert "grafana" in result.matched["description"]
    assert "panels" in result.matched["headings"]
    data = result.to_dict()
    assert data["name"] == "grafana-dashboards" and "signals" in data and "matched" in data
    json.dumps(data)


def test_triggers_rank_first_and_bad_patterns_are_skipped(catalog_root: Path) -> None:
    index = _index(catalog_root)
    assert index.triggers.errors and index.triggers.errors[0][1] == "([unclosed"
    for query in (
        "update the changelog for grafana",
        "we ship grafana today",
        "grafana dashboards for v2.3",
    ):
        response = index.search(query)
        assert _names(response)[0] == "release-notes", query
        assert response.results[0].matched["triggers"]
        assert response.results[0].signals["trigger"] == 1.0
    assert _names(index.search("changelogs grafana"))[0] == "release-notes"
    assert _names(index.search("shipping grafana dashboards"))[0] == "release-notes"
    assert _names(index.search("grafana dashboards"))[0] == "grafana-dashboards"


def test_explicit_mention_ranks_first(catalog_root: Path) -> None:
    index = _index(catalog_root)
    for query in (
        "read this report with $pdf-tools about terraform modules",
        "use the pdf-tools skill to plan terraform modules",
    ):
        response = index.search(query)
        assert _names(response)[0] == "pdf-tools"
        assert response.results[0].score == 1.0 and response.confident


def test_ties_break_on_priority_then_tools_then_name(tmp_path: Path) -> None:
    root = tmp_path / "s"
    desc = "Format tables in spreadsheets. Use for tables."
    write_skill(root, "qzx-b", desc)
    write_skill(root, "qzx-a", desc)
    write_skill(root, "qzx-c", desc, extra="priority: 5\n")
    write_skill(root, "qzx-d", desc, extra="tools:\n  - name: Excel\n    required: true\n")
    index = _index(root, bodies=False)
    response = index.search("tables spreadsheets")
    assert len({round(r.score, 4) for r in response.results}) == 1
    assert _names(response) == ["qzx-c", "qzx-a", "qzx-b", "qzx-d"]
    assert response.clustered
    missing = index.search("tables spreadsheets", available_tools={"Word"})
    assert _names(missing) == ["qzx-c", "qzx-a", "qzx-b", "qzx-d"]
    tools = {r.skill.name: r.signals["tools"] for r in missing.results}
    assert tools["qzx-d"] == 0.0 and tools["qzx-a"] == 1.0


def test_tool_completeness_breaks_ties(tmp_path: Path) -> None:
    root = tmp_path / "s"
    desc = "Chart the numbers. Use for charts."
    extra = "tools:\n  - name: Plotter\n    required: true\n"
    write_skill(root, "qzx", desc, extra=extra, folder="one")
    write_skill(root, "qzx", desc, folder="two")
    index = _index(root, bodies=False)
    got = [
        r.skill.path.parent.name
        for r in index.search("chart numbers", available_tools=set()).results
    ]
    assert got == ["two", "one"]
    got = [r.skill.path.parent.name for r in index.search("chart numbers").results]
    assert got == ["one", "two"]


def test_clustering_and_confidence(tmp_path: Path) -> None:
    root = tmp_path / "s"
    for name in ("alpha-sheets", "beta-sheets", "gamma-sheets"):
        write_skill(root, name, "Clean spreadsheet columns. Use for spreadsheet cleanup.")
    write_skill(root, "weather", "Forecast the weather. Use for rain.")
    index = _index(root, bodies=False)
    response = index.search("clean spreadsheet columns")
    assert response.clustered
    assert "several skills" in response.message
    unsure = index.search("forecast sheets budget zebra quantum")
    assert not unsure.confident
    assert unsure.message == "no confident match"
    sure = index.search("forecast the weather rain")
    assert sure.confident and not sure.clustered and sure.results[0].skill.name == "weather"
    assert index.search("   ").results == []
    assert index.search("zzzqqq").results == []


def test_confidence_threshold_comes_from_settings(catalog_root: Path) -> None:
    strict = SearchIndex.build(
        _skills(catalog_root), semantic=False, settings=Settings(confidence_threshold=0.99)
    )
    response = strict.search("grafana alerting panels")
    assert response.results and not response.confident


def test_update_and_remove(catalog_root: Path) -> None:
    index = _index(catalog_root)
    assert _names(index.search("kubernetes"))[:1] != ["kube"]
    path = write_skill(catalog_root, "kube", "Kubernetes manifests. Use for k8s deployments.")
    index.update(parse_skill_file(path, root=catalog_root))
    assert _names(index.search("kubernetes manifests"))[0] == "kube"
    write_skill(catalog_root, "kube", "Bake sourdough bread. Use for baking.")
    index.update(parse_skill_file(path, root=catalog_root))
    assert all(
        r.signals["bm25"] == 0
        for r in index.search("kubernetes manifests").results
        if r.skill.name == "kube"
    )
    assert _names(index.search("sourdough"))[0] == "kube"
    assert index.remove(path)
    assert not index.remove(path)
    assert "kube" not in _names(index.search("sourdough bread"))
    assert _names(index.search("terraform"))[0] == "terraform-modules"


def test_metadata_only_index_reads_no_body(catalog_root: Path) -> None:
    index = _index(catalog_root, bodies=False)
    assert "pdfplumber" not in index.surface_df
    assert "pdfplumber" in _index(catalog_root).surface_df


def test_body_budget_shrinks_for_huge_catalogs() -> None:
    assert body_bytes_for(372) == 8192
    assert body_bytes_for(100_000) == 1024
    assert 1024 <= body_bytes_for(20_000) <= 8192


def test_unreadable_body_is_skipped(catalog_root: Path) -> None:
    skills = _skills(catalog_root)
    skills[0].path.unlink()
    index = SearchIndex.build(skills, semantic=False)
    assert len(index) == len(skills)


def test_agent_search_emits_skill_selected(catalog_root: Path, isolated_home: Path) -> None:
    index = _index(catalog_root)
    response = agent_search(index, "blameless postmortem timeline")
    assert len(response.results) <= 3
    assert response.results[0].skill.name == "postmortem-writing"
    events = [
        json.loads(line)
        for f in (isolated_home / "telemetry").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    selected = [e for e in events if e["event"] == "skill_selected"]
    assert selected and selected[-1]["query"] == "blameless postmortem timeline"
    candidates = selected[-1]["candidates"]
    assert candidates[0]["name"] == "postmortem-writing" and "score" in candidates[0]


def test_agent_search_threshold_override(catalog_root: Path) -> None:
    index = _index(catalog_root)
    response = agent_search(
        index, "grafana dashboards", settings=Settings(confidence_threshold=1.1)
    )
    assert not response.confident and response.message == "no confident match"
    assert response.results


def test_one_or_two_letters_rank_by_name_prefix(tmp_path: Path) -> None:
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.search import SearchIndex

    specs = {
        "zeta-pdf": "Fills PDF forms. Use when a PDF has form fields.",
        "pdf-tools": "Merges and splits documents. Use when combining files.",
        "alpha-pack": "Packs archives. Use when zipping folders.",
        "merge-sort": "Sorts numbers. Use when ordering a list of values.",
    }
    skills = [
        parse_skill_file(write_skill(tmp_path, name, description=desc))
        for name, desc in specs.items()
    ]
    index = SearchIndex.build(skills, semantic=False)
    names = [r.skill.name for r in index.search("p").results]
    assert names == ["pdf-tools", "alpha-pack", "zeta-pdf"]
    response = index.search("pd")
    assert [r.skill.name for r in response.results] == ["pdf-tools", "zeta-pdf"]
    assert not response.confident
