"""Does ``confident`` hold on queries it was not fitted on? 5-fold check (not pass/fail).

Usage: python tests/benchmarks/bench_calibration.py [--shared DIR] [--folds 5]
       [--sets corpus,metatool] [--mode hybrid|lexical] [--examples]

Every query (and every request needing no skill) is searched once per fold it is tested
in, by an index built without its fold (``--examples``: with the fold's training requests
as examples). From the top result's shown score, its lead over the next other skill and
whether it is named or triggered:

* the shipped rule (``core/search/calibration.py``): coverage, precision and negatives
  flagged per fold, mean ± spread;
* a rule refitted on the other folds only (the threshold and least lead with the most
  confident-and-right answers at precision >= 0.92 and <= 3% negatives flagged on them),
  scored on the held fold: what refitting on new data would give;
* a reliability table over all held-out answers: per band of shown score, how often the
  top result is right.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_crossval import _embedder
from bench_fusion import _sets, _shared, _skills

THRESHOLDS = np.round(np.arange(0.55, 0.96, 0.01), 2)
LEADS = np.round(np.arange(0.0, 0.21, 0.01), 2)
BANDS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.01)


def _answers(index: Any, queries: list[Any], semantic: bool) -> np.ndarray:
    """Per query: shown score, lead, sure, confident, right, negative."""
    rows = []
    for item in queries:
        response = index.search(item.query, limit=3, semantic=semantic)
        top = response.results[0] if response.results else None
        right = top is not None and top.skill.rel_id in item.expected
        score = top.score if top else 0.0
        rows.append((score, response.lead, response.sure, response.confident, right, item.negative))
    return np.array(rows, dtype=np.float64)


def _rule_figures(rows: np.ndarray, flag: np.ndarray) -> tuple[float, float, float]:
    pos, neg = rows[:, 5] == 0, rows[:, 5] == 1
    flagged = flag & pos
    coverage = flagged.sum() / max(pos.sum(), 1)
    precision = (flagged & (rows[:, 4] == 1)).sum() / flagged.sum() if flagged.any() else 1.0
    negatives = (flag & neg).sum() / max(neg.sum(), 1)
    return float(coverage), float(precision), float(negatives)


def _flag(rows: np.ndarray, threshold: float, lead: float) -> np.ndarray:
    flags: np.ndarray = (rows[:, 0] >= threshold) & ((rows[:, 2] == 1) | (rows[:, 1] >= lead))
    return flags


def _fit(rows: np.ndarray) -> tuple[float, float]:
    best, chosen = -1.0, (0.95, 0.2)
    for t in THRESHOLDS:
        for lead in LEADS:
            coverage, precision, negatives = _rule_figures(rows, _flag(rows, t, lead))
            if precision >= 0.92 and negatives <= 0.03 and coverage * precision > best:
                best, chosen = coverage * precision, (float(t), float(lead))
    return chosen


def run(
    shared: Path, name: str, mode: str, k: int, examples: bool, rules: list[tuple[float, float]]
) -> None:
    """Print the shipped rule per fold, the refitted rule per fold and the reliability."""
    from skilldeck.core.search import SearchIndex, with_examples
    from skilldeck.core.search.crossval import split_folds
    from skilldeck.core.search.evaluate import load_queries, resolve_ids

    semantic = mode == "hybrid"
    if semantic:
        _embedder()
    root, files = _sets(shared)[name]
    skills = _skills(root)
    queries = resolve_ids([q for f in files for q in load_queries(f)], skills)
    negatives = load_queries(shared / "eval" / "metatool" / "negatives-dev.jsonl")
    pos_folds, neg_folds = split_folds(queries, k), split_folds(negatives, k)
    plain = SearchIndex.build(skills, semantic=semantic)
    held: list[np.ndarray] = []
    for (train, test), (_, neg_test) in zip(pos_folds, neg_folds, strict=True):
        index = (
            SearchIndex.build(with_examples(skills, train), semantic=semantic)
            if examples
            else plain
        )
        held.append(_answers(index, [*test, *neg_test], semantic))
    if semantic:
        _embedder().model.save()
    shipped = [_rule_figures(r, r[:, 3] == 1) for r in held]
    refit = []
    for i, rows in enumerate(held):
        t, lead = _fit(np.concatenate([r for j, r in enumerate(held) if j != i]))
        refit.append((*_rule_figures(rows, _flag(rows, t, lead)), t, lead))
    print(f"{name}/{mode}{'+ex' if examples else ''}: {k} folds")
    tried = [
        (f"rule {t:.2f}/{lead:.2f}", [_rule_figures(r, _flag(r, t, lead)) for r in held])
        for t, lead in rules
    ]
    table: list[tuple[str, list[tuple[float, ...]]]] = [
        ("shipped rule", list(shipped)),
        ("refitted per fold", list(refit)),
    ]
    table.extend((label, list(figures)) for label, figures in tried)
    for label, figures in table:
        cols = list(zip(*figures, strict=False))
        cells = [f"{statistics.fmean(c):.3f} ± {statistics.pstdev(c):.3f}" for c in cols[:3]]
        print(f"  {label:18} coverage {cells[0]}  precision {cells[1]}  negatives {cells[2]}")
        print(f"  {'':18} precision per fold {[round(c, 3) for c in cols[1]]}")
    print(f"  refitted rules (threshold, lead): {[(r[3], r[4]) for r in refit]}")
    allrows = np.concatenate(held)
    pos = allrows[allrows[:, 5] == 0]
    print("  reliability (held-out top results): shown score -> share right")
    for lo, hi in itertools.pairwise(BANDS):
        band = pos[(pos[:, 0] >= lo) & (pos[:, 0] < hi)]
        neg = allrows[(allrows[:, 5] == 1) & (allrows[:, 0] >= lo) & (allrows[:, 0] < hi)]
        share = f"{band[:, 4].mean():.3f}" if len(band) else "-"
        span = f"[{lo:.2f}, {min(hi, 1.0):.2f})"
        print(f"    {span}  n={len(band):4}  right {share}  no-skill n={len(neg)}")


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=None)
    parser.add_argument("--sets", default="corpus,metatool")
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "lexical"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--examples", action="store_true")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        help="THRESHOLD,LEAD on the shown scale: also score this rule on every fold",
    )
    args = parser.parse_args()
    shared = _shared(args.shared)
    for name in args.sets.split(","):
        rules = [(float(r.split(",")[0]), float(r.split(",")[1])) for r in args.rule]
        run(shared, name, args.mode, args.folds, args.examples, rules)


if __name__ == "__main__":
    main()
