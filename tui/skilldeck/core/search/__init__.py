"""Hybrid skill search: fielded BM25, fuzzy correction, name matching, triggers and
optional offline embeddings, fused into one explainable 0-1 score.

Build a :class:`SearchIndex` from skills (or load it from the local store with
:func:`skilldeck.core.search.persist.load_or_build`), then :meth:`SearchIndex.search`
(people: up to 20 results) or :func:`agent_search` (agents: top 3, confidence judged,
telemetry); the default limits are in :mod:`skilldeck.core.limits`. A search runs in
stages: :mod:`.query` (the words as weighted terms) -> :mod:`.ranking` (signals, fusion,
explanation); :mod:`.analysis` and :mod:`.postings` build the arrays they read.
"""

from typing import TYPE_CHECKING

from skilldeck.core.lazy import facade

# Bound now: the function shares its name with its module (cheap, no numpy), so a lazy name
# would be shadowed by the module once anything imported skilldeck.core.search.evaluate.
from skilldeck.core.search.evaluate import evaluate

if TYPE_CHECKING:
    from skilldeck.core.search.bm25 import BM25Postings
    from skilldeck.core.search.crossval import (
        METRICS,
        CrossValReport,
        cross_validate,
        fold_rankers,
        with_examples,
    )
    from skilldeck.core.search.evaluate import (
        EvalQuery,
        EvalReport,
        Ranker,
        index_ranker,
        load_queries,
        resolve_ids,
        select_split,
    )
    from skilldeck.core.search.example_writer import add_examples
    from skilldeck.core.search.index import SEMANTIC_WEIGHTS, WEIGHTS, SearchIndex
    from skilldeck.core.search.model_fetch import INDEX_URL, fetch_model
    from skilldeck.core.search.results import (
        SearchResponse,
        SearchResult,
        agent_search,
        too_common,
    )
    from skilldeck.core.search.text import stem, tokenize

__all__ = [
    "INDEX_URL",
    "METRICS",
    "SEMANTIC_WEIGHTS",
    "WEIGHTS",
    "BM25Postings",
    "CrossValReport",
    "EvalQuery",
    "EvalReport",
    "Ranker",
    "SearchIndex",
    "SearchResponse",
    "SearchResult",
    "add_examples",
    "agent_search",
    "cross_validate",
    "evaluate",
    "fetch_model",
    "fold_rankers",
    "index_ranker",
    "load_queries",
    "resolve_ids",
    "select_split",
    "stem",
    "tokenize",
    "too_common",
    "with_examples",
]

_NAMES = {
    "BM25Postings": "bm25",
    "METRICS": "crossval",
    "CrossValReport": "crossval",
    "cross_validate": "crossval",
    "fold_rankers": "crossval",
    "with_examples": "crossval",
    "add_examples": "example_writer",
    "EvalQuery": "evaluate",
    "Ranker": "evaluate",
    "EvalReport": "evaluate",
    "index_ranker": "evaluate",
    "load_queries": "evaluate",
    "resolve_ids": "evaluate",
    "select_split": "evaluate",
    "SEMANTIC_WEIGHTS": "index",
    "SearchIndex": "index",
    "WEIGHTS": "index",
    "INDEX_URL": "model_fetch",
    "fetch_model": "model_fetch",
    "SearchResponse": "results",
    "SearchResult": "results",
    "agent_search": "results",
    "too_common": "results",
    "stem": "text",
    "tokenize": "text",
}
"""Each public name and the module that defines it."""

if not TYPE_CHECKING:
    __getattr__, __dir__ = facade(__name__, _NAMES)
