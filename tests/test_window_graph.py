"""A STREAM block matches its window's content as one graph (RSP-QL, CQELS ISWC 2011):
patterns join across the events of a window. Checked against an independent evaluation —
pyoxigraph's SPARQL over the union of the window's events, after every event — on both
tiers, and on the minimal case of issue 51."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import EX, Stream
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner import register
from taxi_rsp.rdf.terms import IRI

PREFIX = f"PREFIX ex: <{EX}> "
BLOCKS = {
    "chain": "?x ex:p ?y . ?y ex:q ?z",
    "star": "?x ex:p ?y . ?x ex:q ?z",
    "triangle": "?x ex:p ?y . ?y ex:q ?z . ?z ex:r ?x",
    "cross product": "?x ex:p ?y . ?w ex:q ?z",
    "constant and blank node": "?x ex:p ex:s1 . ?x ex:q [ ex:r ?z ]",
    # a group pattern inside STREAM (the CQELS grammar allows it; RSP-QL needs it)
    "optional": "?x ex:p ?y OPTIONAL { ?y ex:q ?z }",
    "filter": "?x ex:p ?y . ?y ex:q ?z FILTER(?x != ?z)",
    "union": "{ ?x ex:p ?y } UNION { ?y ex:q ?x }",
    "minus": "?x ex:p ?y MINUS { ?y ex:r ?x }",
}
RANGE_MINUTES = 2
NODES = ["ex:s0", "ex:s1", "ex:s2"]
TRIPLE = st.tuples(st.sampled_from(NODES), st.sampled_from(["ex:p", "ex:q", "ex:r"]), st.sampled_from(NODES))
EVENTS = st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 1.5, 2.5]), st.lists(TRIPLE, min_size=1, max_size=3)),
                  min_size=1, max_size=14)


def _variables(block: str) -> list[str]:
    return sorted({word.strip("(){}!=,") for word in block.split() if word.strip("(){}!=,").startswith("?")})


def _sorted(rows) -> list[tuple]:
    return sorted(rows, key=lambda row: [(value is None, value or "") for value in row])


def _query(block: str) -> str:
    variables = _variables(block)
    return (PREFIX + f"SELECT {' '.join(variables)} WHERE {{ STREAM <{EX}stream> [RANGE {RANGE_MINUTES}m] "
            f"{{ {block} }} }} ORDER BY {' '.join(variables)}")


def _expanded(triple: tuple[str, str, str]) -> ox.Triple:
    return ox.Triple(*(ox.NamedNode(EX + part[3:]) for part in triple))


def _oracle(block: str, window: list[tuple[str, str, str]]) -> list[tuple[str, ...]]:
    """The block over the window's triples as one graph, by pyoxigraph."""
    store = ox.Store()
    for triple in window:
        t = _expanded(triple)
        store.add(ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph()))
    variables = _variables(block)
    solutions = store.query(PREFIX + f"SELECT {' '.join(variables)} WHERE {{ {block} }}")
    return _sorted(tuple(None if solution[v[1:]] is None else solution[v[1:]].value for v in variables)
                   for solution in solutions)


def _engine_after_each_event(block: str, events, compiled: bool) -> list[list[tuple[str, ...]]]:
    engine = Engine(config=EngineConfig(compiled=compiled))
    register(engine, _query(block), "q")
    stream = Stream(engine)
    current: list[tuple[str, ...]] = []
    seen = 0
    results = []
    minute = 0.0
    for gap, triples in events:
        minute += gap
        stream.send(minute, *triples)
        for output in stream.outputs[seen:]:
            current = _sorted(tuple(None if term is None else term.value for term in row) for row in output.terms())
        seen = len(stream.outputs)
        results.append(current)
    return results


def _distinct_triples(events) -> list[tuple[float, list[tuple[str, str, str]]]]:
    """The events without a triple an earlier event had (the window's content as a graph
    is then the same as the bag of its events' triples; see docs/semantics.md)."""
    seen: set = set()
    kept = []
    for gap, triples in events:
        fresh = [t for t in dict.fromkeys(triples) if t not in seen]
        seen.update(fresh)
        if fresh:
            kept.append((gap, fresh))
    return kept


@pytest.mark.parametrize("block", list(BLOCKS.values()), ids=list(BLOCKS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=EVENTS)
def test_a_block_matches_the_union_of_its_windows_events(block: str, events) -> None:
    events = _distinct_triples(events)
    if not events:
        return
    timed = _times(events)
    expected = []
    for i, (now, _) in enumerate(timed):  # the window (now - range, now] after the i-th event
        window = [t for minute, triples in timed[: i + 1] if now - RANGE_MINUTES < minute for t in triples]
        expected.append(_oracle(block, window))
    for compiled in (True, False):
        assert _engine_after_each_event(block, events, compiled) == expected, f"compiled={compiled}"


def _times(events) -> list[tuple[float, list]]:
    minute, timed = 0.0, []
    for gap, triples in events:
        minute += gap
        timed.append((minute, triples))
    return timed


def test_two_events_of_one_window_join() -> None:
    """Issue 51's minimal case: a temperature and a room of one sensor, pushed as two events."""
    for compiled in (True, False):
        engine = Engine(config=EngineConfig(compiled=compiled))
        register(engine, PREFIX + f"SELECT ?s ?t ?r WHERE {{ STREAM <{EX}stream> [RANGE 10s] "
                                  "{ ?s ex:temp ?t . ?s ex:room ?r } }", "q")
        stream = Stream(engine)
        stream.send(0, ("ex:s1", "ex:temp", 21))
        stream.send(0.1, ("ex:s1", "ex:room", "ex:kitchen"))
        stream.send(0.3, ("ex:s2", "ex:room", "ex:hall"))  # 18 s later: the first two have left
        rows = [[tuple(t.value if isinstance(t, IRI) else t.lexical for t in row) for row in o.terms()]
                for o in stream.outputs]
        assert rows[0] == [(EX + "s1", "21", EX + "kitchen")], rows


def test_a_subject_disjoint_stream_keeps_matching_inside_events() -> None:
    """Declared subject-disjoint (the Feeder's trips are), a star is matched per event:
    events that would break the declaration lose their cross-event matches — the
    declaration is a promise about the data, as docs/semantics.md says."""
    config = EngineConfig(subject_disjoint_streams=frozenset({EX + "stream"}))
    engine = Engine(config=config)
    query = register(engine, PREFIX + f"SELECT ?s ?t ?r WHERE {{ STREAM <{EX}stream> [RANGE 10s] "
                                      "{ ?s ex:temp ?t . ?s ex:room ?r } }", "q")
    assert "2 patterns of one subject, matched per event" in query.explain()
    stream = Stream(engine)
    stream.send(0, ("ex:s1", "ex:temp", 21))
    stream.send(0.1, ("ex:s1", "ex:room", "ex:kitchen"))
    assert [o.terms() for o in stream.outputs] == []


# -- GRAPH inside a STREAM block: the window's content as an RDF dataset ---------------------
# Its default graph is the union of all its events' graphs (as above); its named graphs are
# the events' named graphs, events of one name merged. pyoxigraph's union default graph
# is the same dataset.
GRAPH_BLOCKS = {
    "chain in one named graph": "GRAPH ?g { ?x ex:p ?y . ?y ex:q ?z }",
    "two graphs": "GRAPH ?g { ?x ex:p ?y } GRAPH ?h { ?y ex:q ?z }",
    "a constant graph": "GRAPH ex:g1 { ?x ex:p ?y . ?x ex:q ?z }",
    "the default graph and a named one": "?x ex:r ?y GRAPH ?g { ?y ex:p ?z }",
    "the graph name in a pattern": "GRAPH ?g { ?x ex:p ?g }",
}
GRAPH_NAMES = [None, "ex:g1", "ex:g2"]
GRAPH_EVENTS = st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 2.5]), st.sampled_from(GRAPH_NAMES),
                                  st.lists(st.tuples(st.sampled_from(NODES + ["ex:g1"]), st.sampled_from(["ex:p", "ex:q", "ex:r"]),
                                                     st.sampled_from(NODES + ["ex:g1", "ex:g2"])),
                                           min_size=1, max_size=3)),
                        min_size=1, max_size=12)


def _dataset_oracle(block: str, window: list[tuple[str | None, tuple[str, str, str]]]) -> list[tuple[str, ...]]:
    store = ox.Store()
    for graph, triple in window:
        t = _expanded(triple)
        name = ox.DefaultGraph() if graph is None else ox.NamedNode(EX + graph[3:])
        store.add(ox.Quad(t.subject, t.predicate, t.object, name))
    variables = _variables(block)
    solutions = store.query(PREFIX + f"SELECT {' '.join(variables)} WHERE {{ {block} }}",
                            use_default_graph_as_union=True)
    return _sorted(tuple(None if solution[v[1:]] is None else solution[v[1:]].value for v in variables)
                   for solution in solutions)


@pytest.mark.parametrize("block", list(GRAPH_BLOCKS.values()), ids=list(GRAPH_BLOCKS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=GRAPH_EVENTS)
def test_graph_inside_a_block_matches_the_windows_named_graphs(block: str, events) -> None:
    seen: set = set()
    kept = []  # no triple twice (the bag and set readings then agree, as above)
    for gap, graph, triples in events:
        fresh = [t for t in dict.fromkeys(triples) if t not in seen]
        seen.update(fresh)
        if fresh:
            kept.append((gap, graph, fresh))
    for compiled in (True, False):
        engine = Engine(config=EngineConfig(compiled=compiled))
        register(engine, _query(block), "q")
        stream = Stream(engine)
        minute, timed, current = 0.0, [], []
        for gap, graph, triples in kept:
            minute += gap
            timed.append((minute, graph, triples))
            seen_outputs = len(stream.outputs)
            stream.send(minute, *triples, graph=graph)
            for output in stream.outputs[seen_outputs:]:
                current = _sorted(tuple(None if t is None else t.value for t in row) for row in output.terms())
            window = [(g, t) for m, g, triples_ in timed if minute - RANGE_MINUTES < m for t in triples_]
            assert current == _dataset_oracle(block, window), (compiled, minute)


def test_explain_names_the_graph_of_a_window() -> None:
    engine = Engine()
    query = register(engine, _query("GRAPH ?g { ?x ex:p ?y }"), "q")
    assert f"Window <{EX}stream> [RANGE 120000ms] GRAPH ?g, 1 pattern, reference matcher" in query.explain()
