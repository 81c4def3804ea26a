"""Hybrid skill search: fielded BM25, fuzzy correction, name matching, triggers and
optional offline embeddings, fused into one explainable 0-1 score.

Build a :class:`SearchIndex` from skills (or load it from the local store with
:func:`skilldeck.core.search.persist.load_or_build`), then :meth:`SearchIndex.search`
(people: up to 20 results) or :func:`agent_search` (agents: top 3, confidence judged,
telemetry). A search runs in stages: :mod:`.query` (the words as weighted terms) ->
:mod:`.ranking` (signals, fusion, explanation); :mod:`.analysis` and :mod:`.postings` build
the arrays they read.
"""

from skilldeck.core.limits import AGENT_LIMIT, HUMAN_LIMIT
from skilldeck.core.search.bm25 import BM25Postings
from skilldeck.core.search.evaluate import (
    EvalQuery,
    EvalReport,
    KindScore,
    evaluate,
    index_ranker,
    load_queries,
)
from skilldeck.core.search.index import (
    CLUSTER_GAP,
    FIELD_WEIGHTS,
    SEMANTIC_FIELD_WEIGHTS,
    SEMANTIC_WEIGHTS,
    WEIGHTS,
    SearchIndex,
    SearchResponse,
    SearchResult,
    agent_search,
)
from skilldeck.core.search.text import stem, tokenize

__all__ = [
    "AGENT_LIMIT",
    "CLUSTER_GAP",
    "FIELD_WEIGHTS",
    "HUMAN_LIMIT",
    "SEMANTIC_FIELD_WEIGHTS",
    "SEMANTIC_WEIGHTS",
    "WEIGHTS",
    "BM25Postings",
    "EvalQuery",
    "EvalReport",
    "KindScore",
    "SearchIndex",
    "SearchResponse",
    "SearchResult",
    "agent_search",
    "evaluate",
    "index_ranker",
    "load_queries",
    "stem",
    "tokenize",
]
