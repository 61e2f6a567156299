"""Q2, profitable areas (SPEC §4.2), recomputed from the window contents."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from heapq import nsmallest
from math import lcm


TOP_K = 10


@dataclass(frozen=True)
class Area:
    """One ranked cell. The median is kept in half-cents so it stays an integer."""

    cell: int  # cell number, grid.cell_number
    empty_taxis: int
    median_half_cents: int

    @property
    def profitability(self) -> Fraction:
        """median / empty, in dollars per empty taxi, exact."""
        return Fraction(self.median_half_cents, 200 * self.empty_taxis)


def median_half_cents(ordered: Sequence[int]) -> int:
    """Twice the median of sorted integer cents: odd count -> middle, even -> sum of
    the two middles."""
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return 2 * ordered[mid]
    return ordered[mid - 1] + ordered[mid]


def latest_trip_indexes(medallions: Sequence[str], start: int) -> list[int]:
    """Indexes (offset by ``start``) of the trips that are their taxi's latest.

    ``medallions`` covers the arrived trips of the empty-taxi window in seq order.
    Nothing later has arrived, so a taxi's last trip in this window is its latest
    valid trip overall, and a taxi whose latest trip is older is not in the window.
    """
    last = dict(zip(medallions, range(start, start + len(medallions))))
    return sorted(last.values())


def top_areas(profit_cells: Sequence[int], profit_cents: Sequence[int],
              profit_seqs: Sequence[int], empty_cells: Sequence[int],
              empty_seqs: Sequence[int]) -> list[Area]:
    """Top-10 cells: profitability desc, fresh desc, x asc, y asc (cell number asc).

    ``profit_*``: pickup cell, fare + tip and seq of the trips contributing to a
    profit (short window, fare and tip usable); ``empty_*``: dropoff cell and seq of
    the latest trips of empty taxis (long window). Both in seq order.
    """
    profits: dict[int, list[int]] = defaultdict(list)
    for cell, cents in zip(profit_cells, profit_cents):
        profits[cell].append(cents)
    empty = Counter(empty_cells)
    # seq order: the last value kept per cell is its largest seq
    profit_fresh = dict(zip(profit_cells, profit_seqs))
    empty_fresh = dict(zip(empty_cells, empty_seqs))
    # Ranked only with a defined profit and at least one empty taxi (no division by 0).
    ranked = [c for c in profits if empty[c] >= 1]
    medians = {c: median_half_cents(sorted(profits[c])) for c in ranked}
    # Exact comparison of median/empty: scale every ratio to one common denominator.
    common = lcm(*(empty[c] for c in ranked)) if ranked else 1
    keys = [(-medians[c] * (common // empty[c]), -max(profit_fresh[c], empty_fresh[c]), c)
            for c in ranked]
    return [Area(c, empty[c], medians[c]) for _, _, c in nsmallest(TOP_K, keys)]
