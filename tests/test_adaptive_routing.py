"""Adaptive routing for multi-way joins (issue 10 §2): the policy alone, the order
switching when the stream shifts, the static cache, and results equal to a fixed
order, to the binary-join plan and to a brute-force recompute (hypothesis)."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.ops.mjoin import MultiJoinOp
from taxi_rsp.planner.multijoin import flatten
from taxi_rsp.errors import UserError
from taxi_rsp.engine.routing import (
    FilterStats,
    FixedOrder,
    GreedyOrder,
    InputStats,
    JoinInput,
    Router,
    plan_route,
)
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream

PREFIX = "PREFIX ex: <http://example.org/>\n"


def inp(variables: str, certain: str | None = None) -> JoinInput:
    return JoinInput(frozenset(variables), frozenset(variables if certain is None else certain))


# -- the policy alone --------------------------------------------------------------------
def test_input_stats_update_and_revert_are_symmetric() -> None:
    stats = InputStats({"x": 0, "y": 1})
    rows = [(1, 2), (1, 3), (2, 3), (1, 2)]
    for row in rows:
        stats.update(row, 1)
    assert stats.card == 4 and len(stats.values["x"]) == 2 and len(stats.values["y"]) == 2
    assert stats.fanout(("x",)) == 2.0 and stats.fanout(()) == 4.0 and stats.fanout(("x", "y")) == 2.0
    for row in rows:
        stats.update(row, -1)
    assert stats.card == 0 and stats.values == {"x": Counter(), "y": Counter()}
    assert stats.fanout(("x",)) == 0.0  # an empty input ends every probe: it goes first


def test_greedy_order_takes_the_smallest_expected_result_first() -> None:
    inputs = [inp("ab"), inp("bc"), inp("cd"), inp("ad")]
    stats = [InputStats({v: i for i, v in enumerate(sorted(x.variables))}) for x in inputs]
    for k in range(40):
        stats[1].update((k % 2, k), 1)  # 20 rows per ?b value
    for k in range(4):
        stats[3].update((k, k), 1)  # one row per ?a value
    for k in range(10):
        stats[2].update((k, k), 1)
    policy = GreedyOrder()
    assert policy.order(0, inputs, [], stats, []) == (3, 2, 1)  # ?a (1 row), then ?c ?d... via #2 on ?d
    assert FixedOrder().order(0, inputs, [], stats, []) == (1, 2, 3)


def test_greedy_order_avoids_cross_products_on_ties() -> None:
    inputs = [inp("ab"), inp("xy"), inp("bx")]
    stats = [InputStats({}) for _ in inputs]
    # all empty: same expected size, so the connected input goes first
    assert GreedyOrder().order(0, inputs, [], stats, []) == (2, 1)


def test_filters_run_where_their_variables_are_first_certainly_bound() -> None:
    inputs = [inp("ab"), inp("bc"), inp("cd", certain="c")]
    filters = [frozenset("a"), frozenset("ac"), frozenset("ad"), frozenset()]
    route = plan_route(0, (1, 2), inputs, filters)
    assert route.keys == (("b",), ("c",))
    # a and the constant filter on the arriving mapping, a-c after #1, a-d (d may be
    # unbound) only on the complete mapping
    assert route.filters == ((0, 3), (1,), (2,))


def test_filter_selectivity_is_learned_and_steers_the_order() -> None:
    inputs = [inp("ab"), inp("bc"), inp("bd")]
    filters = [frozenset("ac")]  # evaluable once #1 has joined
    stats = [InputStats({"b": 0}) for _ in inputs]
    for k in range(11):
        stats[1].update((0, k), 1)
    for k in range(10):
        stats[2].update((0, k), 1)
    fstats = [FilterStats()]
    policy = GreedyOrder()
    for _ in range(50):
        fstats[0].record(False)
    assert fstats[0].selectivity() < 0.05
    assert policy.order(0, inputs, filters, stats, fstats) == (1, 2)  # 11 rows, but the filter drops them
    fstats[0] = FilterStats()
    for _ in range(50):
        fstats[0].record(True)
    assert policy.order(0, inputs, filters, stats, fstats) == (2, 1)  # a filter that passes all: 10 < 11


def test_router_redecides_on_drift_with_hysteresis_and_records_switches() -> None:
    inputs = [inp("ab"), inp("bc"), inp("bd")]
    positions = [{"b": 1}, {"b": 0}, {"b": 0}]
    router = Router(inputs, [], GreedyOrder(), positions, interval=10_000, drift=2.0, hysteresis=1.25)
    assert [d.reason for d in router.decisions] == ["start"] * 3
    assert router.routes[0].steps == (1, 2)
    # #1 grows to 3 rows per key, #2 to 2: within the hysteresis factor, no switch
    for k in range(3):
        router.stats[1].update((0, k), 1)
    for k in range(2):
        router.stats[2].update((0, k), 1)
    assert router.arrived(5) == [] and router.routes[0].steps == (1, 2)  # 8 vs 9: not 1.25x cheaper
    before = len(router.decisions)
    for k in range(3, 30):
        router.stats[1].update((0, k), 1)
    changed = router.arrived(27)
    assert 0 in changed and router.routes[0].steps == (2, 1)
    last = [d for d in router.decisions if d.source == 0][-1]
    assert last.reason == "drift" and last.cost * 1.25 + 1 < last.previous_cost and len(router.decisions) > before
    fixed = Router(inputs, [], FixedOrder(), positions, interval=1)
    fixed.stats[1].update((0, 0), 5)
    assert fixed.arrived(1) == [] and fixed.routes[0].steps == (1, 2)


def test_a_one_row_window_emptying_and_refilling_is_not_drift() -> None:
    # A TRIPLES 1 window retracts its row and inserts the next one on every event: 2x in
    # relative terms, but re-deciding on it would cost more than any route could save.
    router = Router([inp("ab"), inp("bc"), inp("bd")], [], GreedyOrder(), [{"b": 1}, {"b": 0}, {"b": 0}],
                    interval=10_000)
    for k in range(100):
        router.stats[0].update((k, 0), 1)
        assert router.arrived(1) == []
        router.stats[0].update((k, 0), -1)
        assert router.arrived(1) == []
    assert router.last_decision == 0  # never re-decided
    for k in range(8):
        router.stats[1].update((0, k), 1)
    router.arrived(8)
    assert router.last_decision == 208  # 8 new rows from 0: that is drift


# -- engine-level helpers --------------------------------------------------------------
def engine_for(query: str, mode: str, static: list[tuple[str, str, str]] = (), eager: bool = True):
    engine = Engine(join_routing=mode)
    for s, p, o in static:
        engine.static.add(IRI(EX + s), IRI(EX + p), IRI(EX + o))
    register(engine, PREFIX + query, "q")
    joins = [op for op in engine.queries[0].physical.operators if isinstance(op, MultiJoinOp)]
    if eager:  # re-decide on every arrival so that routes change as often as possible
        for join in joins:
            join.router.interval, join.router.hysteresis, join.router.slack = 1, 1.0, 0.0
    return engine, Stream(engine), joins


def per_instant(stream: Stream) -> list[tuple[float, bool, Counter, Counter]]:
    """Outputs as (minute, expiry?, inserted bag, deleted bag): the order of rows inside
    one instant is not part of the result (bag semantics)."""
    return [(m, e, Counter(o.values()), Counter(o.values(o.deleted)))
            for (m, e, _), o in zip(stream.values(), stream.outputs)]


# -- the order switches when the stream's distribution shifts ---------------------------
SHIFT_QUERY = """SELECT ?p ?loc ?topic WHERE {
  STREAM ex:stream [RANGE 10m] { ?p ex:at ?loc }
  STREAM ex:stream [RANGE 10m] { ?p ex:likes ?topic }
  STREAM ex:stream [RANGE 10m] { ?loc ex:hosts ?topic }
}"""


def shifting_stream(stream: Stream) -> None:
    """Phase 1 (minutes 0-9): people like many topics, rooms host one: probing the rooms
    first is cheap. Phase 2 (minutes 20-29): the reverse."""
    def phase(start: float, likes: int, hosts: int) -> None:
        t = start
        for person in range(5):
            stream.send(t, *[(f"ex:p{person}", "ex:likes", f"ex:t{person + k}") for k in range(likes)])
        for room in range(5):
            stream.send(t, *[(f"ex:r{room}", "ex:hosts", f"ex:t{room + k}") for k in range(hosts)])
        for k in range(40):
            t += 0.2
            stream.send(t, (f"ex:p{k % 5}", "ex:at", f"ex:r{(k * 3) % 5}"))

    phase(0, likes=12, hosts=1)
    phase(20, likes=1, hosts=12)


def test_routing_switches_when_the_distribution_shifts_and_results_do_not_change() -> None:
    engine, stream, (join,) = engine_for(SHIFT_QUERY, "adaptive", eager=False)
    join.router.interval = 16
    shifting_stream(stream)
    orders = [d.steps for d in join.router.decisions if d.source == 0]  # routes of ?p ex:at ?loc
    assert orders[0] == (1, 2)  # nothing known yet: plan order
    assert (2, 1) in orders  # phase 1: rooms first
    assert orders[-1] == (1, 2)  # phase 2: people first again
    switch = orders.index((2, 1))
    assert (1, 2) in orders[switch:]
    assert "adaptive routing" in engine.queries[0].explain() and "from #0: #1 on ?p" in engine.queries[0].explain()

    results = per_instant(stream)
    assert sum(sum(ins.values()) for _, _, ins, _ in results) > 0
    for mode in ("fixed", "binary"):
        _, other, joins = engine_for(SHIFT_QUERY, mode)
        shifting_stream(other)
        assert per_instant(other) == results, mode
        assert (mode == "fixed") == bool(joins)
        if joins:
            assert {d.steps for d in joins[0].router.decisions if d.source == 0} == {(1, 2)}


# -- planning --------------------------------------------------------------------------
def test_only_joins_of_three_or_more_inputs_with_a_stream_are_multiway() -> None:
    two = "SELECT * WHERE { STREAM ex:stream [RANGE 1m] { ?a ex:p ?b } STREAM ex:stream [RANGE 1m] { ?b ex:q ?c } }"
    static_only = "SELECT * WHERE { STREAM ex:stream [RANGE 1m] { ?a ex:p ?b } { ?b ex:q ?c . ?c ex:r ?d . ?d ex:s ?e } }"
    for query, expected in ((two, 0), (static_only, 0), (SHIFT_QUERY, 1)):
        _, _, joins = engine_for(query, "adaptive")
        assert len(joins) == expected, query


def test_queries_of_the_challenge_have_no_multiway_join() -> None:
    root = Path(__file__).resolve().parents[1] / "queries"
    for name in ("q1.cqels", "q2.cqels"):
        engine = Engine()
        register(engine, (root / name).read_text(encoding="utf-8"), name)
        assert "MultiJoin" not in engine.queries[0].explain()
        assert not any(flatten(node) for node in _nodes(engine.queries[0].logical.root))


def _nodes(node):
    yield node
    for name in ("child", "left", "right"):
        if hasattr(node, name):
            yield from _nodes(getattr(node, name))
    for child in getattr(node, "inputs", ()):
        yield from _nodes(child)


# ?c may be unbound in the first input (OPTIONAL): it must join with any ?c, and a filter
# reading it waits for the complete mapping.
OPTIONAL_QUERY = """SELECT ?a ?b ?c ?d WHERE {
  { STREAM ex:stream [RANGE 5m] { ?a ex:p ?b } OPTIONAL { STREAM ex:stream [RANGE 5m] { ?a ex:o ?c } } }
  STREAM ex:stream [RANGE 5m] { ?b ex:q ?c }
  STREAM ex:stream [TRIPLES 4] { ?c ex:r ?d }
  FILTER(?c != ex:n3)
}"""


def test_optional_values_inside_an_input_join_like_the_binary_plan() -> None:
    events = [(0, ("ex:n1", "ex:p", "ex:n2")), (1, ("ex:n2", "ex:q", "ex:n3")), (1.5, ("ex:n2", "ex:q", "ex:n4")),
              (2, ("ex:n3", "ex:r", "ex:n1")), (2.5, ("ex:n4", "ex:r", "ex:n1")), (3, ("ex:n1", "ex:o", "ex:n4")),
              (4, ("ex:n1", "ex:o", "ex:n5")), (6, ("ex:n2", "ex:q", "ex:n4")), (9, ("ex:n9", "ex:p", "ex:n9"))]
    results = {}
    for mode in ("adaptive", "fixed", "binary"):
        _, stream, joins = engine_for(OPTIONAL_QUERY, mode)
        assert bool(joins) == (mode != "binary")
        for minute, triple in events:
            stream.send(minute, triple)
        results[mode] = per_instant(stream)
    assert results["adaptive"] == results["fixed"] == results["binary"]
    assert any(ins for _, _, ins, _ in results["binary"])


# -- static cache ----------------------------------------------------------------------
CACHE_QUERY = """SELECT ?a ?b ?c WHERE {
  STREAM ex:stream [RANGE 10m] { ?a ex:p ?b }
  STREAM ex:stream [RANGE 10m] { ?b ex:q ?c }
  ?c ex:r ex:yes .
}"""


def test_static_cache_is_refreshed_when_the_static_data_changes() -> None:
    engine, stream, (join,) = engine_for(CACHE_QUERY, "adaptive", static=[("n1", "r", "yes")])
    (cache,) = join.caches
    stream.send(0, ("ex:a", "ex:p", "ex:b"))
    stream.send(1, ("ex:b", "ex:q", "ex:n1"), ("ex:b", "ex:q", "ex:n2"))
    assert stream.values()[-1][2] == [(IRI(EX + "a"), IRI(EX + "b"), IRI(EX + "n1"))]
    engine.static.add(IRI(EX + "n2"), IRI(EX + "r"), IRI(EX + "yes"))  # the store's version moves
    stream.send(2, ("ex:x", "ex:y", "ex:z"))
    assert stream.values()[-1][2] == [(IRI(EX + "a"), IRI(EX + "b"), IRI(EX + "n2"))]
    assert sum(cache.rows.values()) == 2 and not cache.refresh()  # evaluated once per change


# -- property: random streams against a brute-force recompute ---------------------------
PROPERTY_QUERY = """SELECT ?a ?b ?c ?d WHERE {
  STREAM ex:s1 [RANGE 3m] { ?a ex:p ?b }
  STREAM ex:s2 [RANGE 5m] { ?b ex:q ?c }
  ?c ex:r ?d .
  STREAM ex:s1 [RANGE 4m] { ?d ex:t ?a }
  FILTER(?a != ?c)
}"""
# (stream, predicate, window minutes, subject var, object var) per stream pattern
PATTERNS = [("s1", "p", 3, "a", "b"), ("s2", "q", 5, "b", "c"), ("s1", "t", 4, "d", "a")]
NODES = [f"n{i}" for i in range(3)]

triple = st.tuples(st.sampled_from(NODES), st.sampled_from(["p", "q", "t"]), st.sampled_from(NODES))
event = st.tuples(st.sampled_from([0, 0, 0.5, 1, 2]), st.sampled_from(["s1", "s2"]),
                  st.frozensets(triple, min_size=1, max_size=3))
static_add = st.tuples(st.just("static"), st.sampled_from(NODES), st.sampled_from(NODES))


def brute_force(events: list[tuple[float, str, frozenset]], static: list[tuple[str, str]], now: float) -> Counter:
    """The query's result at instant ``now`` from its definition: window contents by
    SPEC §3, then every combination of rows (bag semantics)."""
    tables = []
    for stream, pred, window, sv, ov in PATTERNS:
        rows = [(s, o) for t, st_, triples in events if st_ == stream and now - window < t <= now
                for s, p, o in triples if p == pred]
        tables.append((sv, ov, rows))
    result: Counter = Counter()
    for (a, b), (b2, c), (c2, d), (d2, a2) in itertools.product(
            tables[0][2], tables[1][2], sorted(set(static)), tables[2][2]):  # the store is a set
        if b == b2 and c == c2 and d == d2 and a == a2 and a != c:
            result[tuple(IRI(EX + v) for v in (a, b, c, d))] += 1
    return result


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(event, event, event, static_add), min_size=1, max_size=25),
       st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)), max_size=4))
def test_multiway_join_equals_brute_force_on_random_streams(items, initial_static) -> None:
    static = list(initial_static)
    runs = {mode: engine_for(PROPERTY_QUERY, mode, [(c, "r", d) for c, d in static])
            for mode in ("adaptive", "fixed", "binary")}
    changed_static = False
    clock, history = 0.0, []
    states = {mode: Counter() for mode in runs}
    for item in items:
        if item[0] == "static":
            static.append(item[1:])
            changed_static = True
            for engine, _, _ in runs.values():
                engine.static.add(IRI(EX + item[1]), IRI(EX + "r"), IRI(EX + item[2]))
            continue
        gap, stream_name, triples = item
        clock += gap
        history.append((clock, stream_name, triples))
        expected = brute_force(history, static, clock)
        for mode, (_, stream, _) in runs.items():
            before = len(stream.outputs)
            stream.send(clock, *[(f"ex:{s}", f"ex:{p}", f"ex:{o}") for s, p, o in triples],
                        stream=EX + stream_name)
            for output in stream.outputs[before:]:
                states[mode].update(output.values())
                states[mode].subtract(output.values(output.deleted))
            if mode != "binary" or not changed_static:  # the binary plan never refreshes static data
                assert +states[mode] == expected, mode
                assert all(n >= 0 for n in states[mode].values())
    if not changed_static:
        outputs = {mode: per_instant(stream) for mode, (_, stream, _) in runs.items()}
        assert outputs["adaptive"] == outputs["fixed"] == outputs["binary"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([0, 0, 1, 2, 3]),
                          st.frozensets(st.tuples(st.sampled_from(NODES + ["n3"]), st.sampled_from(["p", "o", "q", "r"]),
                                                  st.sampled_from(NODES + ["n3"])), min_size=1, max_size=3)),
                min_size=1, max_size=25))
def test_unbound_values_and_count_windows_match_the_binary_plan(events) -> None:
    results = {}
    for mode in ("adaptive", "fixed", "binary"):
        _, stream, _ = engine_for(OPTIONAL_QUERY, mode)
        clock = 0
        for gap, triples in events:
            clock += gap
            stream.send(clock, *[(f"ex:{s}", f"ex:{p}", f"ex:{o}") for s, p, o in triples])
        results[mode] = per_instant(stream)
    assert results["adaptive"] == results["fixed"] == results["binary"]


def test_unknown_routing_mode_is_refused() -> None:
    with pytest.raises(UserError, match="join routing"):
        engine_for(SHIFT_QUERY, "clever")
