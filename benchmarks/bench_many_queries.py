"""Per-event cost against the number of registered queries (issue 10 §3).

    .venv/bin/python -m pytest benchmarks/bench_many_queries.py --benchmark-columns=mean,min,rounds
    .venv/bin/python -m pytest benchmarks/bench_many_queries.py -m slow -s   # 100 and 1,000 queries

N Q1-like queries are registered on one engine and the first ``EVENTS`` lines of the real
sample are replayed through it (Feeder included). Three families:

* ``identical``: the same Q1 text N times;
* ``filters``: Q1 with N different FILTER constants (the bound on the drop-off y cell),
  so the match and the four cell BINDs are shared and each query branches at its FILTER;
* ``windows``: Q1 with N different windows (1..N minutes): everything per event is
  shared, each query keeps its own buffer, group and top-k.

``shared=False`` gives each query a private pipeline trie (the cost without sharing).
CPU seconds per event (``time.process_time``) go to ``extra_info`` and, with ``-s``, to
the terminal; figures go into docs/performance.md (its git history), section "Many concurrent queries".
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register

SAMPLE = Path(__file__).resolve().parents[1] / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
Q1 = resolve_query("q1").text
EVENTS = 400


def family(kind: str, n: int) -> list[str]:
    """N query texts of one family (see the module docstring)."""
    if kind == "identical":
        return [Q1] * n
    if kind == "filters":
        # bounds 300, 299, ... (cycling above 150): distinct filters, same BINDs
        return [Q1.replace("?dy <= 300)", f"?dy <= {300 - i % 150})") for i in range(n)]
    if kind == "windows":
        return [Q1.replace("${window=30m}", f"{i + 1}m") for i in range(n)]
    raise ValueError(kind)


def replay(texts: list[str], shared: bool, events: int = EVENTS) -> tuple[float, float]:
    """(registration CPU s, replay CPU s per event) for the given query texts."""
    started = time.process_time()
    engine = Engine(share_pipelines=shared)
    for i, text in enumerate(texts):
        register(engine, text, f"q{i}")
    registered = time.process_time()
    for event in itertools.islice(Feeder(SAMPLE, engine.dictionary), events):
        engine.process(event)
    done = time.process_time()
    return registered - started, (done - registered) / events


def _run(benchmark, kind: str, n: int, shared: bool) -> None:
    texts = family(kind, n)
    result: dict[str, float] = {}

    def once() -> None:
        result["register_s"], result["per_event_s"] = replay(texts, shared)

    benchmark.pedantic(once, rounds=1, iterations=1)
    benchmark.extra_info.update(result, queries=n, family=kind, shared=shared, events=EVENTS)
    print(f"\n{kind:9} n={n:5} shared={shared!s:5} register {result['register_s']:7.2f} CPU s, "
          f"{result['per_event_s'] * 1e3:9.3f} CPU ms/event, "
          f"{result['per_event_s'] * 1e6 / n:8.1f} CPU us/event/query")
    assert result["per_event_s"] > 0


@pytest.mark.parametrize("n", [1, 10])
@pytest.mark.parametrize("kind", ["identical", "filters", "windows"])
def test_many_queries(benchmark, kind: str, n: int) -> None:
    _run(benchmark, kind, n, shared=True)


@pytest.mark.slow
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("n", [100, 1000])
@pytest.mark.parametrize("kind", ["identical", "filters", "windows"])
def test_many_queries_scale(benchmark, kind: str, n: int, shared: bool) -> None:
    _run(benchmark, kind, n, shared)


@pytest.mark.parametrize("n", [10])
def test_unshared_reference(benchmark, n: int) -> None:
    _run(benchmark, "identical", n, shared=False)
