"""Skills by name: the name order and the tables answering one- and two-character queries.

Built on first use (a one-shot search of a few words never needs them): 28 ms at 10k skills.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from skilldeck.core.model import Skill
from skilldeck.core.search.results import SearchResponse, SearchResult

_NO_RANKS = np.zeros(0, dtype=np.int32)


class NameTables:
    """Documents in (lower-cased name, path) order, and name-prefix tables.

    Attributes:
        order: Document ids in name order.
        first: One- or two-character prefix -> ``[lo, hi)`` positions in ``order`` of the
            names starting with it.
        parts: Prefix -> positions in ``order`` of names with a later hyphenated part
            starting with it.
    """

    def __init__(self, names: Sequence[str], paths: Sequence[str]) -> None:
        lower = [name.lower() for name in names]
        order = sorted(range(len(lower)), key=lambda d: (lower[d], paths[d]))
        self.order: NDArray[np.int32] = np.array(order, dtype=np.int32)
        first: dict[str, tuple[int, int]] = {}
        part_keys: dict[str, int] = {}
        key_ids = array("i")
        ranks = array("i")
        for rank, doc in enumerate(order):
            name = lower[doc]
            for key in {name[:1], name[:2]}:
                span = first.get(key)
                first[key] = (rank, rank + 1) if span is None else (span[0], rank + 1)
            if "-" in name:
                keys = set()
                for part in name.split("-")[1:]:
                    if part:
                        keys.add(part[:1])
                        keys.add(part[:2])
                for key in keys:
                    key_ids.append(part_keys.setdefault(key, len(part_keys)))
                    ranks.append(rank)
        first.pop("", None)
        self.first = first
        ids = np.frombuffer(key_ids, dtype=np.int32)
        values = np.frombuffer(ranks, dtype=np.int32)
        by_key = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[by_key], np.arange(len(part_keys) + 1))
        self.parts: dict[str, NDArray[np.int32]] = {
            key: values[by_key[bounds[i] : bounds[i + 1]]].copy() for key, i in part_keys.items()
        }

    def nbytes(self) -> int:
        """Memory held by the arrays."""
        return int(self.order.nbytes + sum(a.nbytes for a in self.parts.values()))


def name_prefix(
    skills: Sequence[Skill],
    tables: NameTables,
    query: str,
    prefix: str,
    limit: int,
    threshold: float,
    started: float,
) -> SearchResponse:
    """Rank a one- or two-character query (the first keystrokes) by skill name.

    Too short for word statistics to mean anything: names starting with it come
    first, then names with a hyphenated part starting with it, each by name. Never
    confident, so agents are not sent anywhere on so little.
    """
    order = tables.order
    lo, hi = tables.first.get(prefix, (0, 0))
    parts = tables.parts.get(prefix, _NO_RANKS)
    later = parts[(parts < lo) | (parts >= hi)]
    total = (hi - lo) + len(later)
    ranked = [(1.0, int(order[r])) for r in range(lo, min(hi, lo + limit))]
    ranked += [(0.5, int(order[r])) for r in later[: max(0, limit - len(ranked))]]
    results = [
        SearchResult(skills[doc], score, False, {"name_prefix": score}, {"name": [prefix]})
        for score, doc in ranked
    ]
    elapsed = (time.perf_counter() - started) * 1000.0
    return SearchResponse(query, results, False, False, elapsed, total, threshold)
