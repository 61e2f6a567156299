"""Delay statistics of SPEC §5 (mean, p50, p99, max in ms) and reading delay columns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

NULL = "NULL"


def delay_stats(delays_ms: Sequence[float] | np.ndarray) -> dict[str, float | None]:
    """Mean, median, 99th percentile (linear interpolation) and maximum; None when empty.

    >>> delay_stats([1.0, 2.0, 3.0, 10.0])["p50"]
    2.5
    """
    values = np.asarray(delays_ms, dtype=float)
    if values.size == 0:
        return {"mean": None, "p50": None, "p99": None, "max": None}
    return {
        "mean": round(float(values.mean()), 6),
        "p50": round(float(np.percentile(values, 50)), 6),
        "p99": round(float(np.percentile(values, 99)), 6),
        "max": round(float(values.max()), 6),
    }


def read_delays(path: Path) -> np.ndarray:
    """The numeric delay column (last field) of an output file; NULL delays are skipped."""
    values = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            field = line.rstrip("\n").rpartition(",")[2]
            if field != NULL:
                values.append(float(field))
    return np.asarray(values, dtype=float)
