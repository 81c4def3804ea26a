"""Relative BM25, the calibrated ``confident`` flag, the splits and the eval file formats
(:mod:`skilldeck.core.search.calibration`, :mod:`.evaluate`; no shared data needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.search import SearchIndex, agent_search
from skilldeck.core.search.calibration import HYBRID, LEXICAL, Calibration, is_confident
from skilldeck.core.search.evaluate import (
    EvalQuery,
    Ranked,
    evaluate,
    load_queries,
    resolve_ids,
    select_split,
    split_of,
)
from skilldeck.core.search.query import FILLER_WEIGHT, parse_query, word_of
from skilldeck.core.search.ranking import query_ceiling


def _index(root: Path) -> SearchIndex:
    skills = [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]
    return SearchIndex.build(skills, semantic=False, bodies=False)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    write_skill(root, "invoice-parser", "Parse supplier invoices into line items.")
    write_skill(root, "customer-emails", "Draft replies to customer emails and complaints.")
    write_skill(root, "weather", "Forecast the weather. Use for rain and wind.")
    write_skill(root, "grafana-dashboards", "Create Grafana dashboards for metrics.")
    return root


# ---------------------------------------------------------------- relative BM25


def test_bm25_is_relative_to_what_the_query_could_score(catalog: Path) -> None:
    index = _index(catalog)
    # "customer" matches one skill; "quantum" and "ledger" none: the best skill is the
    # catalog's best, yet it matched a third of the query
    top = index.search("customer quantum ledger ").results[0]
    assert top.skill.name == "customer-emails"
    assert top.signals["bm25"] == pytest.approx(1 / 3, abs=0.01)
    assert not top.confident
    whole = index.search("parse supplier invoices ").results[0]
    assert whole.skill.name == "invoice-parser" and whole.signals["bm25"] == pytest.approx(1.0)
    assert whole.confident


def test_query_ceiling_counts_a_word_once_at_full_weight(catalog: Path) -> None:
    index = _index(catalog)
    exact = parse_query(index, "invoices ")
    typo = parse_query(index, "invoicse ")
    assert query_ceiling(index, exact, False) == pytest.approx(query_ceiling(index, typo, False))
    fixed = index.search("invoicse ").results[0]
    assert fixed.skill.name == "invoice-parser"
    assert fixed.signals["bm25"] < 1.0  # a typo match earns its similarity's share
    assert word_of("invoicse→invoices") == "invoicse" and word_of("inv…oices") == "inv"


def test_filler_words_weigh_less(catalog: Path) -> None:
    write_skill(catalog, "helpdesk", "Help users find answers to their tickets.")
    index = _index(catalog)
    parsed = parse_query(index, "help me find the weather ")
    weights = {parsed.labels[t]: w for t, w in parsed.terms.items()}
    assert weights["weather"] == 1.0
    assert weights["help"] == FILLER_WEIGHT and weights["find"] == FILLER_WEIGHT
    assert index.search("help me find the weather").results[0].skill.name == "weather"


# ---------------------------------------------------------------- calibration


def test_scale_is_monotone_and_puts_the_knee_at_the_default_threshold() -> None:
    for cal in (LEXICAL, HYBRID, Calibration(0.3, 0.0)):
        raw = np.linspace(0.0, 1.0, 101)
        shown = cal.scale(raw)
        assert shown[0] == 0.0 and shown[-1] == pytest.approx(1.0)
        assert np.all(np.diff(shown) > 0)
        assert cal.scale(np.array([cal.knee]))[0] == pytest.approx(0.75)


def test_is_confident_needs_score_and_lead() -> None:
    assert is_confident(0.8, 0.2, False, 0.75, 0.05)
    assert not is_confident(0.8, 0.01, False, 0.75, 0.05)
    assert is_confident(0.8, 0.0, True, 0.75, 0.05)
    assert not is_confident(0.7, 0.5, True, 0.75, 0.05)


def test_semantic_margin_decides_the_lead_with_embeddings(tmp_path: Path) -> None:
    """Over a real index (two copies of qr-a, then qr-b): the lead is the top's fused score
    over the other skill, unless embeddings are on and the top's semantic score beats that
    skill's by less than the calibrated margin."""
    from skilldeck.core.search.ranking import Signals, _lead

    root = tmp_path / "s"
    for folder in ("a/qr-a", "b/qr-a"):
        write_skill(root, "qr-a", "Makes QR codes from links.", folder=folder)
    write_skill(root, "qr-b", "Reads QR codes from pictures.")
    index = _index(root)
    assert [s.name for s in index.skills] == ["qr-a", "qr-a", "qr-b"]
    docs = np.arange(3)

    def lead(semantic: list[float] | None) -> float:
        signals = Signals(
            cand=docs,
            lex=np.zeros(3),
            sem_all=None,
            masks={},
            values={} if semantic is None else {"semantic": np.array(semantic)},
            fired={},
            mentioned=set(),
            lex_docs=docs,
        )
        return _lead(index, signals, np.array([0.9, 0.9, 0.7]), docs)[0]

    assert lead(None) == pytest.approx(0.2)  # lexical: the fused lead over the other skill
    assert lead([0.9, 0.9, 0.9 - 2 * HYBRID.margin]) == pytest.approx(0.2)
    assert lead([0.9, 0.9, 0.9 - HYBRID.margin / 2]) == 0.0  # the embedding cannot tell


def test_copies_of_one_skill_do_not_take_the_lead_away(tmp_path: Path) -> None:
    root = tmp_path / "s"
    for folder in ("a/pdf-forms", "b/pdf-forms"):
        write_skill(root, "pdf-forms", "Fill in PDF forms field by field.", folder=folder)
    write_skill(root, "weather", "Forecast the weather.")
    response = _index(root).search("fill in pdf forms field by field ")
    assert [r.skill.name for r in response.results[:2]] == ["pdf-forms", "pdf-forms"]
    assert response.clustered and response.confident
    assert not response.results[1].confident  # only the top is confident on its score


def test_near_tie_between_two_skills_is_not_confident(tmp_path: Path) -> None:
    root = tmp_path / "s"
    write_skill(root, "sheets-clean", "Clean spreadsheet columns.")
    write_skill(root, "clean-sheets", "Clean spreadsheet columns.")
    response = _index(root).search("clean spreadsheet columns ")
    assert response.results[0].score >= 0.75
    assert response.lead < response.min_lead and not response.confident
    assert response.message.startswith("several skills match about equally")


def test_exact_name_and_mention_stay_confident(tmp_path: Path) -> None:
    root = tmp_path / "s"
    write_skill(root, "sheets-clean", "Clean spreadsheet columns.")
    write_skill(root, "clean-sheets", "Clean spreadsheet columns.")
    index = _index(root)
    named = index.search("clean-sheets")
    assert named.results[0].skill.name == "clean-sheets" and named.sure and named.confident
    mention = index.search("use $sheets-clean on the columns")
    assert mention.results[0].skill.name == "sheets-clean" and mention.confident


def test_agent_search_rejudges_with_the_settings_threshold(catalog: Path) -> None:
    index = _index(catalog)
    sure = agent_search(index, "parse supplier invoices ", settings=Settings())
    assert sure.confident
    strict = agent_search(
        index, "parse supplier invoices ", settings=Settings(confidence_threshold=1.01)
    )
    assert not strict.confident and strict.message == "no confident match"
    assert strict.threshold == 1.01


# ---------------------------------------------------------------- splits and files


def test_split_is_fixed_by_the_text_and_about_sixty_forty() -> None:
    assert split_of("Parse  My Invoices") == split_of("parse my invoices")
    queries = [f"query number {i}" for i in range(2000)]
    share = sum(split_of(q) == "train" for q in queries) / len(queries)
    assert 0.55 < share < 0.65
    items = [EvalQuery(q, ("x",)) for q in queries[:50]]
    train, held = select_split(items, "train"), select_split(items, "held-out")
    assert len(train) + len(held) == 50 and not {q.query for q in train} & {q.query for q in held}
    with pytest.raises(SkilldeckError):
        select_split(items, "dev")


def test_trigger_eval_formats(tmp_path: Path) -> None:
    array = tmp_path / "evals.json"
    array.write_text(
        json.dumps(
            [
                {"query": "fill this pdf form", "should_trigger": True},
                {"query": "what is the weather", "should_trigger": False},
            ]
        )
    )
    with pytest.raises(SkilldeckError, match="--skill"):
        load_queries(array)
    yes, no = load_queries(array, skill="pdf-forms")
    assert yes.expected == ("pdf-forms",) and yes.kind == "should-trigger"
    assert no.negative and no.avoid == ("pdf-forms",) and no.kind == "should-not-trigger"
    envelope = tmp_path / "triggers.json"
    envelope.write_text(
        json.dumps(
            {"skill_name": "pdf-forms", "triggers": [{"query": "a", "should_trigger": True}]},
            indent=2,
        )
    )
    assert load_queries(envelope)[0].expected == ("pdf-forms",)
    lines = tmp_path / "mixed.jsonl"
    lines.write_text(
        '{"query": "a", "should_trigger": true, "skill": "x"}\n{"query": "b", "expected": []}\n'
    )
    first, second = load_queries(lines)
    assert first.expected == ("x",) and second.negative and second.kind == "negative"


def test_resolve_ids_maps_names_to_folders(tmp_path: Path) -> None:
    root = tmp_path / "s"
    write_skill(root, "pdf-forms", folder="a/pdf-forms")
    write_skill(root, "pdf-forms", folder="b/pdf-forms")
    skills = [parse_skill_file(p, root=root) for p in sorted(root.rglob("SKILL.md"))]
    (query,) = resolve_ids([EvalQuery("q", ("pdf-forms",), avoid=("a/pdf-forms",))], skills)
    assert query.expected == ("a/pdf-forms", "b/pdf-forms")
    assert query.avoid == ("a/pdf-forms",)


def test_evaluate_counts_confident_and_false_alarms() -> None:
    answers = {
        "right sure": Ranked(["a", "b"], True),
        "wrong sure": Ranked(["b", "a"], True),
        "right unsure": Ranked(["a"], False),
        "no skill": Ranked(["b"], True),
        "no skill quiet": Ranked(["b"], False),
        "not this one": Ranked(["b"], True),
        "not that one": Ranked(["a"], True),
    }
    queries = [
        EvalQuery("right sure", ("a",)),
        EvalQuery("wrong sure", ("a",)),
        EvalQuery("right unsure", ("a",)),
        EvalQuery("no skill", (), "negative"),
        EvalQuery("no skill quiet", (), "negative"),
        EvalQuery("not this one", (), "should-not-trigger", ("a",)),
        EvalQuery("not that one", (), "should-not-trigger", ("a",)),
    ]
    report = evaluate(lambda q, limit: answers[q], queries)
    overall = report.overall
    assert (overall.count, overall.hits1, overall.confident, overall.confident_right) == (
        3,
        2,
        2,
        1,
    )
    assert overall.precision == 0.5 and overall.coverage == pytest.approx(2 / 3)
    assert report.negatives["negative"].flagged == 1
    assert report.negatives["should-not-trigger"].flagged == 1  # only its own skill counts
    data = report.to_dict()
    assert data["overall"]["confident_precision"] == 0.5
    assert data["negatives"]["negative"] == {"queries": 2, "flagged": 1, "rate": 0.5}
    plain = evaluate(lambda q, limit: ["a"], [EvalQuery("x", ("a",))])
    assert plain.overall.hits1 == 1 and plain.overall.confident == 0


def test_name_prefix_answer_is_never_confident(catalog: Path) -> None:
    index = _index(catalog)
    loose = agent_search(index, "gr", settings=Settings(confidence_threshold=0.1))
    assert loose.results[0].skill.name == "grafana-dashboards" and not loose.confident
