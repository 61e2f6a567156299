"""Expired state is freed after an event's outputs are delivered, and always freed.

The rows a window drops stay referenced from :data:`taxi_rsp.engine.reclaim.retired`
while the queries evaluate the event (so freeing them is in no output line's delay),
and the engine empties it once every query has evaluated the event.
"""

from __future__ import annotations

import sys
from collections import deque

import pytest

from taxi_rsp.engine import reclaim
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner import register

from engine_helpers import Stream, star_engine

GROUPED = """SELECT ?g (COUNT(?s) AS ?n) (MEDIAN(?v) AS ?med)
             WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:group ?g ; ex:v ?v } }
             GROUP BY ?g ORDER BY DESC(?n) ?g LIMIT 3"""
UNGROUPED = "SELECT ?s ?v WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:group ?g ; ex:v ?v } }"
CORRELATED = """SELECT ?g (COUNT(?s) AS ?n)
                WHERE { STREAM ex:stream [RANGE 2m] { ?s ex:group ?g ; ex:v ?v }
                        FILTER NOT EXISTS { STREAM ex:stream [RANGE 2m] { ?t ex:group ?g ; ex:v ?v2 }
                                            FILTER(?v2 > ?v + 5) } }
                GROUP BY ?g"""


def _held_in(obj: object) -> set[int]:
    """The ``id`` s of the lists, tuples and deques reachable from ``obj`` through them."""
    found: set[int] = set()
    todo = [obj]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple, deque)) and id(item) not in found:
            found.add(id(item))
            todo.extend(item)
    return found


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
@pytest.mark.parametrize("query", [GROUPED, UNGROUPED, CORRELATED], ids=["grouped", "ungrouped", "correlated"])
def test_expired_rows_are_held_while_outputs_are_delivered_then_freed(query: str, compiled: bool) -> None:
    engine = Engine(compiled=compiled)
    register(engine, "PREFIX ex: <http://example.org/> " + query, "q")
    held_at_delivery: list[set[int]] = []
    engine.queries[0].listeners.append(lambda output: held_at_delivery.append(_held_in(reclaim.retired)))
    stream = Stream(engine)
    for minute in range(2):
        stream.send(minute, (f"ex:s{minute}", "ex:group", "ex:g"), (f"ex:s{minute}", "ex:v", minute))
        assert reclaim.retired == []  # emptied after every event
    delivered = len(held_at_delivery)
    # each window's oldest entry is ex:s0's, which the next event's time expires
    leaving = [window._entries[0] for window in engine.queries[0].physical.windows if window._entries]
    assert leaving
    stream.send(2, ("ex:other", "ex:note", 0))  # ex:s0 leaves the 2-minute windows: a new result
    assert reclaim.retired == []
    assert len(held_at_delivery) == delivered + 1
    # the entries that left were not freed before the output (``leaving`` keeps them
    # alive here, so their ids are not reused)
    assert all(id(entry) in held_at_delivery[-1] for entry in leaving)


def test_what_an_event_retired_is_released_after_it() -> None:
    engine = Engine()
    register(engine, "PREFIX ex: <http://example.org/> " + UNGROUPED, "q")
    stream = Stream(engine)
    marker = object()
    references = sys.getrefcount(marker)
    reclaim.retired.append(marker)
    stream.send(0, ("ex:a", "ex:group", "ex:g"), ("ex:a", "ex:v", 1))
    assert reclaim.retired == []
    assert sys.getrefcount(marker) == references


@pytest.mark.parametrize("query, operator, state", [
    (CORRELATED, "CompiledCorrelated", lambda op: _correlated_entries(op)),
    (GROUPED, "CompiledTopK", lambda op: list(op._held.values())),
], ids=["anti-join entries", "top-k entries"])
def test_compiled_operators_retire_the_entries_they_drop(query: str, operator: str, state) -> None:
    engine = Engine()
    register(engine, "PREFIX ex: <http://example.org/> " + query, "q")
    op = next(o for o in engine.queries[0].physical.operators if isinstance(o, _class(operator)))
    retired_at_delivery: list[list] = []
    engine.queries[0].listeners.append(lambda output: retired_at_delivery.append(list(reclaim.retired)))
    stream = Stream(engine)
    for minute in range(2):
        stream.send(minute, (f"ex:s{minute}", "ex:group", f"ex:g{minute}"), (f"ex:s{minute}", "ex:v", minute))
    entries = state(op)  # the operator's records of the rows it holds
    stream.send(2, ("ex:other", "ex:note", 0))  # ex:s0 and its group leave
    assert any(any(e is entry for e in retired_at_delivery[-1]) for entry in entries)


def _correlated_entries(op) -> list:
    """What an anti-join holds per row: the rows themselves in its native table, else
    its dicts' entries."""
    if op._native is not None:
        lefts, rights = op._native.entries()
        return [held[1] for held in lefts + rights]
    return [entry for side in (op._left, op._right) for held in side.values()
            for entry in (held if isinstance(held, list) else held.values())]


def _class(name: str) -> type:
    from taxi_rsp.engine.compiled import correlated, topk
    return {"CompiledCorrelated": correlated.CompiledCorrelated, "CompiledTopK": topk.CompiledTopK}[name]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_an_event_is_freed_after_the_next_events_outputs_not_during_them(compiled: bool) -> None:
    # the windows' pipelines hold the last event's view until the next event arrives;
    # the engine keeps it one event longer, so its freeing is in no output's delay
    engine = Engine(compiled=compiled)
    register(engine, "PREFIX ex: <http://example.org/> " + GROUPED, "q")
    stream = Stream(engine)
    engine.queries[0].listeners.clear()  # Stream's own listener keeps every output, and its trigger's event
    first = stream.event(0, ("ex:a", "ex:group", "ex:g"), ("ex:a", "ex:v", 1))
    alone = sys.getrefcount(first)
    engine.process(first)
    assert sys.getrefcount(first) > alone  # held through its view
    at_delivery: list[int] = []
    engine.queries[0].listeners.append(lambda output: at_delivery.append(sys.getrefcount(first)))
    engine.process(stream.event(1, ("ex:b", "ex:group", "ex:g"), ("ex:b", "ex:v", 2)))
    assert at_delivery and all(count > alone for count in at_delivery)  # still held while outputs are written
    assert sys.getrefcount(first) == alone  # released once the second event is done


def _last_outputs(op) -> list:
    """The rows a compiled group operator's groups last emitted."""
    return list(op._table.outputs().values())


@pytest.mark.parametrize("query, operator", [
    (GROUPED.split(" ORDER BY")[0], "CompiledAggregate"),  # (a top-k would retire the row itself)
    (CORRELATED, "CompiledGroup"),
], ids=["aggregate flush", "group flush"])
def test_a_groups_retracted_row_is_freed_after_the_outputs(query: str, operator: str) -> None:
    engine = star_engine()  # a window aggregate over a star matched per event
    register(engine, "PREFIX ex: <http://example.org/> " + query, "q")
    op = next(o for o in [*engine.queries[0].physical.operators, *engine.queries[0].physical.windows]
              if type(o).__name__ == operator)
    stream = Stream(engine)
    stream.send(0, ("ex:a", "ex:group", "ex:g"), ("ex:a", "ex:v", 1))
    (old,) = _last_outputs(op)  # the group's emitted row
    held_at_delivery: list[set[int]] = []
    engine.queries[0].listeners.append(lambda output: held_at_delivery.append(_held_in(reclaim.retired)))
    stream.send(1, ("ex:b", "ex:group", "ex:g"), ("ex:b", "ex:v", 2))  # the group's count changes
    assert _last_outputs(op) != [old]
    assert held_at_delivery and id(old) in held_at_delivery[-1]  # retracted, and retired, not freed yet
    assert reclaim.retired == []
