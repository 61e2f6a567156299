"""A window entry is one flat tuple per event and keeps an event's lone row itself, not a list of one
(:func:`taxi_rsp.engine.ops.window_kinds.held_rows`): events binding one, two or no rows,
seen by one consumer or by twins sharing the window, leave it exactly as they came."""

from __future__ import annotations

import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.ops.window import WindowScan
from taxi_rsp.planner import register

from engine_helpers import Stream, star_engine

ONE_CONSUMER = "SELECT ?s ?v WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:v ?v } }"
# the NOT EXISTS block repeats the window and its pattern: one buffer serves both (twins)
TWINS = """SELECT ?s ?v WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:v ?v }
                                FILTER NOT EXISTS { STREAM ex:stream [RANGE 2m] { ?t ex:v ?w }
                                                    FILTER(?w > ?v) } }"""


def _run(query: str, compiled: bool) -> tuple[list, list[int], list[WindowScan]]:
    engine = Engine(compiled=compiled)
    register(engine, "PREFIX ex: <http://example.org/> " + query, "q")
    scans = [op for op in engine.queries[0].physical.operators if isinstance(op, WindowScan)]
    stream = Stream(engine)
    held = []
    events = [
        (0, [("ex:a", "ex:v", 1)]),  # one row
        (0.5, [("ex:b", "ex:v", 5), ("ex:c", "ex:v", 3)]),  # two rows from one event
        (1, [("ex:d", "ex:note", 0)]),  # no row
        (1.5, [("ex:e", "ex:v", 2)]),
        (2.2, [("ex:f", "ex:note", 0)]),  # ex:a leaves (RANGE 2m: in while t > now - 2m)
        (2.7, [("ex:g", "ex:note", 0)]),  # ex:b and ex:c leave together
        (5, [("ex:h", "ex:note", 0)]),  # everything has left
    ]
    for minute, triples in events:
        stream.send(minute, *triples)
        held.append(sum(scan.state_size() for scan in scans))  # an absorbed twin holds nothing itself
    return stream.values(), held, scans


@pytest.mark.parametrize("query", [ONE_CONSUMER, TWINS], ids=["one consumer", "twins"])
def test_lone_and_several_rows_per_event_leave_the_window_as_they_came(query: str) -> None:
    compiled, held, scans = _run(query, compiled=True)
    reference, reference_held, _ = _run(query, compiled=False)
    assert compiled == reference
    assert held == reference_held
    absorbed = {id(twin) for scan in scans for twin in scan._outputs[1:]}
    buffers = [scan for scan in scans if id(scan) not in absorbed]
    consumers = sum(len(scan._outputs) for scan in buffers)
    if query is TWINS:
        assert [len(scan._outputs) for scan in buffers] == [2]  # one buffer, an item per twin in each entry
    assert held == [n * consumers for n in (1, 3, 3, 4, 3, 1, 0)]
    last = compiled[-1][2]
    assert last == []  # nothing left in the window, nothing reported


def test_a_lone_row_is_kept_without_a_list() -> None:
    engine = Engine()
    register(engine, "PREFIX ex: <http://example.org/> " + ONE_CONSUMER, "q")
    scan = next(op for op in engine.queries[0].physical.operators if isinstance(op, WindowScan))
    stream = Stream(engine)
    stream.send(0, ("ex:a", "ex:v", 1))
    stream.send(0.5, ("ex:b", "ex:v", 5), ("ex:c", "ex:v", 3))
    (_, lone), (_, pair) = scan._entries
    assert type(lone) is tuple and type(pair) is list and len(pair) == 2


def test_an_event_is_one_flat_entry_for_one_consumer_and_for_twins() -> None:
    """(expiry, rows of the first output, rows of the second...): no tuple or list of
    the outputs' rows per event, on top of the entry (held for the whole window)."""
    for query, outputs in ((ONE_CONSUMER, 1), (TWINS, 2)):
        engine = Engine()
        register(engine, "PREFIX ex: <http://example.org/> " + query, "q")
        scan = next(op for op in engine.queries[0].physical.operators if isinstance(op, WindowScan))
        Stream(engine).send(0, ("ex:a", "ex:v", 1))
        (entry,) = scan._entries
        assert len(entry) == 1 + outputs and all(type(held) is tuple for held in entry[1:])


GROUPED = ("SELECT ?k (COUNT(*) AS ?n) (MAX(?v) AS ?top) "
           "WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:k ?k ; ex:v ?v } } GROUP BY ?k")


def test_a_compiled_aggregate_entry_holds_its_group_not_the_event_s_row_or_key() -> None:
    """(expiry, group, the aggregates' compiled arguments), in the window's table: the
    row the match built and the key tuple that found the group are freed with the event,
    not a window range later; a hand-over to the reference (a string where numbers were seen) replays the
    entries from these values alone, with the reference's answers."""
    def run(compiled: bool) -> tuple[list, Engine]:
        engine = star_engine(compiled=compiled)  # a window aggregate over a star matched per event
        register(engine, "PREFIX ex: <http://example.org/> " + GROUPED, "q")
        stream = Stream(engine)
        stream.send(0, ("ex:a", "ex:k", "ex:x"), ("ex:a", "ex:v", 4))
        stream.send(0.5, ("ex:b", "ex:k", "ex:x"), ("ex:b", "ex:v", 7))
        if compiled:
            (aggregate,) = engine.queries[0].physical.windows
            assert type(aggregate).__name__ == "CompiledAggregate" and aggregate.mode == "compiled"
            first, second = aggregate._table.entries()  # (expiry, key, compiled arguments)
            assert len(first) == 3 and first[1] is second[1]  # one key tuple per group
            assert all(type(part) is int for part in first[2])
        stream.send(1, ("ex:c", "ex:k", "ex:x"), ("ex:c", "ex:v", "seven"))  # hands over
        stream.send(2.2, ("ex:d", "ex:k", "ex:y"), ("ex:d", "ex:v", 1))  # ex:a leaves
        stream.send(2.7, ("ex:e", "ex:k", "ex:y"), ("ex:e", "ex:v", 2))  # ex:b leaves
        stream.send(3.2, ("ex:f", "ex:k", "ex:y"), ("ex:f", "ex:v", 3))  # ex:c leaves
        return stream.values(), engine

    compiled, engine = run(compiled=True)
    assert engine.queries[0].physical.windows[0].mode == "reference"
    assert compiled == run(compiled=False)[0]
