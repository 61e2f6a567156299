"""Q1, frequent routes (SPEC §4.1), recomputed from the window contents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import takewhile

TOP_K = 10


def top_routes(routes: Sequence[str], seqs: Sequence[int]) -> list[str]:
    """Top-10 routes: count descending, then fresh (largest seq) descending.

    ``routes``/``seqs``: route and seq of every trip in the window, in seq order.
    """
    count = Counter(routes)
    fresh = dict(zip(routes, seqs))  # seq order: the last value kept is the largest
    candidates = count.most_common()
    if len(candidates) > TOP_K:
        # Only routes counted at least as often as the 10th can be in the top 10;
        # dropping the rest first keeps the tie-breaking sort small.
        cutoff = candidates[TOP_K - 1][1]
        candidates = list(takewhile(lambda item: item[1] >= cutoff, candidates))
    ranked = sorted(candidates, key=lambda item: (-item[1], -fresh[item[0]]))
    return [route for route, _ in ranked[:TOP_K]]
