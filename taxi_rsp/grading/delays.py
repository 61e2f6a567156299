"""Delay statistics over the delays a submission reports (SPEC §5 ``delay``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class DelayStats:
    """Mean, median, 99th percentile and maximum of the non-NULL delays, in ms."""

    count: int
    nulls: int
    mean: float | None
    p50: float | None
    p99: float | None
    max: float | None


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (the smallest value with at least p% at or below it).

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.0
    """
    if not sorted_values:
        raise ValueError("percentile of no values")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def delay_stats(delays: Sequence[float | None]) -> DelayStats:
    """Summarise delays; None entries are NULL delays (expiry-triggered lines)."""
    values = sorted(d for d in delays if d is not None)
    nulls = len(delays) - len(values)
    if not values:
        return DelayStats(0, nulls, None, None, None, None)
    mean = math.fsum(values) / len(values)
    return DelayStats(
        len(values), nulls, mean, percentile(values, 50), percentile(values, 99), values[-1]
    )
