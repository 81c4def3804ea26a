"""What ``confident`` means: the top result is the right skill, at a stated precision.

The fused score of a search (a weighted mean of its signals, see :mod:`.ranking`) is shown
on a calibrated scale: a piecewise-linear map sends the raw score :attr:`Calibration.knee`
to :data:`DEFAULT_THRESHOLD` (0.75, the default ``confidence_threshold``), 0 to 0 and 1 to
1, so the order never changes. The top result is then *confident* when

* its score is at least the threshold, and
* it leads the next result that is a different skill (another name: copies of one skill
  in several folders are equally right) by at least :attr:`Calibration.lead`, and, with
  embeddings, its semantic signal beats that skill's by at least
  :attr:`Calibration.margin` (the fused lead alone let through tools the embedding
  found about as close: two QR-code or SEO tools);

or, whatever its lead, when the query names it (``$name``), one of its triggers fired or
the query is exactly its name, and its score reaches the threshold. Only the top result
can be confident on its score alone; a lower one only through a mention or a trigger.

The numbers of each mode (lexical; with embeddings) were fitted on the *train* split
(see ``tests/eval/README.md``) of the shared corpus queries, the MetaTool requests and the
MetaTool requests that need no skill, as the rule with the most confident-and-right
answers whose precision on train is at least :data:`TARGET_PRECISION` on the corpus and
:data:`TARGET_PRECISION_OUTSIDE` on MetaTool while at most half of
:data:`MAX_FALSE_ALARMS` of the no-skill requests are flagged on either catalog (half:
there are only 84 of them in train). The held-out figures are in the search-quality section
of docs/search.md. Raising ``confidence_threshold`` makes the flag stricter (fewer, surer answers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

DEFAULT_THRESHOLD = 0.75
"""The calibrated score that stands for :attr:`Calibration.knee` (``Settings``' default)."""
TARGET_PRECISION = 0.95
"""Precision of ``confident`` aimed at on the corpus queries (train split)."""
TARGET_PRECISION_OUTSIDE = 0.90
"""Precision aimed at on outside requests (MetaTool, train split; its tools overlap)."""
MAX_FALSE_ALARMS = 0.05
"""Most requests needing no skill that may be flagged confident (train split)."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """One mode's rule.

    Attributes:
        knee: The raw fused score shown as :data:`DEFAULT_THRESHOLD`.
        lead: Least lead, on the shown scale, of the top result over the next different
            skill for it to be confident.
        margin: Least difference between the semantic signals (0-1) of the top result and
            of that next different skill (with embeddings; 0: no condition).
    """

    knee: float
    lead: float
    margin: float = 0.0

    def scale(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """Raw fused scores (0-1) on the shown scale (0-1, same order)."""
        knee = self.knee
        low = raw * (DEFAULT_THRESHOLD / knee)
        high = DEFAULT_THRESHOLD + (raw - knee) * ((1.0 - DEFAULT_THRESHOLD) / (1.0 - knee))
        out: NDArray[np.float64] = np.clip(np.where(raw < knee, low, high), 0.0, 1.0)
        return out


LEXICAL = Calibration(knee=0.46, lead=0.03)
"""Lexical mode (BM25, coverage, name). Train split: corpus 65% confident and right at
precision 1.0, MetaTool 7% at 0.91, 1% of the no-skill requests flagged (words alone
cannot tell a request that needs no skill: the rule stays strict)."""
HYBRID = Calibration(knee=0.41, lead=0.12, margin=0.03)
"""With embeddings (semantic, coverage, BM25, name, examples). A lead of 0.07 fitted on the
train split held MetaTool precision 0.889 ± 0.033 (36% flagged) under 5-fold
cross-validation by query (``tests/benchmarks/bench_calibration.py``), under the 0.90 aimed
at. A rule refitted on four folds and scored on the fifth holds 0.916 ± 0.031 at 32%, with
refitted leads of 0.11-0.17 at thresholds 0.72-0.74 (0.03-0.07 at 0.77-0.79 with
examples), so the shown threshold stays 0.75 and the lead is 0.12: MetaTool 0.916 ±
0.019 at 33% (with examples 0.939 ± 0.006 at 40%), 2.0% of the no-skill requests flagged,
corpus precision 1.0 at 59% (a lower coverage rather than a broken precision)."""


def calibration_for(semantic: bool) -> Calibration:
    """The rule of a search with (``semantic``) or without embeddings."""
    return HYBRID if semantic else LEXICAL


def is_confident(score: float, lead: float, sure: bool, threshold: float, min_lead: float) -> bool:
    """The top result's flag: ``score`` reaches ``threshold`` and it leads the next
    different skill by ``min_lead`` (``sure``: named, triggered or its exact name: no
    lead needed)."""
    return score >= threshold and (sure or lead >= min_lead)
