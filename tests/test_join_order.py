"""Join order without avoidable cross products (issue 51): static patterns that share no
variable are matched apart and joined through the stream parts that connect them, and
join trees are rebuilt in connected order when the written order has a cross product a
later input would avoid. Answers are checked against pyoxigraph over the static data
and the window's events as one graph."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from engine_helpers import EX, Stream
from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.join_order import order_joins
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.lang.ast import TriplePattern, Var, WindowSpec
from taxi_rsp.planner import register
from taxi_rsp.rdf.terms import IRI

PREFIX = f"PREFIX ex: <{EX}> "
# CityBench Q10's shape: two sensors' observed properties in static data, their
# observations in the stream; the two static patterns share no variable.
Q10_LIKE = PREFIX + f"""SELECT ?o1 ?o2 ?p1 ?p2 WHERE {{
    ?s1 ex:observes ?p1 . ?s2 ex:measures ?p2 .
    STREAM <{EX}stream> [RANGE 1m] {{ ?o1 ex:property ?p1 . ?o2 ex:about ?p2 }} }}"""


def _static(tmp_path: Path, sensors: int) -> Path:
    lines = [f"<{EX}a{i}> <{EX}observes> <{EX}pa{i}> .\n<{EX}b{i}> <{EX}measures> <{EX}pb{i}> ." for i in range(sensors)]
    path = tmp_path / "sensors.nt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _oracle(static: Path, events: list[tuple[str, str, str]]) -> list[tuple[str, ...]]:
    store = ox.Store()
    store.load(path=str(static), format=ox.RdfFormat.N_TRIPLES)
    for s, p, o in events:
        store.add(ox.Quad(*(ox.NamedNode(EX + t[3:]) for t in (s, p, o)), ox.DefaultGraph()))
    query = Q10_LIKE.replace(f"STREAM <{EX}stream> [RANGE 1m] ", "")
    return sorted(tuple(row[v].value for v in ("o1", "o2", "p1", "p2")) for row in store.query(query))


@pytest.mark.parametrize("routing", ["adaptive", "binary"])
def test_static_patterns_sharing_no_variable_are_not_a_cross_product(tmp_path: Path, routing: str) -> None:
    sensors = 2000  # a cross product would hold 4,000,000 rows
    static = _static(tmp_path, sensors)
    engine = Engine(config=EngineConfig(join_routing=routing))
    engine.load_static(static)
    query = register(engine, Q10_LIKE + " ORDER BY ?o1 ?o2", "q")
    assert query.state_size() <= 2 * sensors, query.explain()
    stream = Stream(engine)
    sent = [("ex:x1", "ex:property", "ex:pa7"), ("ex:x2", "ex:about", "ex:pb3"), ("ex:x3", "ex:about", "ex:pb9")]
    for i, triple in enumerate(sent):
        stream.send(i * 0.1, triple)
    last = [tuple(term.value for term in row) for row in stream.outputs[-1].terms()]
    assert sorted(last) == _oracle(static, sent) and len(last) == 2


def _scan(*names: tuple[str, str]) -> P.Scan:
    return P.Scan("http://s", WindowSpec("RANGE", range_ms=60_000),
                  tuple(TriplePattern(Var(s), IRI("http://p"), Var(o)) for s, o in names))


def test_a_join_tree_is_reordered_only_when_it_has_an_avoidable_cross_product() -> None:
    connected = P.Join(P.Join(_scan(("a", "b")), _scan(("b", "c"))), _scan(("d", "e")))  # d-e: required
    assert order_joins(connected) == connected
    avoidable = P.Join(P.Join(_scan(("a", "b")), _scan(("c", "d"))), _scan(("b", "c")))
    assert order_joins(avoidable) == P.Join(P.Join(_scan(("a", "b")), _scan(("b", "c"))), _scan(("c", "d")))
    nested = P.Join(_scan(("a", "b")), P.Join(_scan(("b", "c")), _scan(("c", "d"))))
    assert order_joins(nested) == nested  # the written shape stays when nothing is avoidable


def test_a_large_event_with_blank_node_patterns_joins_by_shared_variables() -> None:
    """The `[ p o ]` shape: a block whose patterns, taken in text order, would pair every
    triple of one part with every triple of another; joined in connected order the
    1,800-triple event is matched by hash joins (answers checked, not timed)."""
    engine = Engine()
    register(engine, PREFIX + f"""SELECT ?sensor ?v WHERE {{ STREAM <{EX}stream> [RANGE 1m] {{
        ?obs ex:value ?v . [ ex:madeBy ?sensor ; ex:unit ex:celsius ] . ?obs ex:madeBy ?sensor }} }}
        ORDER BY ?sensor ?v""", "q")
    stream = Stream(engine)
    triples, sensor, celsius = [], {}, set()
    for i in range(600):
        sensor[i] = i % 3
        if i % 10 == 0:
            celsius.add(i)
        triples += [(f"ex:obs{i}", "ex:value", i), (f"ex:obs{i}", "ex:madeBy", f"ex:sensor{i % 3}"),
                    (f"ex:obs{i}", "ex:unit", "ex:celsius" if i in celsius else "ex:kelvin")]
    stream.send(0, *triples)
    rows = stream.outputs[-1].values()
    # each observation once per Celsius observation of its own sensor
    expected = sorted((f"{EX}sensor{sensor[i]}", i) for i in range(600) for j in celsius if sensor[j] == sensor[i])
    assert sorted((s.value, v) for s, v in rows) == expected


def test_a_cross_product_the_query_requires_is_named_with_its_size(tmp_path: Path) -> None:
    """Static groups are counted at registration; a window group's size is only known as
    the stream runs, so the estimate is per row of it."""
    from taxi_rsp.session import Session, SessionConfig

    session = Session(SessionConfig(static=[_static(tmp_path, 50)]))
    session.register(PREFIX + f"""SELECT * WHERE {{ ?s1 ex:observes ?p1 . ?s2 ex:measures ?p2 .
        STREAM <{EX}stream> [RANGE 1m] {{ ?o ex:value ?v }} }}""", name="with_window")
    session.register(PREFIX + f"""SELECT * WHERE {{ STREAM <{EX}stream> [RANGE 1m] {{ ?o ex:value ?v }}
        OPTIONAL {{ ?s1 ex:observes ?p1 . ?s2 ex:measures ?p2 }} }}""", name="static_only")
    warnings = session.registration_warnings({EX + "stream"})
    (with_window,) = [w for w in warnings if w.startswith("with_window: cross product")]
    assert "{?s1 ?p1: static data, 50 rows}" in with_window and "{?s2 ?p2: static data, 50 rows}" in with_window
    assert with_window.endswith("each instant it holds 2,500 rows for each row of the window group")
    (static_only,) = [w for w in warnings if w.startswith("static_only: cross product")]
    assert static_only.endswith("it holds 2,500 rows")
