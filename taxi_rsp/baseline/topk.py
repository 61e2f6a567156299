"""Top-10 of Q1 and Q2 recomputed from the raw window contents (numpy, no state).

Both functions take the window's trips as arrays in seq order and return the ranked
entries; nothing is carried from one call to the next. Routes, cells and taxis come
as dense integer ids (``0..n-1``, from a dictionary encoding of the chunk), so the
per-group counts and maxima are ``bincount``/``maximum.at`` passes over the window
instead of sorts.

Every selection is checked against its definition with passes that do not sort
(:class:`SelfCheckError` when it fails): numpy's partitions and sorts dispatch to
SIMD code paths picked at run time from the CPU, and an emulated CPU can get those
wrong (QEMU 7.2's TCG emulation of AVX2 does, docs/grading.md). A recompute that
verifies other programs must fail loudly rather than answer wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from taxi_rsp.spec import TOP_K

_CENTS_BITS = 32  # a window's profits are sorted as one key: cell id << 32 | cents


SELF_CHECK_FAILED = "baseline self-check failed"


class SelfCheckError(RuntimeError):
    """numpy returned a selection or order that contradicts its definition."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{SELF_CHECK_FAILED}: numpy's {what} returned a wrong result on this "
                         "machine (a faulty or emulated CPU?); no output can be trusted")


def _best_k(score: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The (at most) TOP_K candidates of largest integer ``score``, best first."""
    values = score[candidates]
    chosen = np.arange(len(values))
    if len(values) > TOP_K:
        chosen = np.argpartition(-values, TOP_K - 1)[:TOP_K]
    chosen = chosen[np.argsort(-values[chosen], kind="stable")]
    check_best_k(values, chosen)
    return candidates[chosen]


def check_best_k(values: np.ndarray, chosen: np.ndarray) -> None:
    """Raise :class:`SelfCheckError` unless ``chosen`` indexes the min(TOP_K, n) largest
    ``values`` without repeats, best first (ties in any order). O(n), no sorting."""
    k = min(TOP_K, len(values))
    ok = (len(chosen) == k and bool(np.all((chosen >= 0) & (chosen < len(values))))
          and int(np.bincount(chosen, minlength=1).max(initial=0)) <= 1)
    picked = values[chosen] if ok else values[:0]
    ok = ok and bool(np.all(picked[:-1] >= picked[1:]))
    if ok and len(values) > k:
        rest = np.ones(len(values), dtype=bool)
        rest[chosen] = False
        ok = int(values[rest].max()) <= int(picked[-1])
    if not ok:
        raise SelfCheckError("argpartition/argsort")


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
        keys = np.sort((cells.astype(np.int64) << _CENTS_BITS) | cents)
        sorted_ok = bool(np.all(keys[:-1] <= keys[1:]))
        ordered = keys & ((1 << _CENTS_BITS) - 1)
        by_cell = keys >> _CENTS_BITS
    else:  # absurdly large amounts: two-key sort
        order = np.lexsort((cents, cells))
        ordered, by_cell = cents[order], cells[order]
        sorted_ok = bool(np.all((by_cell[:-1] < by_cell[1:])
                                | ((by_cell[:-1] == by_cell[1:]) & (ordered[:-1] <= ordered[1:]))))
    # A sort that loses or invents elements shows in the per-cell counts or the sum.
    if (not sorted_ok or int(ordered.sum()) != int(cents.sum())
            or not np.array_equal(np.bincount(by_cell.astype(np.int64), minlength=cell_count), counts)):
        raise SelfCheckError("sort")
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
        # The 10th largest: at least 10 values reach it, fewer than 10 exceed it.
        if not (np.count_nonzero(ratio >= tenth) >= TOP_K > np.count_nonzero(ratio > tenth)):
            raise SelfCheckError("partition")
        ranked = ranked[ratio >= tenth * (1 - 1e-9)]
    order = sorted(ranked.tolist(), key=lambda c: (-Fraction(int(medians[c]), int(empties[c])),
                                                   -int(fresh[c]), int(cell_codes[c])))
    return [Area(int(cell_codes[c]), int(empties[c]), int(medians[c])) for c in order[:TOP_K]]
