"""Delay statistics of SPEC §5 (mean, p50, p99, max in ms), with one percentile rule for
every part that reports them: `taxi-rsp run` (CSV, ``--stream``, ``--spark``), the Spark
baseline, the report and the grader.

The rule is the **nearest rank**: the p-th percentile is the smallest measured delay
with at least p % of the delays at or below it. It is always a delay that happened
(no interpolation between two lines' delays), and it needs no tie to numpy's method
names. ``NULL`` delays (expiry-triggered lines) are counted apart and left out.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from taxi_rsp.outputs.delay_log import DelayLog, nearest_rank, spilled_stats

if TYPE_CHECKING:
    import numpy as np

NULL = "NULL"
PERCENTILES = (50, 99)

# numpy loads only for this many delays or more: loading it costs ~0.08 CPU s, a sixth
# of a short `taxi-rsp run`'s start-up (issue 50), while Python's own sort of 250,000
# floats takes ~0.05 s (a DEBS Q1 run over 321,036 lines writes ~17,000).
NUMPY_FROM = 250_000


@dataclass(frozen=True)
class DelayStats:
    """Mean, median, 99th percentile and maximum of the non-NULL delays, in ms."""

    count: int
    nulls: int
    mean: float | None
    p50: float | None
    p99: float | None
    max: float | None

    def summary(self) -> dict[str, float | None]:
        """The ``delay_ms`` entry of a ``summary.json`` (values rounded to the ns)."""
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 6)
        return {"mean": rounded(self.mean), "p50": rounded(self.p50), "p99": rounded(self.p99),
                "max": rounded(self.max)}


def percentile(sorted_values: Sequence[float], p: int) -> float:
    """Nearest-rank percentile of ascending values (``p`` a whole percent).

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([1.0, 2.0, 3.0, 4.0], 99)
    (2.0, 4.0)
    """
    if len(sorted_values) == 0:
        raise ValueError("percentile of no values")
    return float(sorted_values[nearest_rank(p, len(sorted_values)) - 1])


def delay_stats(delays: Iterable[float | None] | np.ndarray | DelayLog) -> DelayStats:
    """Summarise delays; None or NaN entries are NULL delays (expiry-triggered lines).
    A :class:`~taxi_rsp.outputs.delay_log.DelayLog` is summarised in bounded memory.

    >>> stats = delay_stats([None, 3.0, 1.0, 2.0, 10.0])
    >>> stats.count, stats.nulls, stats.p50, stats.summary()["mean"]
    (4, 1, 2.0, 4.0)
    """
    if isinstance(delays, DelayLog):
        if delays.spilled:
            return DelayStats(*spilled_stats(delays))
        delays = delays.buffered()
    if _is_ndarray(delays):
        values, nulls = _sorted_by_numpy(delays)
    else:
        items = delays if isinstance(delays, Sequence) else list(delays)
        if len(items) >= NUMPY_FROM:
            values, nulls = _sorted_by_numpy(items)
        else:
            values = sorted(d for d in items if d is not None and d == d)  # d == d: not NaN
            nulls = len(items) - len(values)
    if len(values) == 0:
        return DelayStats(0, nulls, None, None, None, None)
    return DelayStats(len(values), nulls, math.fsum(values) / len(values),
                      percentile(values, 50), percentile(values, 99), float(values[-1]))


def _is_ndarray(value: object) -> bool:
    """Whether ``value`` is a numpy array, without loading numpy to ask: an array exists
    only once numpy is loaded."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def _sorted_by_numpy(delays: Sequence[float | None] | np.ndarray) -> tuple[np.ndarray, int]:
    """The non-NULL delays in ascending order, and how many are NULL (None or NaN). An
    array, not a list: a run that reports at every event has millions of delays, and a
    float object per delay would double the run's peak memory at its very end."""
    import numpy as np  # here, not at the top: only for many delays (NUMPY_FROM)

    if isinstance(delays, np.ndarray):
        raw = delays.astype(float, copy=False)
    elif any(d is None for d in delays):
        raw = np.asarray([math.nan if d is None else d for d in delays], dtype=float)
    else:
        raw = np.asarray(delays, dtype=float)  # array("d") and lists of floats: no per-item loop
    values = raw[~np.isnan(raw)]  # a copy, sorted in place
    values.sort()
    return values, int(raw.size - values.size)


def describe(summary: dict[str, float | None], what: str = "delay") -> str:
    """A ``delay_ms`` entry of a ``summary.json`` in words, for the end of a run:
    median, p99, maximum, then the mean, which the slowest lines can pull above p99.

    Delays are wall-clock time (SPEC §5): a line that waited for the CPU (another
    process ran, the machine is shared) or for a collector pass keeps that wait in its
    delay. Fewer than 1 % of the lines, each many times the median, then carry the mean
    while p99 — which leaves out the slowest 1 % — does not see them. That is said in
    so many words rather than left to look like a bug (docs/semantics.md):

    >>> describe({"mean": 0.031, "p50": 0.019, "p99": 0.096, "max": 2.726})
    'delay p50 0.019 ms, p99 0.096 ms, max 2.726 ms, mean 0.031 ms'
    >>> describe({"mean": 0.933, "p50": 0.020, "p99": 0.162, "max": 412.5})
    'delay p50 0.020 ms, p99 0.162 ms, max 412.500 ms, mean 0.933 ms (above p99: the slowest 1 % of lines, up to 412.500 ms, carry it)'
    >>> describe({"mean": None, "p50": None, "p99": None, "max": None})
    'no delay measured'
    """
    mean, p50, p99, top = summary["mean"], summary["p50"], summary["p99"], summary["max"]
    if mean is None or p50 is None or p99 is None or top is None:
        return f"no {what} measured"
    text = f"{what} p50 {p50:.3f} ms, p99 {p99:.3f} ms, max {top:.3f} ms, mean {mean:.3f} ms"
    if mean > p99:
        text += f" (above p99: the slowest 1 % of lines, up to {top:.3f} ms, carry it)"
    return text


def read_delays(path: Path) -> np.ndarray:
    """The numeric delay column (last field) of an output file; NULL delays are skipped."""
    import numpy as np  # here, not at the top: `taxi-rsp run` needs no numpy

    values = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            field = line.rstrip("\n").rpartition(",")[2]
            if field != NULL:
                values.append(float(field))
    return np.asarray(values, dtype=float)
