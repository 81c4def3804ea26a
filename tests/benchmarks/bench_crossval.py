"""Retrieval quality by 5-fold cross-validation over queries (not pass/fail).

Usage: python tests/benchmarks/bench_crossval.py [--shared DIR] [--folds 5]
       [--rankers lexical,hybrid,minilm] [--sets corpus,metatool] [--examples] [--json]

Each query falls in a fold by a hash of its text (``skilldeck.core.search.crossval``);
fold ``i`` is scored by rankers built without its queries. Sets and rankers as in
``bench_fusion.py`` (``corpus``: the shared dev queries and ``tests/eval/queries-extra.jsonl``
over the 372 corpus skills; ``metatool``: 1,000 requests over 199 tools); the 150 requests
of ``metatool/negatives-dev.jsonl`` need no skill and are split in folds too.

``--examples`` adds a column per ranker with the fold's *training* requests written into
copies of the skills as ``examples`` (the skills on disk are not touched; the fold's own
queries never become examples). ``minilm+ex`` is the embedding alone with each skill's
best cosine over its description and its examples. ``--no-bodies`` indexes metadata only
(what the body adds to matching).

Embeddings of every text (skills, examples, queries) are cached in
``~/.cache/skilldeck-bench/`` so that reruns only embed what changed.

Prints, per set and ranker, mean ± spread over the folds of recall@1, recall@3, MRR@10,
the share flagged ``confident``, its precision and the negatives flagged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fusion import _sets, _shared, _skills

CACHE = Path.home() / ".cache" / "skilldeck-bench"
RANKERS = ("lexical", "hybrid", "minilm")


class CachedModel:
    """Wraps a model's ``encode`` with a text -> vector cache kept on disk."""

    def __init__(self, model: Any, ident: str) -> None:
        self.model = model
        self.path = CACHE / f"emb-{hashlib.sha256(ident.encode()).hexdigest()[:16]}.npz"
        self.rows: dict[str, np.ndarray] = {}
        self.dirty = False
        if self.path.is_file():
            with np.load(self.path) as data:
                self.rows = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def encode(self, texts: Sequence[str], cap: int | None = None) -> np.ndarray:
        keys = [self._key(t if cap is None else f"{cap}\0{t}") for t in texts]
        todo = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if todo:
            by_key = dict(zip(keys, texts, strict=True))
            fresh = self.model.encode([by_key[k] for k in todo], cap)
            self.rows.update(zip(todo, np.asarray(fresh, dtype=np.float32), strict=True))
            self.dirty = True
        return np.stack([self.rows[k] for k in keys])

    def save(self) -> None:
        if not self.dirty:
            return
        CACHE.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.rows))
        np.savez(self.path, keys=keys, vectors=np.stack(list(self.rows.values())))
        self.dirty = False


def _embedder() -> Any:
    from skilldeck.core.search.semantic import load_embedder

    embedder = load_embedder()
    if not isinstance(embedder.model, CachedModel):
        embedder.model = CachedModel(embedder.model, embedder.model_id)
    return embedder


def _minilm(skills: list[Any]) -> Callable[[str, int], Any]:
    """The embedding alone: each skill's best cosine over its text and its examples."""
    from skilldeck.core.search.embedding import TEXT_TOKENS
    from skilldeck.core.search.evaluate import Ranked
    from skilldeck.core.search.index import SearchIndex

    embedder = _embedder()
    vectors = embedder.encode([SearchIndex._embed_text(s) for s in skills], TEXT_TOKENS)
    owners = [i for i, s in enumerate(skills) for _ in s.examples]
    examples = embedder.encode([e.request for s in skills for e in s.examples], TEXT_TOKENS)
    ids = [s.rel_id for s in skills]

    def rank(query: str, limit: int) -> Ranked:
        vector = embedder.encode([query])[0]
        cos = vectors @ vector
        if owners:
            np.maximum.at(cos, owners, examples @ vector)
        order = np.argsort(-cos, kind="stable")[:limit]
        return Ranked([ids[i] for i in order])

    return rank


def _builder(
    skills: list[Any], ranker: str, examples: bool, bodies: bool = True
) -> Callable[[list[Any]], Any]:
    from skilldeck.core.search import SearchIndex, index_ranker
    from skilldeck.core.search.crossval import with_examples

    fixed: dict[str, Any] = {}

    def build(train: list[Any]) -> Any:
        chosen = with_examples(skills, train) if examples else skills
        if ranker == "minilm":
            return _minilm(chosen)
        if not examples and ranker in fixed:
            return fixed[ranker]
        semantic = ranker == "hybrid"
        if semantic:
            _embedder()
        index = SearchIndex.build(chosen, semantic=semantic, bodies=bodies)
        if semantic and not index.semantic:
            sys.exit(f"no embeddings: {index.semantic_error}")
        out = fixed[ranker] = index_ranker(index, semantic=semantic)
        return out

    return build


def run(
    shared: Path, wanted: list[str], sets: list[str], k: int, examples: bool, bodies: bool = True
) -> dict[str, Any]:
    """Every (set, ranker[+ex]) cross-validation report, JSON-ready."""
    from skilldeck.core.search.crossval import cross_validate
    from skilldeck.core.search.evaluate import load_queries, resolve_ids

    negatives = load_queries(shared / "eval" / "metatool" / "negatives-dev.jsonl")
    out: dict[str, Any] = {}
    for name in sets:
        root, files = _sets(shared)[name]
        skills = _skills(root)
        queries = resolve_ids([q for f in files for q in load_queries(f)], skills)
        for ranker in wanted:
            for ex in (False, True) if examples else (False,):
                build = _builder(skills, ranker, ex, bodies)
                report = cross_validate(build, queries, k=k, negatives=negatives)
                out[f"{name}/{ranker}{'+ex' if ex else ''}"] = report.to_dict()
                _embedder().model.save() if ranker != "lexical" else None
    return out


def _print(results: dict[str, Any]) -> None:
    cols = ("recall@1", "recall@3", "mrr@10", "confident", "confident_precision", "negatives")
    print(f"{'set/ranker':22} " + " ".join(f"{c[:13]:>15}" for c in cols))
    for key, data in results.items():
        cells = [f"{data[c]['mean']:.3f} ± {data[c]['spread']:.3f}" for c in cols]
        print(f"{key:22} " + " ".join(f"{c:>15}" for c in cells))
        print(f"{'':22}  r@1 per fold: {data['recall@1']['per_fold']}")


def main() -> None:
    """Parse arguments, run, print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=None, help="the shared folder")
    parser.add_argument("--rankers", default=",".join(RANKERS))
    parser.add_argument("--sets", default="corpus,metatool")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--examples", action="store_true", help="add a with-examples column")
    parser.add_argument("--no-bodies", action="store_true", help="index metadata only")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    shared = _shared(args.shared)
    if not (shared / "eval").is_dir():
        sys.exit(f"shared evaluation data not found at {shared} (set SKILLDECK_SHARED)")
    sets = args.sets.split(",")
    results = run(
        shared, args.rankers.split(","), sets, args.folds, args.examples, not args.no_bodies
    )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)


if __name__ == "__main__":
    main()
