"""The fidelity table: a file's statistics next to the real sample's, with tolerances.

Each row states its tolerance (relative or absolute) so a reader can judge the match
and tests can assert it. Rows whose "real" value comes from the sample are computed
by the same code on both files (:mod:`.profile`); the 20-day rows compare with the
documented figures of the official file, because the sample holds under an hour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from taxi_rsp.data.calibration import SAMPLE_PATH
from taxi_rsp.data.file_profile import profile_file, sample_window_end
from taxi_rsp.data.profile import Profile, window_stats

# (key, label, relative?, tolerance): relative tolerances are fractions of the real value.
WINDOW_ROWS: tuple[tuple[str, str, bool, float], ...] = (
    ("rate_steady", "drop-offs per minute, last 30 min", True, 0.10),
    ("rate_ramp", "drop-offs per minute, midnight ramp 00:02-00:20", True, 0.15),
    ("routes", "distinct Q1 routes, last 30 min", True, 0.10),
    ("q1_cells", "distinct Q1 cells, last 30 min", True, 0.10),
    ("q2_cells", "distinct Q2 cells, last 30 min", True, 0.10),
    ("top1", "count of the top Q1 route, last 30 min", False, 4.0),
    ("top10", "count of the 10th Q1 route, last 30 min", False, 2.0),
    ("trips_per_taxi", "trips per taxi in the window", True, 0.10),
    ("gap_p50", "minutes drop-off -> same taxi's next pickup, p50", False, 1.0),
    ("gap_p90", "minutes drop-off -> same taxi's next pickup, p90", False, 3.0),
    ("move_p50", "metres drop-off -> same taxi's next pickup, p50", True, 0.35),
    ("trip_minutes", "mean trip minutes", True, 0.10),
    ("fare_tip_p10", "fare + tip $, p10", True, 0.10),
    ("fare_tip_p50", "fare + tip $, p50", True, 0.10),
    ("fare_tip_p90", "fare + tip $, p90", True, 0.10),
    ("fare_tip_p99", "fare + tip $, p99", True, 0.15),
    ("card_pct", "card payments %", False, 3.0),
    ("card_tipped_pct", "card payments with a tip %", False, 3.0),
    ("outlier_pct", "trips outside the Q1 grid %", False, 0.6),
    ("zero_pct", "trips with a zero coordinate %", False, 0.6),
)

# Figures of the official 20-day file (PROVENANCE.md, the DEBS 2015 call): value, tolerance.
TWENTY_DAY_FACTS = {"days": (20, 0), "trips_per_day": (100_000, 0.10), "taxis": (13_000, 0.10)}
QUIET_HOURS = range(3, 7)  # "quiet ≈5 am"
PEAK_HOURS = range(17, 23)  # "peak evening"


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    label: str
    real: str
    synthetic: str
    tolerance: str
    ok: bool | None  # None: informational


def _fmt(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.2f}"


def _within(real: float, synthetic: float, relative: bool, tolerance: float) -> bool:
    if math.isnan(real) or math.isnan(synthetic):
        return False
    allowed = abs(real) * tolerance if relative else tolerance
    return abs(synthetic - real) <= allowed + 1e-9


def compare(synthetic: Path, sample: Path = SAMPLE_PATH) -> list[Row]:
    """Profile both files and build the side-by-side rows."""
    end = sample_window_end(sample)
    real_stats = window_stats(profile_file(sample, end))
    synth = profile_file(synthetic, end)
    synth_stats = window_stats(synth)
    rows = []
    for key, label, relative, tol in WINDOW_ROWS:
        shown = f"±{tol:.0%}" if relative else f"±{_fmt(tol)}"
        rows.append(Row(label, _fmt(real_stats[key]), _fmt(synth_stats[key]), shown,
                        _within(real_stats[key], synth_stats[key], relative, tol)))
    rows.extend(_file_rows(synth, profile_file(sample, end)))
    return rows


def _file_rows(synth: Profile, real: Profile) -> list[Row]:
    days = len(synth.pickup_dates)  # drop-offs of the last evening spill past midnight
    full_days = [synth.per_day[d] for d in sorted(synth.days)][: TWENTY_DAY_FACTS["days"][0]]
    per_day = float(np.mean(full_days)) if full_days else math.nan
    twenty = days >= TWENTY_DAY_FACTS["days"][0]
    rows = [
        Row("whole-minute timestamps %", _fmt(100 * real.whole_minute / max(real.lines, 1)),
            _fmt(100 * synth.whole_minute / max(synth.lines - synth.malformed - synth.out_of_order, 1)), "±0.5",
            abs(real.whole_minute / max(real.lines, 1) - synth.whole_minute
                / max(synth.lines - synth.malformed - synth.out_of_order, 1)) <= 0.005),
        Row("days with pickups", "20", str(days), "20" if twenty else "(not a 20-day file)",
            days == 20 if twenty else None),
        Row("trips per day", "≈100,000", _fmt(per_day), "±10%",
            _within(100_000, per_day, True, 0.10) if twenty else None),
        Row("taxis (distinct medallions)", "≈13,000", _fmt(len(synth.medallions)), "±10%",
            _within(13_000, len(synth.medallions), True, 0.10) if twenty else None),
    ]
    if synth.per_hour:
        quiet = min(range(24), key=lambda h: synth.per_hour[h])
        peak = max(range(24), key=lambda h: synth.per_hour[h])
        rows.append(Row("quietest drop-off hour", "≈5", str(quiet), "3-6", quiet in QUIET_HOURS if twenty else None))
        rows.append(Row("busiest drop-off hour", "evening", str(peak), "17-22", peak in PEAK_HOURS if twenty else None))
    rows.append(Row("lines", f"{real.lines:,}", f"{synth.lines:,}", "", None))
    rows.append(Row("malformed lines (fields, medallion, timestamps, pickup > drop-off)", str(real.malformed), f"{synth.malformed:,}", "", None))
    rows.append(Row("lines out of drop-off order", str(real.out_of_order), f"{synth.out_of_order:,}", "", None))
    return rows


def format_table(rows: list[Row]) -> str:
    """A plain-text table, one row per statistic, with a pass/fail column."""
    header = ("statistic", "real sample", "synthetic", "tolerance", "ok")
    body = [(r.label, r.real, r.synthetic, r.tolerance, "-" if r.ok is None else ("yes" if r.ok else "NO")) for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(5)]

    def render(line: tuple[str, ...]) -> str:
        return "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))
        ).rstrip()

    return "\n".join([render(header), render(tuple("-" * w for w in widths)), *map(render, body)])
