"""Top-10 of Q1 and Q2 recomputed from the raw window contents (numpy, no state).

Both functions take the window's trips as arrays in seq order and return the ranked
entries; nothing is carried from one call to the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from taxi_rsp.spec import TOP_K

ROUTE_BASE = 1_000_000  # route code = pickup cell code * ROUTE_BASE + dropoff cell code


def _last_occurrence(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct keys, index of each key's last occurrence, and each key's count."""
    n = len(keys)
    unique, first_in_reversed, counts = np.unique(keys[::-1], return_index=True, return_counts=True)
    return unique, n - 1 - first_in_reversed, counts


def top_routes(routes: np.ndarray, seqs: np.ndarray) -> list[int]:
    """Q1: route codes by count desc, then freshest (largest) seq desc; at most 10."""
    if len(routes) == 0:
        return []
    unique, last, counts = _last_occurrence(routes)
    fresh = seqs[last]
    order = np.lexsort((-fresh, -counts))[:TOP_K]  # seqs are unique: a total order
    return unique[order].tolist()


@dataclass(frozen=True)
class Area:
    """A ranked Q2 cell; the median is in half-cents so it stays an integer."""

    cell: int
    empty_taxis: int
    median_half_cents: int


def _medians_half_cents(cells: np.ndarray, cents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct cells and twice the median of their values (exact, integer)."""
    order = np.lexsort((cents, cells))
    cells, cents = cells[order], cents[order]
    unique, starts, counts = np.unique(cells, return_index=True, return_counts=True)
    low = starts + (counts - 1) // 2
    high = starts + counts // 2  # equal to low for an odd count
    return unique, cents[low] + cents[high]


def top_areas(profit_cells: np.ndarray, profit_cents: np.ndarray, profit_seqs: np.ndarray,
              taxis: np.ndarray, empty_cells: np.ndarray, empty_seqs: np.ndarray) -> list[Area]:
    """Q2: cells by median/empty desc (exact), fresh desc, x asc, y asc; at most 10.

    ``profit_*``: the profit window's trips with a defined profit (pickup cell,
    cents, seq); ``taxis``/``empty_*``: the empty window's trips (medallion code,
    dropoff cell, seq), of which only each taxi's last one counts.
    """
    if len(profit_cells) == 0 or len(taxis) == 0:
        return []
    _, latest, _ = _last_occurrence(taxis)
    e_cells, e_last, e_counts = _last_occurrence(empty_cells[latest])
    e_fresh = empty_seqs[latest][e_last]
    p_cells, medians = _medians_half_cents(profit_cells, profit_cents)
    _, p_last, _ = _last_occurrence(profit_cells)
    p_fresh = profit_seqs[p_last]  # unique cells come sorted, like p_cells
    cells, p_index, e_index = np.intersect1d(p_cells, e_cells, assume_unique=True, return_indices=True)
    if len(cells) == 0:
        return []
    medians, empties = medians[p_index], e_counts[e_index]
    fresh = np.maximum(p_fresh[p_index], e_fresh[e_index])
    # Floats only pre-select: anything within a relative 1e-9 of the 10th best value
    # is re-ranked exactly with fractions, so rounding cannot change the result.
    ratio = medians / empties
    if len(cells) > TOP_K:
        tenth = np.partition(ratio, len(ratio) - TOP_K)[len(ratio) - TOP_K]
        keep = np.flatnonzero(ratio >= tenth * (1 - 1e-9))
    else:
        keep = np.arange(len(cells))
    ranked = sorted(keep.tolist(), key=lambda i: (-Fraction(int(medians[i]), int(empties[i])),
                                                  -int(fresh[i]), int(cells[i])))
    return [Area(int(cells[i]), int(empties[i]), int(medians[i])) for i in ranked[:TOP_K]]
