"""Top-10 of Q1 and Q2 recomputed from the raw window contents (numpy, no state).

Both functions take the window's trips as arrays in seq order and return the ranked
entries; nothing is carried from one call to the next. Routes, cells and taxis come
as dense integer ids (``0..n-1``, from a dictionary encoding of the chunk), so the
per-group counts and maxima are ``bincount``/``maximum.at`` passes over the window
instead of sorts.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from taxi_rsp.spec import TOP_K

_CENTS_BITS = 32  # a window's profits are sorted as one key: cell id << 32 | cents


def _best_k(score: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The (at most) TOP_K candidates of largest integer ``score``, best first."""
    values = score[candidates]
    if len(candidates) > TOP_K:
        part = np.argpartition(-values, TOP_K - 1)[:TOP_K]
        candidates, values = candidates[part], values[part]
    return candidates[np.argsort(-values, kind="stable")]


def top_routes(routes: np.ndarray, seqs: np.ndarray, route_count: int) -> list[int]:
    """Q1: dense route ids by count desc, then freshest (largest) seq desc; at most 10."""
    if len(routes) == 0:
        return []
    counts = np.bincount(routes, minlength=route_count)
    fresh = np.zeros(route_count, dtype=np.int64)
    np.maximum.at(fresh, routes, seqs)
    present = np.flatnonzero(counts)
    # seqs are unique, so (count, fresh) is a total order; one int64 key holds both.
    score = counts.astype(np.int64) * (int(seqs.max()) + 1) + fresh
    return _best_k(score, present).tolist()


@dataclass(frozen=True)
class Area:
    """A ranked Q2 cell (dense id); the median is in half-cents so it stays an integer."""

    cell: int
    empty_taxis: int
    median_half_cents: int


def _medians_half_cents(cells: np.ndarray, cents: np.ndarray, cell_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Per dense cell id: number of values and twice their median (exact, integer)."""
    counts = np.bincount(cells, minlength=cell_count)
    if len(cents) and int(cents.max()) < 1 << _CENTS_BITS:
        ordered = np.sort((cells.astype(np.int64) << _CENTS_BITS) | cents) & ((1 << _CENTS_BITS) - 1)
    else:  # absurdly large amounts: two-key sort
        ordered = cents[np.lexsort((cents, cells))]
    starts = np.cumsum(counts) - counts
    has = counts > 0
    low = np.where(has, starts + (counts - 1) // 2, 0)
    high = np.where(has, starts + counts // 2, 0)
    medians = np.where(has, ordered[low] + ordered[high], 0) if len(ordered) else np.zeros(cell_count, np.int64)
    return counts, medians


def top_areas(profit_cells: np.ndarray, profit_cents: np.ndarray, profit_seqs: np.ndarray,
              taxis: np.ndarray, empty_cells: np.ndarray, empty_seqs: np.ndarray,
              cell_codes: np.ndarray, taxi_count: int) -> list[Area]:
    """Q2: cells by median/empty desc (exact), fresh desc, x asc, y asc; at most 10.

    ``profit_*``: the profit window's trips with a defined profit (dense pickup cell,
    cents, seq); ``taxis``/``empty_*``: the empty window's trips (dense medallion,
    dense dropoff cell, seq), of which only each taxi's last one counts.
    ``cell_codes[id]`` is the ``x * 1000 + y`` code of a dense cell id.
    """
    if len(profit_cells) == 0 or len(taxis) == 0:
        return []
    cell_count = len(cell_codes)
    latest_of = np.full(taxi_count, -1, dtype=np.int64)
    np.maximum.at(latest_of, taxis, np.arange(len(taxis)))
    latest = latest_of[latest_of >= 0]
    empties = np.bincount(empty_cells[latest], minlength=cell_count)
    fresh = np.zeros(cell_count, dtype=np.int64)
    np.maximum.at(fresh, empty_cells[latest], empty_seqs[latest])
    np.maximum.at(fresh, profit_cells, profit_seqs)
    profit_counts, medians = _medians_half_cents(profit_cells, profit_cents, cell_count)
    ranked = np.flatnonzero((profit_counts > 0) & (empties > 0))
    if len(ranked) == 0:
        return []
    # Floats only pre-select: anything within a relative 1e-9 of the 10th best value
    # is re-ranked exactly with fractions, so rounding cannot change the result.
    ratio = medians[ranked] / empties[ranked]
    if len(ranked) > TOP_K:
        tenth = np.partition(ratio, len(ratio) - TOP_K)[len(ratio) - TOP_K]
        ranked = ranked[ratio >= tenth * (1 - 1e-9)]
    order = sorted(ranked.tolist(), key=lambda c: (-Fraction(int(medians[c]), int(empties[c])),
                                                   -int(fresh[c]), int(cell_codes[c])))
    return [Area(int(cell_codes[c]), int(empties[c]), int(medians[c])) for c in order[:TOP_K]]
