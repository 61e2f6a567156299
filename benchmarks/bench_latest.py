"""The latest row per key on and off (``EngineConfig(latest_per_key=…)``: with a GROUP BY
right above it, the fused window aggregate; off, the anti-join over two windows), same
input, same process, alternated (issue 50):

    .venv/bin/python -m pytest benchmarks/bench_latest.py --benchmark-columns=min,rounds -s
    LATEST_LINES=300000 LATEST_ROUNDS=3 .venv/bin/python -m pytest benchmarks/bench_latest.py -s

Each workload runs ``LATEST_ROUNDS`` times each way (default 2; on, off, on, off …) on the
first ``LATEST_LINES`` lines (default 100,000) of the synthetic 20-day file
(``taxi-rsp synth --days 20 --seed 0``, cached in ``cache/``); ``extra_info`` records the
fastest CPU seconds (``time.process_time``) of the Feeder + engine loop each way and
their ratio, and every run's reports must be identical. Workloads: Q2 and Mixed (the
DEBS empty taxis), ``benchmarks/queries/latest_tipped.cqels`` (a user query of the
shape, grouped), a plain NOT EXISTS of a later trip of the same taxi (no grouping), and
``top_empty_cells`` (control: its inner block is a weaker pattern, not planned so).
Figures: docs/performance.md.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
from pathlib import Path

import pytest

from benchmarks.conftest import synthetic_slice
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.feeder import Feeder
from taxi_rsp.planner import register
from taxi_rsp.runner import resolve_query

LINES = int(os.environ.get("LATEST_LINES", "100000"))
ROUNDS = int(os.environ.get("LATEST_ROUNDS", "2"))
QUERIES = Path(__file__).parent / "queries"
LAST_TRIPS = """PREFIX taxi: <http://debs2015.org/taxi#>
SELECT ?t ?taxi WHERE {
  STREAM <http://debs2015.org/streams/trips> [RANGE 10m] { ?t taxi:medallion ?taxi ; taxi:seq ?s }
  FILTER NOT EXISTS { STREAM <http://debs2015.org/streams/trips> [RANGE 10m] { ?u taxi:medallion ?taxi ; taxi:seq ?s2 }
                      FILTER(?s2 > ?s) }
}"""

WORKLOADS: dict[str, list[tuple[str, str]]] = {
    "q2": [("q2", resolve_query("q2").text)],
    "mixed": [("q1", resolve_query("q1").text), ("q2", resolve_query("q2").text)],
    "latest_tipped": [("latest_tipped", (QUERIES / "latest_tipped.cqels").read_text())],
    "last_trips": [("last_trips", LAST_TRIPS)],
    "top_empty_cells": [("top_empty_cells", (QUERIES / "top_empty_cells.cqels").read_text())],
}


@pytest.fixture(scope="module")
def slice_path(cache_dir: Path) -> Path:
    """The first LINES lines of the synthetic 20-day file (cached)."""
    return synthetic_slice(cache_dir, LINES)


def run(path: Path, queries: list[tuple[str, str]], latest: bool) -> tuple[float, dict, str]:
    """CPU seconds of the Feeder + engine loop, every report as values, and the plans."""
    engine = Engine(config=EngineConfig(latest_per_key=latest))
    reports: dict[str, list] = {}
    plans = []
    for name, text in queries:
        query = register(engine, text, name)
        plans.append(str(query.physical.tree))
        seen = reports[name] = []
        query.listeners.append(lambda out, seen=seen: seen.append(
            (out.trigger.time, out.values(), out.values(out.deleted))))
    started = time.process_time()
    for event in Feeder(path, engine.dictionary):
        engine.process(event)
    return time.process_time() - started, reports, "\n".join(plans)


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_latest_per_key_on_and_off(benchmark, slice_path: Path, workload: str) -> None:
    queries = WORKLOADS[workload]
    cpu: dict[bool, list[float]] = {True: [], False: []}
    digests: set[str] = set()  # of every run's reports
    reported: dict[bool, bool] = {}
    plans: dict[bool, str] = {}

    def alternated() -> None:
        # Only a digest of each run's reports outlives it, and the heap is collected
        # before each: no run pays for objects another left (the garbage collector walks
        # them), which favoured whichever side ran first with an empty heap.
        for _ in range(ROUNDS):
            for latest in (True, False):
                gc.collect()
                seconds, outputs, plans[latest] = run(slice_path, queries, latest)
                cpu[latest].append(seconds)
                digests.add(hashlib.sha256(repr(outputs).encode()).hexdigest())
                reported[latest] = any(outputs.values())
                del outputs

    benchmark.pedantic(alternated, rounds=1, iterations=1)
    assert len(digests) == 1, "the latest row per key and the anti-join report differently"
    assert reported[True], "the workload reported nothing: a meaningless comparison"
    marks = ("LatestPerKey", "over the latest row per")  # the operator, or fused into the GROUP BY above
    planned = any(mark in plans[True] for mark in marks)
    assert planned == (workload != "top_empty_cells") and not any(mark in plans[False] for mark in marks)
    on, off = min(cpu[True]), min(cpu[False])
    benchmark.extra_info.update(lines=LINES, rounds=ROUNDS, on_cpu_s=round(on, 3), off_cpu_s=round(off, 3),
                                on_over_off=round(on / off, 3), planned=planned)
    print(f"\n{workload}: latest per key {on:.2f} CPU s, anti-join {off:.2f} CPU s ({on / off:.2f}), "
          f"{'planned' if planned else 'not planned'}; every round: on {cpu[True]}, off {cpu[False]}")
