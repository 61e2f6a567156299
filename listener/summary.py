"""Delay statistics for the run summary (SPEC §5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def delay_stats(delays_ms: Sequence[float]) -> dict[str, float | None]:
    """Mean, median, 99th percentile and maximum in ms (None when there are none).

    >>> delay_stats([1.0, 2.0, 3.0])["p50"]
    2.0
    """
    if len(delays_ms) == 0:
        return {"mean": None, "p50": None, "p99": None, "max": None}
    values = np.asarray(delays_ms, dtype=float)
    return {
        "mean": round(float(values.mean()), 6),
        "p50": round(float(np.percentile(values, 50)), 6),
        "p99": round(float(np.percentile(values, 99)), 6),
        "max": round(float(values.max()), 6),
    }
