"""The report's maps: which run's answers, which instants, and their captions.

The maps use the first run of the Mixed workload (Q1 and Q2 on one stream; the engine's
run, the baseline's when there is no engine), or the Individual Q1 / Q2 runs when Mixed
was not run. They are returned as (name, title, caption, PNG) for ``verify.report``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taxi_rsp.viz.answers import at, read_answers
from taxi_rsp.viz.density import busy_extent, pickup_density
from taxi_rsp.viz.instants import busiest_minute, route_counts, steps

COLOURS = ("Colours give the rank: 1 dark purple through 10 orange (plasma scale); the grey background is the "
           "number of pickups per 250 m cell over the whole input (log scale), faint blue lines the 500 m grid.")


@dataclass(frozen=True)
class MapFigure:
    name: str
    title: str
    caption: str
    png: bytes


def _folder(pairs: Sequence, query: str) -> tuple[Path, int] | None:
    """The run folder holding ``query``'s answers, and its Q1 window (minutes)."""
    ranked = sorted(pairs, key=lambda p: p.workload.name != "mixed")
    for pair in ranked:
        if query in pair.workload.queries:
            run = pair.engine or pair.baseline
            return run.folder, pair.workload.q1_window
    return None


def map_figures(pairs: Sequence, data_file: Path, footer: str, chosen: str | None = None) -> list[MapFigure]:
    """Q1 at ``chosen`` (``YYYY-MM-DD HH:MM:SS``; default: the end of the busiest minute),
    Q2 at the same instant, and the strip across the run."""
    q1_at, q2_at = _folder(pairs, "q1"), _folder(pairs, "q2")
    q1 = read_answers(q1_at[0] / "q1.csv", "q1") if q1_at else []
    q2 = read_answers(q2_at[0] / "q2.csv", "q2") if q2_at else []
    if not q1 and not q2:
        return []
    window = q1_at[1] if q1_at else 30
    density = pickup_density(data_file)
    extent = busy_extent(density)
    minute = busiest_minute(data_file)
    if chosen is not None:
        instant, why = chosen, f"the chosen instant {chosen} (--map-at)"
    elif minute is not None:
        instant, why = f"{minute}:59", f"the end of the busiest minute of the input ({minute}, the most drop-offs)"
    else:
        instant, why = max(a.time for a in [*q1, *q2]), "the end of the run"
    times = sorted({a.time for a in [*q1, *q2]})
    strip_at = steps(times[0], times[-1])
    counts = route_counts(data_file, [instant, *strip_at, *(a.time for a in [at(q1, instant)] if a)], window)
    from taxi_rsp.viz import maps  # matplotlib: loaded only when a report draws

    figures = []
    shown = at(q1, instant)
    if shown is not None:
        title = f"Q1: top-10 routes at {shown.time} (q1.csv line {shown.line:,}, the last at or before {instant})"
        figures.append(MapFigure(
            "map_q1", "Map: Q1 frequent routes",
            f"The top-10 routes of q1.csv's last line at or before {why}: line {shown.line:,}, triggered "
            f"{'by expiry' if shown.expiry else 'by an arriving trip'} at {shown.time}. Arrows run from the "
            f"start cell's centre to the end cell's centre; a ring is a route that starts and ends in one "
            f"500 m cell. Width: the route's trips in the {window}-minute window ending then (counted from "
            f"the input; listed top left). {COLOURS}",
            maps.q1_map(shown, counts[shown.time], density, extent, title, footer)))
    shown2 = at(q2, instant)
    if shown2 is not None:
        figures.append(MapFigure(
            "map_q2", "Map: Q2 profitable areas",
            f"The top-10 cells of q2.csv's last line at or before the same instant: line {shown2.line:,} at "
            f"{shown2.time}. Squares are the exact 250 m cells; the table lists each cell's median profit "
            f"(fare + tip over the trips picked up there in the profit window), its empty taxis and "
            f"profitability = profit / empty taxis, as written in q2.csv. {COLOURS}",
            maps.q2_map(shown2, density, extent, f"Q2: top-10 profitable cells at {shown2.time} "
                        f"(q2.csv line {shown2.line:,})", footer)))
    panels = [(t, at(q1, t), at(q2, t), counts[t]) for t in strip_at]
    figures.append(MapFigure(
        "map_strip", "Map: the answers across the run",
        f"Small multiples at {len(panels)} instants of event time ({_step_words(strip_at)}): in each, Q1's "
        f"top-10 routes (arrows, width by trips) and Q2's top-10 cells (squares) of the last lines written at "
        f"or before that instant. {COLOURS}",
        maps.strip(panels, density, extent, footer)))
    return figures


def _step_words(instants: list[str]) -> str:
    if len(instants) < 2:
        return "one instant"
    from datetime import datetime

    a, b = (datetime.strptime(t, "%Y-%m-%d %H:%M:%S") for t in instants[:2])
    minutes = round((b - a).total_seconds() / 60)
    every = f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"
    return f"every {every} of event time, {instants[0]} to {instants[-1]}"
