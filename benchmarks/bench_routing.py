"""Adaptive routing vs a fixed probe order vs binary joins on a skewed, shifting stream.

    .venv/bin/python -m pytest benchmarks/bench_routing.py --benchmark-columns=mean,min,max,rounds
    .venv/bin/python -m pytest benchmarks/bench_routing.py --benchmark-timer=time.process_time

The query joins three windows over one stream (who is in a room that hosts a topic they
like). The stream alternates between two regimes every 20 minutes: people who like
many topics while rooms host one, then the reverse. The plan's order probes the
"likes" window first, which is right in one regime and ~HEAVY× the probes in the
other; the adaptive router follows the shift. The "steady" variant stays in the regime
the plan's order suits, to show the router's overhead. Figures: docs/performance.md, section
"Adaptive routing".
"""

from __future__ import annotations


import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI, DateTime
from taxi_rsp.planner import register

EX = "http://example.org/"
QUERY = """PREFIX ex: <http://example.org/>
SELECT ?p ?loc ?topic WHERE {
  STREAM ex:s [RANGE 10m] { ?p ex:at ?loc }
  STREAM ex:s [RANGE 10m] { ?p ex:likes ?topic }
  STREAM ex:s [RANGE 10m] { ?loc ex:hosts ?topic }
}"""
PEOPLE, ROOMS, TOPICS, HEAVY = 40, 40, 200, 100
PHASES, DETECTIONS = 4, 1500


def workload(engine: Engine, shifting: bool = True) -> list[GraphEvent]:
    """Events of the shifting stream, dictionary-encoded for ``engine``; with
    ``shifting`` False every phase is the regime the plan's order suits (the
    adaptive router can only add overhead there)."""
    encode = engine.dictionary.encode
    stream, at, likes, hosts = (encode(IRI(EX + n)) for n in ("s", "at", "likes", "hosts"))
    node = [encode(IRI(f"{EX}n{i}")) for i in range(max(PEOPLE, ROOMS, TOPICS))]
    room = [encode(IRI(f"{EX}r{i}")) for i in range(ROOMS)]
    start = DateTime.parse("2013-01-01T00:00:00")
    events: list[GraphEvent] = []

    def add(minute: float, triples: list[tuple[int, int, int]]) -> None:
        events.append(GraphEvent(len(events) + 1, start + int(minute * 60_000), tuple(triples), stream))

    for phase in range(PHASES):
        t0 = phase * 20
        people_heavy = shifting and phase % 2 == 0
        n_likes, n_hosts = (HEAVY, 1) if people_heavy else (1, HEAVY)
        for p in range(PEOPLE):
            add(t0, [(node[p], likes, node[(p * 7 + k) % TOPICS]) for k in range(n_likes)])
        for r in range(ROOMS):
            add(t0, [(room[r], hosts, node[(r * 3 + k) % TOPICS]) for k in range(n_hosts)])
        for d in range(DETECTIONS):
            add(t0 + 9.5 * d / DETECTIONS, [(node[(d * 13) % PEOPLE], at, room[(d * 7) % ROOMS])])
    return events


def prepared(mode: str, shifting: bool = True) -> tuple[tuple[Engine, list[GraphEvent], list[int]], dict]:
    """A registered query and its events (outside the timed part); the list collects
    the number of result rows."""
    engine = Engine(join_routing=mode)
    query = register(engine, QUERY, "shift")
    rows: list[int] = []
    query.listeners.append(lambda output: rows.append(len(output.rows)))
    return (engine, workload(engine, shifting), rows), {}


def replay(engine: Engine, events: list[GraphEvent], rows: list[int]) -> int:
    for event in events:
        engine.process(event)
    return sum(rows)


def run(mode: str, shifting: bool = True) -> int:
    """Prepare and replay once (for scripts); returns the number of result rows."""
    args, _ = prepared(mode, shifting)
    return replay(*args)


RESULTS: dict[tuple[str, bool], int] = {}


@pytest.mark.parametrize("shifting", [True, False], ids=["shifting", "steady"])
@pytest.mark.parametrize("mode", ["adaptive", "fixed", "binary"])
def test_routing(benchmark, mode: str, shifting: bool) -> None:
    rows = benchmark.pedantic(replay, setup=lambda: prepared(mode, shifting), rounds=3, iterations=1)
    RESULTS[mode, shifting] = rows
    assert rows > 0
    same = {n for (_, s), n in RESULTS.items() if s == shifting}
    assert len(same) == 1, RESULTS  # every mode finds the same rows
