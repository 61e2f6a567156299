"""Events per second of the engine on the real 10,004-line sample, and of the Feeder alone.

    .venv/bin/python -m pytest benchmarks/bench_engine.py --benchmark-columns=mean,min,max,rounds

Each benchmark replays the whole sample; events/s = 10,004 / mean seconds. Figures go
into docs/performance.md (its git history, section "Engine on the real sample").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register

SAMPLE = Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def feed_only() -> int:
    return sum(1 for _ in Feeder(SAMPLE, Dictionary()))


def replay(queries: tuple[str, ...]) -> int:
    engine = Engine()
    for name in queries:
        source = resolve_query(name)
        register(engine, source.text, name)
    count = 0
    for event in Feeder(SAMPLE, engine.dictionary):
        engine.process(event)
        count += 1
    return count


def test_feeder_alone(benchmark) -> None:
    assert benchmark(feed_only) == 10_004


@pytest.mark.parametrize("queries", [("q1",), ("q2",), ("q1", "q2")], ids=["q1", "q2", "mixed"])
def test_engine_replay(benchmark, queries) -> None:
    assert benchmark.pedantic(replay, args=(queries,), rounds=3, iterations=1) == 10_004
