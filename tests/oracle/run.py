"""The oracle run: read, evaluate both queries at every instant, emit on change."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .clock import evaluation_instants
from .output import q1_line, q2_line
from .q1 import top_routes
from .q2 import latest_trip_indexes, top_areas
from .records import Trip, read_file
from .window import SubStream

REJECT_REASONS = ("field_count", "bad_medallion", "bad_timestamp",
                  "pickup_after_dropoff", "bad_coordinate", "out_of_order")
MINUTE = 60


@dataclass
class OracleResult:
    """Expected outputs and run-summary counts of one input file."""

    q1: list[str] = field(default_factory=list)
    q2: list[str] = field(default_factory=list)
    rejects: list[tuple[int, str, str]] = field(default_factory=list)
    lines_read: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    outliers: dict[str, int] = field(default_factory=dict)
    profit_excluded: int = 0


def run_oracle(path: str | Path, q1_window_min: int = 30,
               q2_windows_min: tuple[int, int] = (15, 30),
               queries: Collection[str] = ("q1", "q2")) -> OracleResult:
    """Recompute Q1 and Q2 from SPEC for the file at ``path``.

    ``q2_windows_min`` is (profit window, empty-taxi window). ``queries`` selects
    which outputs to compute; the counts are always filled in.
    """
    trips, rejects, lines_read = read_file(path)
    reasons = Counter(r.reason for r in rejects)
    result = OracleResult(
        rejects=[(r.line_no, r.reason, r.raw_line) for r in rejects],
        lines_read=lines_read,
        accepted=len(trips),
        rejected={reason: reasons[reason] for reason in REJECT_REASONS},
        outliers={"q1": sum(t.q1_route is None for t in trips),
                  "q2": sum(t.q2_pickup is None for t in trips)},
        # counted over every accepted line, whether or not it is valid for Q2
        profit_excluded=sum(t.profit_cents is None for t in trips),
    )
    if "q1" in queries:
        result.q1 = run_q1(trips, q1_window_min * MINUTE)
    if "q2" in queries:
        profit_s, empty_s = (w * MINUTE for w in q2_windows_min)
        result.q2 = run_q2(trips, profit_s, empty_s)
    return result


def run_q1(trips: Sequence[Trip], window_s: int) -> list[str]:
    """Q1 output lines: one per instant whose ordered top-10 differs from the last."""
    def is_valid(t: Trip) -> bool:
        return t.q1_route is not None

    stream = SubStream(trips, is_valid)
    routes, seqs = stream.column("q1_route"), stream.column("seq")
    lines: list[str] = []
    last: list[str] = []  # before the first line the last list is empty
    for instant in evaluation_instants(trips, is_valid, [window_s]):
        window = stream.bounds(instant, window_s)
        top = top_routes(routes[window], seqs[window])
        if top != last:
            lines.append(q1_line(instant, top))
            last = top
    return lines


def run_q2(trips: Sequence[Trip], profit_s: int, empty_s: int) -> list[str]:
    """Q2 output lines: one per instant whose ordered top-10 cell list changed."""
    def is_valid(t: Trip) -> bool:
        return t.q2_pickup is not None

    stream = SubStream(trips, is_valid)
    medallions, dropoffs, seqs = (stream.column(n) for n in ("medallion", "q2_dropoff", "seq"))
    # trips contributing to a profit: valid, with usable fare and tip
    paying = SubStream(trips, lambda t: is_valid(t) and t.profit_cents is not None)
    pickups, cents, paying_seqs = (paying.column(n) for n in ("q2_pickup", "profit_cents", "seq"))
    lines: list[str] = []
    last: list[int] = []
    for instant in evaluation_instants(trips, is_valid, [profit_s, empty_s]):
        profit = paying.bounds(instant, profit_s)
        window = stream.bounds(instant, empty_s)
        latest = latest_trip_indexes(medallions[window], window.start)
        areas = top_areas(pickups[profit], cents[profit], paying_seqs[profit],
                          list(map(dropoffs.__getitem__, latest)), list(map(seqs.__getitem__, latest)))
        cells = [a.cell for a in areas]
        if cells != last:
            lines.append(q2_line(instant, areas))
            last = cells
    return lines
