"""A ranked group table (ORDER BY aggregates LIMIT k kept in the table, issue 50): the C
table against its pure twin and both against a brute-force sort of every group, after
every flush."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.native import CGroupTable, PyGroupTable, native_available
from taxi_rsp.engine.native.group_table import INT64_MAX
from tests.native_mutants import build_mutant
from taxi_rsp.planner import register
from tests.test_compiled_differential import EVENT, EX, PREFIX, _engine, _outputs, decimal
from tests.test_native_group_table import _outputs_on, observe, with_results

pytestmark = pytest.mark.skipif(not native_available(), reason="the native extension is not built")

RANKABLE = ("COUNT", "SUM", "MIN", "MAX")


@st.composite
def ranked_scripts(draw: st.DrawFn) -> tuple:
    """A table's shape (a window's, or one of deltas whose arguments may be errors), its
    ranking (parts, offset, limit, a small head so that groups move between head and
    rest) and operations over up to 40 groups whose values tie often: a window's inserts
    and expiries, or additions and retractions of rows added before; flushes."""
    ordered = draw(st.booleans())
    key_width = draw(st.integers(1, 2))
    kinds = tuple(draw(st.lists(st.sampled_from(RANKABLE + ("MEDIAN", "AVG")), min_size=1, max_size=3)))
    rankable = [j for j, kind in enumerate(kinds) if kind in RANKABLE]
    parts = [(j, draw(st.booleans())) for j in draw(st.lists(st.sampled_from(rankable), max_size=2))] if rankable else []
    offset, limit = draw(st.integers(0, 2)), draw(st.integers(0, 4))
    capacity = draw(st.one_of(st.none(), st.integers(max(offset + limit, 1), offset + limit + 3)))
    key_part = st.one_of(st.integers(0, 19), st.none(), st.just(1 << 62))
    values = st.one_of(st.integers(-3, 3), st.integers(-(1 << 40), 1 << 40), st.just(INT64_MAX))
    ops: list[tuple] = []
    added: list[tuple] = []
    now = 0
    for _ in range(draw(st.integers(1, 80))):
        step = draw(st.sampled_from(["insert"] * 4 + ["expire", "flush", "flush"]))
        key = tuple(draw(key_part) for _ in range(key_width))
        if step == "insert" and ordered:
            now += draw(st.integers(0, 2))
            ops.append(("insert", now + draw(st.integers(1, 12)), key, tuple(draw(values) for _ in kinds)))
        elif step == "insert":
            args = tuple(draw(values) if kind == "COUNT" else draw(st.one_of(values, values, st.none())) for kind in kinds)
            mult = draw(st.sampled_from([1, 1, 2]))
            added.append((key, args, mult))
            ops.append(("push", key, args, mult))
        elif step == "expire" and ordered:
            ops.append(("expire", now + draw(st.integers(-2, 6))))
        elif step == "expire" and added:  # retract rows added before
            key, args, mult = added.pop(draw(st.integers(0, len(added) - 1)))
            ops.append(("push", key, args, -mult))
        else:
            ops.append(("flush",))
    ops.append(("flush",))
    return key_width, kinds, tuple(parts), offset, limit, capacity, ordered, ops


def brute_force(table, key_width: int, kinds, parts, offset: int, limit: int, ordered: bool) -> list[tuple]:
    """The reported groups' keys by sorting every group as the reference top-k orders
    their rows: the aggregates' values (an unbound one, from an error or no value,
    before every number), then the key ids with None as -1."""
    ranked = []
    for key, rows, _, values, errors, _ in table.states():
        rank: list = []
        for j, descending in parts:
            if kinds[j] in ("COUNT", "SUM"):
                value = None if kinds[j] == "SUM" and errors[j] else values[j]
            elif errors[j] or not values[j]:
                value = None
            else:  # a queue's head, or the sorted values' first or last
                value = values[j][0] if ordered or kinds[j] == "MIN" else values[j][-1]
            unbound_first = (0 if value is None else 1, value or 0)
            rank.append(unbound_first if not descending else (1 if value is None else 0, -(value or 0)))
        ranked.append((tuple(rank) + tuple(-1 if part is None else part for part in key), key))
    return [key for _, key in sorted(ranked)[offset:offset + limit]]


def run(table, op: tuple) -> object:
    """One operation (see ``observe``); a flush is the ranked one."""
    return table.ranked_flush() if op[0] == "flush" else observe(table, op)


@settings(max_examples=300, deadline=None)
@given(ranked_scripts())
@example((1, ("COUNT", "MAX"), ((0, True), (1, True)), 0, 2, 2, True, [  # Q1's shape: ties broken by the freshest
    ("insert", 10, (3,), (1, 1)), ("insert", 10, (4,), (1, 2)), ("insert", 10, (5,), (1, 3)), ("flush",),
    ("insert", 11, (3,), (1, 4)), ("flush",), ("expire", 10), ("flush",)]))
@example((1, ("COUNT",), ((0, True),), 0, 2, 2, True, [  # equal counts: the key ids decide
    ("insert", 10, (5,), (1,)), ("insert", 10, (4,), (1,)), ("insert", 10, (3,), (1,)), ("flush",)]))
@example((1, ("COUNT",), ((0, True),), 0, 3, 3, True,  # a refill choosing 3 of 5 groups met in no order
         [("insert", 10, (k,), (1,)) for k in (1, 2, 3) for _ in range(6)]
         + [("insert", 20, (k,), (1,)) for k, n in ((4, 5), (5, 1), (6, 2), (7, 4), (8, 3)) for _ in range(n)]
         + [("flush",), ("expire", 10), ("flush",)]))
@example((1, ("MAX", "SUM"), ((0, True), (1, False)), 0, 2, 2, False, [  # unbound: last descending, first ascending
    ("push", (1,), (5, 1), 1), ("push", (2,), (None, 1), 1), ("push", (3,), (4, None), 1), ("flush",),
    ("push", (1,), (5, 1), -1), ("flush",)]))
@example((1, ("MAX", "MIN"), ((0, True), (1, False)), 0, 1, 1, False, [  # extremes of sorted values, not queues
    ("push", (1,), (1, 1), 1), ("push", (1,), (5, 5), 1), ("push", (2,), (3, 3), 1), ("flush",),
    ("push", (2,), (6, 0), 1), ("flush",)]))
def test_the_ranked_native_table_reports_as_its_twin_and_as_a_full_sort(script) -> None:
    key_width, kinds, parts, offset, limit, capacity, ordered, ops = script
    scales = tuple(None for _ in kinds)
    native, _ = with_results(CGroupTable(key_width, kinds, False, ordered), scales)
    pure, _ = with_results(PyGroupTable(key_width, kinds, False, ordered), scales)
    for table in (native, pure):
        table.rank_by(parts, offset, limit, capacity)
    last: list = []
    for op in ops:
        answer = run(native, op)
        assert answer == run(pure, op), op
        if op[0] == "flush":  # (between flushes the C head reads changed values, the twin's its keys)
            assert native.ranked_head() == pure.ranked_head(), op
            if answer is not None:
                assert answer != last  # None means: the same rows as last time
                last = answer
            assert [row[:key_width] for row in last] == brute_force(pure, key_width, kinds, parts, offset, limit,
                                                                   ordered), op
            head, bound = pure.ranked_head()
            assert head == sorted(head) and (bound is None or not head or head[-1] <= bound)


def test_an_unchanged_reported_row_is_the_same_object() -> None:
    """Rows reported again are the objects reported before (the R2S projection keeps its
    projected rows by identity), and a flush that changes nothing reported says None."""
    for cls in (CGroupTable, PyGroupTable):
        table, _ = with_results(cls(1, ("COUNT",)), (None,))
        table.rank_by([(0, True)], 0, 2, 2)
        for key in (1, 1, 2, 3):
            table.insert(100, (key,), (1,))
        first = table.ranked_flush()
        table.insert(101, (9,), (1,))  # ties with 2 and 3, after them by its key: no change
        assert table.ranked_flush() is None
        table.insert(102, (3,), (1,))  # 3 ties with 1, after it by its key: second now
        second = table.ranked_flush()
        assert second[0] is first[0] and second[1][0] == 3, cls


def test_rank_by_refuses_what_the_table_cannot_order() -> None:
    for cls in (CGroupTable, PyGroupTable):
        with pytest.raises(ValueError):
            cls(1, ("AVG",)).rank_by([(0, True)], 0, 1)
        with pytest.raises(ValueError):
            cls(0, ("COUNT",), True).rank_by([(0, True)], 0, 1)  # the implicit group
        with pytest.raises(ValueError):
            cls(1, ("COUNT",)).rank_by([(0, True)], 0, 3, 2)  # a head shorter than the report


@st.composite
def ranked_queries(draw: st.DrawFn) -> str:
    """``GROUP BY`` over a window ``ORDER BY`` some of its COUNT/SUM/MIN/MAX ``LIMIT``:
    the shape the planner ranks in the table (other aggregates ride along)."""
    window = draw(st.sampled_from(["RANGE 1m", "RANGE 2m", "RANGE 5m", "NOW", "RANGE 30s"]))
    aggregates = draw(st.lists(st.sampled_from(["COUNT(*)", "COUNT(?x)", "SUM(?x)", "MIN(?x)", "MAX(?x)",
                                                "MAX(?seq)", "MEDIAN(?x)", "AVG(?x)"]),
                               min_size=1, max_size=3, unique=True))
    rankable = [i for i, a in enumerate(aggregates) if not a.startswith(("MEDIAN", "AVG"))]
    assume(rankable)
    order = draw(st.lists(st.sampled_from(rankable), min_size=1, max_size=2, unique=True))
    keys = draw(st.sampled_from(["?k", "?k ?g", "?g"]))
    select = " ".join(f"({a} AS ?a{i})" for i, a in enumerate(aggregates))
    order_by = " ".join(f"{draw(st.sampled_from(['DESC', 'ASC']))}(?a{i})" for i in order)
    offset = draw(st.sampled_from(["", " OFFSET 1"]))
    source = draw(st.sampled_from([  # a window's groups, or groups over deltas (any row may leave, ?v unbound)
        f"STREAM <{EX}stream> [{window}] {{ ?e ex:k ?k ; ex:v ?v ; ex:seq ?seq }}",
        f"STREAM <{EX}stream> [{window}] {{ ?e ex:k ?k ; ex:seq ?seq }} "
        f"OPTIONAL {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:v ?v }} }}",
        f"{{ STREAM <{EX}stream> [{window}] {{ ?e ex:k ?k ; ex:v ?v ; ex:seq ?seq }} }} "
        f"UNION {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:k ?k ; ex:w ?v ; ex:seq ?seq }} }}"]))
    return PREFIX + (
        f"SELECT {keys} {select} WHERE {{ {source} BIND(?v AS ?x) BIND(?seq - 3 * FLOOR(?seq / 3) AS ?g) }} "
        f"GROUP BY {keys} ORDER BY {order_by} LIMIT {draw(st.integers(1, 3))}{offset}")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_queries(), st.lists(EVENT, min_size=1, max_size=30))
def test_ranked_aggregates_answer_as_the_reference_after_every_event(query: str, events) -> None:
    """On either table (a string among the numbers makes it hand over to the reference
    group and top-k), the reference interpreter's outputs, event for event."""
    explain: list = []
    reference = _outputs(query, events, compiled=False)
    assert _outputs(query, events, compiled=True, explain=explain) == reference
    assert "RankedAggregate" in explain[0] or "RankedGroup" in explain[0]
    assert _outputs_on(PyGroupTable, query, events) == reference


def test_ranked_aggregates_over_many_groups_answer_as_the_reference() -> None:
    """Hundreds of groups, so that groups leave the head, refills scan the rest and ties
    on the counts are broken by the keys: Q1's shape on the test stream."""
    rng = random.Random(7)
    events = [(rng.choice([0, 0, 0.1, 0.5]), rng.randrange(400), rng.choice([1, 2, 3, decimal("2.5")]), None)
              for _ in range(2500)]
    query = PREFIX + (f"SELECT ?k (COUNT(*) AS ?n) (MAX(?seq) AS ?fresh) (SUM(?v) AS ?s) WHERE {{ "
                      f"STREAM <{EX}stream> [RANGE 5m] {{ ?e ex:k ?k ; ex:v ?v ; ex:seq ?seq }} }} "
                      "GROUP BY ?k ORDER BY DESC(?n) DESC(?fresh) LIMIT 10")
    reference = _outputs(query, events, compiled=False)
    assert len(reference) > 100
    assert _outputs(query, events, compiled=True) == reference
    by_sum = query.replace("ORDER BY DESC(?n) DESC(?fresh) LIMIT 10", "ORDER BY ASC(?s) LIMIT 5 OFFSET 2")
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)
    assert _outputs(by_sum, events, compiled=True) == _outputs(by_sum, events, compiled=False)
    # a string halfway: SUM errs, the table hands over to the reference group and top-k
    events[1200] = (0, 5, "text", None)
    explain: list = []
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert "RankedAggregate[RANGE] window + 0 steps + group by ?k (reference), offset 0 limit 10" in explain[0]


def test_ranked_groups_over_deltas_with_unbound_aggregates_answer_as_the_reference() -> None:
    """A GROUP BY above an OPTIONAL over hundreds of groups, ordered by a MAX that is
    unbound while a group's rows have no ?v (last, descending) and by a COUNT."""
    rng = random.Random(3)
    events = [(rng.choice([0, 0.1, 0.5, 1]), rng.randrange(300), rng.choice([None, 1, 2, 5, -3]), None)
              for _ in range(2500)]
    query = PREFIX + (f"SELECT ?k (COUNT(*) AS ?n) (MAX(?x) AS ?m) WHERE {{ STREAM <{EX}stream> [RANGE 2m] "
                      f"{{ ?e ex:k ?k ; ex:seq ?seq }} OPTIONAL {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:v ?v }} }} "
                      "BIND(?v AS ?x) } GROUP BY ?k ORDER BY DESC(?m) DESC(?n) LIMIT 5")
    explain: list = []
    reference = _outputs(query, events, compiled=False)
    assert len(reference) > 100
    assert _outputs(query, events, compiled=True, explain=explain) == reference
    operator = next(line for line in explain[0].splitlines() if "RankedGroup by ?k (" in line)
    assert "(compiled" in operator and "ranked by DESC ?m, DESC ?n in the table" in operator, operator
    ascending = query.replace("DESC(?m) DESC(?n) LIMIT 5", "ASC(?m) ASC(?n) LIMIT 4 OFFSET 1")
    assert _outputs(ascending, events, compiled=True) == _outputs(ascending, events, compiled=False)
    # a string halfway: MAX cannot hold it, the group hands over to the reference group and top-k
    events[1200] = (0, 7, "text", None)
    explain.clear()
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert "RankedGroup by ?k (reference), offset 0 limit 5" in explain[0]


def test_what_the_table_cannot_rank_keeps_the_top_k() -> None:
    """ORDER BY a key (its terms' order, not its ids'), by AVG or MEDIAN, or by an
    expression: the aggregate and a top-k, as before."""
    base = (f"SELECT ?k (COUNT(*) AS ?n) (AVG(?v) AS ?a) WHERE {{ STREAM <{EX}stream> [RANGE 1m] "
            "{ ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k ORDER BY ")
    for order in ("DESC(?n) ASC(?k)", "DESC(?a)", "DESC(?n * 2)"):
        plan = register(_engine(True), PREFIX + base + order + " LIMIT 3", "q").physical
        assert type(plan.ordered_root).__name__ == "CompiledTopK", order
    plan = register(_engine(True), PREFIX + base + "DESC(?n) LIMIT 3", "q").physical
    assert type(plan.ordered_root).__name__ == "RankedAggregate"
    sorted_relation = Engine(config=EngineConfig(top_k="sorted", subject_disjoint_streams=frozenset({EX + "stream"})))
    plan = register(sorted_relation, PREFIX + base + "DESC(?n) LIMIT 3", "q").physical
    assert type(plan.ordered_root).__name__ == "CompiledTopK"  # the switch that turns ranking off


# Deliberate mistakes in the ranking's C code, each of which the test above must catch.
RANK_MUTATIONS = [
    ("return -1 if (a < b) != self._rank_desc[p] else 1", "return -1 if (a < b) else 1"),
    ("return -1 if key[i] < theirs[i] else 1", "return 1 if key[i] < theirs[i] else -1"),
    ("if self._touched[slot] and (not self._rank.bounded or self._compare(slot, -1) < 0):",
     "if self._touched[slot] and (not self._rank.bounded or self._compare(slot, -1) <= 0) and self._rows[slot] > 1:"),
    # the head shared with the ranked pairs (_ranked_head.pxi)
    ("if found == room and h.compare(h.owner, slot, h.best[found - 1]) >= 0:",
     "if found == room and h.compare(h.owner, slot, h.best[0]) >= 0:", "_ranked_head.pxi"),
    ("        h.set_bound(h.owner, h.best[found - 1])", "        h.set_bound(h.owner, h.best[0])", "_ranked_head.pxi"),
    ("if self._touched[slot] or old is None:", "if old is None:"),
    ("reported = reported or 0 <= i < self._rank_wanted", "reported = reported or 0 <= i < self._rank_offset"),
    ("if self._kinds[j] != K_COUNT and self._errors[slot * self.n_args + j]:",
     "if self._kinds[j] != K_COUNT and self._errors[slot * self.n_args + j] > 1:"),
    ("value[0] = v.data[0] if self._kinds[j] == K_MIN else v.data[v.size - 1]", "value[0] = v.data[0]"),
]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", RANK_MUTATIONS)
def test_a_mutation_of_the_ranking_fails_the_differential_test(tmp_path, mutation: tuple) -> None:
    """The ranked differential test is not vacuous (about 20 s each: a C compile)."""
    module = build_mutant(tmp_path, "_group_table", *mutation)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(globals(), "CGroupTable", module.GroupTable)
        with pytest.raises(AssertionError):
            test_the_ranked_native_table_reports_as_its_twin_and_as_a_full_sort()
