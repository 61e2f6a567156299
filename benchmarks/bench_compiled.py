"""Compiled plans against the reference operators, same input, same process (issue 15).

    .venv/bin/python -m pytest benchmarks/bench_compiled.py --benchmark-columns=min,rounds -s
    COMPILED_LINES=300000 .venv/bin/python -m pytest benchmarks/bench_compiled.py -s   # a longer slice

Each workload runs twice on the first ``COMPILED_LINES`` lines (default 100,000) of the
synthetic 20-day file (``taxi-rsp synth --days 20 --seed 0``, cached in ``cache/``):
with compiled plans and with ``Engine(compiled=False)``. ``extra_info`` records CPU
seconds (``time.process_time``) of the Feeder + engine loop, events/s and the
reference/compiled ratio; the two runs' outputs must be identical (as values, every
report in order). Workloads: the DEBS queries (Q1, Q2, Mixed), the window sweep, and
queries that are not Q1/Q2-shaped — an ungrouped Istream aggregate, a top-k over
string keys, a NOT EXISTS without aggregation, a join of two windows under a group,
an OPTIONAL. Figures:
docs/performance.md (its git history), section "Compiled plans".
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from benchmarks.conftest import synthetic_slice
from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register

LINES = int(os.environ.get("COMPILED_LINES", "100000"))
PREFIX = "PREFIX taxi: <http://debs2015.org/taxi#>\n"
TRIPS = "STREAM <http://debs2015.org/streams/trips>"

OTHER_QUERIES = {
    # per payment type over the last hour, reported as Istream/Dstream rows
    "fares_by_payment": PREFIX + f"""SELECT ?pay (AVG(?fare) AS ?avg) (MEDIAN(?tip) AS ?tips) (COUNT(*) AS ?n)
        WHERE {{ {TRIPS} [RANGE 60m] {{ ?t taxi:paymentType ?pay ; taxi:fareAmount ?fare ; taxi:tipAmount ?tip }}
                FILTER(?fare > 0) }} GROUP BY ?pay""",
    # the five busiest taxis of the last 20 minutes
    "busiest_taxis": PREFIX + f"""SELECT ?taxi ?n WHERE {{
          {{ SELECT ?taxi (COUNT(*) AS ?n) (MAX(?seq) AS ?last) WHERE {{
               {TRIPS} [RANGE 20m] {{ ?t taxi:medallion ?taxi ; taxi:seq ?seq }} }} GROUP BY ?taxi }}
        }} ORDER BY DESC(?n) DESC(?last) LIMIT 5""",
    # trips of the last 10 minutes whose taxi has not driven again since (no grouping)
    "last_trips": PREFIX + f"""SELECT ?t ?taxi WHERE {{
          {TRIPS} [RANGE 10m] {{ ?t taxi:medallion ?taxi ; taxi:seq ?s }}
          FILTER NOT EXISTS {{ {TRIPS} [RANGE 10m] {{ ?u taxi:medallion ?taxi ; taxi:seq ?s2 }} FILTER(?s2 > ?s) }}
        }}""",
    # taxis charging over $5 a mile in the last 10 minutes, counted against their tipped
    # trips of the last 30: a join of two windows whose FILTERs each read one side
    "pricey_tipped": PREFIX + f"""SELECT ?taxi ?pairs WHERE {{
          {{ SELECT ?taxi (COUNT(*) AS ?pairs) WHERE {{
               {TRIPS} [RANGE 10m] {{ ?t taxi:medallion ?taxi ; taxi:fareAmount ?fare ; taxi:tripDistance ?miles }}
               FILTER(?miles > 0) BIND(?fare / ?miles AS ?rate) FILTER(?rate > 5)
               {TRIPS} [RANGE 30m] {{ ?u taxi:medallion ?taxi ; taxi:tipAmount ?tip ; taxi:paymentType ?pay }}
               FILTER(?tip > 0) }} GROUP BY ?taxi }}
        }} ORDER BY DESC(?pairs) ASC(?taxi) LIMIT 5""",
    # long trips joined with the same taxi's tips, OPTIONAL
    "long_trips_tips": PREFIX + f"""SELECT ?t ?taxi ?tip WHERE {{
          {TRIPS} [RANGE 5m] {{ ?t taxi:medallion ?taxi ; taxi:tripTimeSecs ?secs }}
          FILTER(?secs > 1800)
          OPTIONAL {{ {TRIPS} [RANGE 5m] {{ ?t taxi:tipAmount ?tip }} FILTER(?tip > 0) }}
        }}""",
    # two GROUP BYs joined on their cells, ranked by a quotient of their aggregates (ranked pairs)
    "tip_rate_cells": (Path(__file__).parent / "queries" / "tip_rate_cells.cqels").read_text(),
}

WORKLOADS = {
    "q1": [("q1", None)],
    "q2": [("q2", None)],
    "mixed": [("q1", None), ("q2", None)],
    "q1_60": [("q1", {"window": "60m"})],
    "q1_120": [("q1", {"window": "120m"})],
    "q1_240": [("q1", {"window": "240m"})],
    "q2_60": [("q2", {"profit_window": "30m", "empty_window": "60m"})],
    **{name: [(name, None)] for name in OTHER_QUERIES},
}


@pytest.fixture(scope="module")
def slice_path(cache_dir: Path) -> Path:
    """The first LINES lines of the synthetic 20-day file (cached)."""
    return synthetic_slice(cache_dir, LINES)


def run(path: Path, queries: list[tuple[str, dict | None]], compiled: bool) -> tuple[float, int, dict]:
    """CPU seconds of the Feeder + engine loop, events, and every report as values."""
    engine = Engine(compiled=compiled)
    reports: dict[str, list] = {}
    for name, params in queries:
        text = OTHER_QUERIES.get(name) or resolve_query(name).text
        query = register(engine, text, name, params)
        seen = reports[name] = []
        query.listeners.append(lambda out, seen=seen: seen.append(
            (out.trigger.time, out.values(), out.values(out.deleted))))
    events = 0
    started = time.process_time()
    for event in Feeder(path, engine.dictionary):
        engine.process(event)
        events += 1
    return time.process_time() - started, events, reports


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_compiled_vs_reference(benchmark, slice_path: Path, workload: str) -> None:
    queries = WORKLOADS[workload]
    reference_cpu, events, expected = run(slice_path, queries, compiled=False)
    result: dict = {}

    def compiled_run() -> None:
        result["cpu"], _, result["reports"] = run(slice_path, queries, compiled=True)

    benchmark.pedantic(compiled_run, rounds=1, iterations=1)
    assert result["reports"] == expected, "compiled and reference outputs differ"
    assert any(expected.values()), "the workload reported nothing: a meaningless comparison"
    benchmark.extra_info.update(
        lines=LINES, events=events, compiled_cpu_s=round(result["cpu"], 2),
        reference_cpu_s=round(reference_cpu, 2), speedup=round(reference_cpu / result["cpu"], 2),
        compiled_events_per_s=round(events / result["cpu"]),
    )
    print(f"\n{workload}: compiled {result['cpu']:.2f} CPU s, reference {reference_cpu:.2f} CPU s "
          f"({reference_cpu / result['cpu']:.2f}x), {events:,} events")
