"""Recomputing one chunk of a query's timeline: every instant from scratch.

Runs inside Spark (``cogroup().applyInPandas``) on one chunk's instants and trips.
For each instant the window is cut out of the chunk's trips by binary search (they
are in seq order, so drop-off times are non-decreasing), the top-10 is recomputed from
those raw trips, and a line is produced when the ordered id list differs from the
previous instant's. The time of that recompute and formatting is the instant's
``recompute_ms``; for an emitted arrival line it is also the delay field.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from taxi_rsp.baseline.lines import format_delay, q1_body, q2_body
from taxi_rsp.baseline.parse import ROUTE_BASE, format_seconds
from taxi_rsp.baseline.topk import top_areas, top_routes

Evaluator = Callable[[int, int], tuple[tuple, Callable[[], list[str]]]]
RESULT_DDL = "stream int, time long, seq long, line string, recompute_ms double, delay_ms double"


@dataclass(frozen=True)
class QuerySpec:
    """A query of the baseline and its windows in seconds (Q2: profit, empty)."""

    name: str
    windows_s: tuple[int, ...]

    @property
    def longest_s(self) -> int:
        return max(self.windows_s)


class _Window:
    """The chunk's valid trips, cut into per-instant windows."""

    def __init__(self, trips: pd.DataFrame) -> None:
        trips = trips.sort_values("seq", kind="stable")
        self.trips = trips
        self.seq = trips["seq"].to_numpy(np.int64)
        self.dropoff = trips["dropoff"].to_numpy(np.int64)

    def bounds(self, time_s: int, seq: int, window_s: int) -> tuple[int, int]:
        """Index range of trips with time - W < dropoff <= time that have arrived."""
        hi = int(np.searchsorted(self.dropoff, time_s, side="right"))
        if seq:  # an arrival: later lines with the same drop-off have not arrived yet
            hi = min(hi, int(np.searchsorted(self.seq, seq, side="right")))
        lo = int(np.searchsorted(self.dropoff, time_s - window_s, side="right"))
        return lo, hi


def _dense(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary-encode the chunk's codes: (dense ids, code of each id)."""
    ids, uniques = pd.factorize(codes)
    return ids.astype(np.int64), np.asarray(uniques, dtype=np.int64)


def _q1_evaluator(window: _Window, spec: QuerySpec) -> Evaluator:
    codes = (window.trips["q1_pickup"].to_numpy(np.int64) * ROUTE_BASE
             + window.trips["q1_dropoff"].to_numpy(np.int64))
    routes, route_codes = _dense(codes)
    (width,) = spec.windows_s

    def evaluate(time_s: int, seq: int) -> tuple[tuple, Callable[[], list[str]]]:
        lo, hi = window.bounds(time_s, seq, width)
        top = route_codes[top_routes(routes[lo:hi], window.seq[lo:hi], len(route_codes))].tolist()
        return tuple(top), lambda: q1_body(top)
    return evaluate


def _q2_evaluator(window: _Window, spec: QuerySpec) -> Evaluator:
    trips = window.trips
    n = len(trips)
    cells, cell_codes = _dense(np.concatenate([trips["q2_pickup"].to_numpy(np.int64),
                                               trips["q2_dropoff"].to_numpy(np.int64)]))
    pickup, dropoff_cell = cells[:n], cells[n:]
    has_profit = trips["profit_cents"].notna().to_numpy()
    cents = trips["profit_cents"].fillna(-1).to_numpy(np.int64)
    taxis, taxi_codes = _dense(pd.factorize(trips["medallion"])[0])
    profit_s, empty_s = spec.windows_s

    def evaluate(time_s: int, seq: int) -> tuple[tuple, Callable[[], list[str]]]:
        p_lo, p_hi = window.bounds(time_s, seq, profit_s)
        e_lo, e_hi = window.bounds(time_s, seq, empty_s)
        mask = has_profit[p_lo:p_hi]
        areas = top_areas(pickup[p_lo:p_hi][mask], cents[p_lo:p_hi][mask], window.seq[p_lo:p_hi][mask],
                          taxis[e_lo:e_hi], dropoff_cell[e_lo:e_hi], window.seq[e_lo:e_hi],
                          cell_codes, len(taxi_codes))
        return tuple(a.cell for a in areas), lambda: q2_body(areas)
    return evaluate


EVALUATORS = {"q1": _q1_evaluator, "q2": _q2_evaluator}


def chunk_function(spec: QuerySpec) -> Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """The cogroup function of one query: (instants, trips) of a chunk -> one row per
    instant (``RESULT_DDL``; ``line`` is None when the top-10 list did not change)."""
    make_evaluator = EVALUATORS[spec.name]

    def run_chunk(instants: pd.DataFrame, trips: pd.DataFrame) -> pd.DataFrame:
        evaluate = make_evaluator(_Window(trips), spec)
        stream = int(instants["stream"].iloc[0])
        instants = instants.sort_values(["time", "seq"], kind="stable")
        previous: tuple = ()
        rows: list[tuple] = []
        for time_s, seq, pickup_text, dropoff_text, context in zip(
                instants["time"].tolist(), instants["seq"].tolist(), instants["pickup_text"].tolist(),
                instants["dropoff_text"].tolist(), instants["context"].tolist()):
            start = time.perf_counter_ns()
            ids, body = evaluate(time_s, seq)
            if context:  # the previous chunk's last instant: only its list matters
                previous = ids
                continue
            if ids == previous:
                rows.append((stream, time_s, seq, None, (time.perf_counter_ns() - start) / 1e6, None))
                continue
            previous = ids
            stamps = [pickup_text, dropoff_text] if seq else [format_seconds(time_s)] * 2
            text = ",".join(stamps + body())
            elapsed_ms = (time.perf_counter_ns() - start) / 1e6
            delay_ms = elapsed_ms if seq else None  # an expiry line has no delay (NULL)
            rows.append((stream, time_s, seq, f"{text},{format_delay(delay_ms)}", elapsed_ms, delay_ms))
        return pd.DataFrame(rows, columns=["stream", "time", "seq", "line", "recompute_ms", "delay_ms"])
    return run_chunk
