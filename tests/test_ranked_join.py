"""Two GROUP BYs joined on their keys and ranked in C (``RankedJoin``, issue 50): the
engine against the reference interpreter and against the planned join and top-k, after
every event, on generated queries and streams; its hand-overs; Q2 on the sample; mutants
of the C ranking shown to fail the differential test."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import taxi_rsp.engine.native as native
from taxi_rsp.engine.compiled.ranked_join import rank_programs
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.native import CGroupTable, CRankedPairs, native_available
from taxi_rsp.engine.native.encoders import TermEncoders
from taxi_rsp.feeder.reader import Feeder
from taxi_rsp.lang import ast
from taxi_rsp.planner import register
from taxi_rsp.rdf.dictionary import Dictionary
from tests.engine_helpers import play
from tests.native_mutants import build_mutant
from tests.test_compiled_differential import EVENT, EX, PREFIX, decimal

pytestmark = pytest.mark.skipif(not native_available(), reason="the native extension is not built")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
STREAM = f"<{EX}stream>"
# each group over a window (a CompiledAggregate) or over an OPTIONAL's deltas (a
# CompiledGroup)
LEFTS = [
    "{{ SELECT ?k ({a} AS ?a) (MAX(?seq) AS ?fa) WHERE {{ STREAM " + STREAM + " [{window}] "
    "{{ ?e ex:k ?k ; ex:v ?v ; ex:seq ?seq }} }} GROUP BY ?k }}",
    "{{ SELECT ?k ({a} AS ?a) (MAX(?seq) AS ?fa) WHERE {{ STREAM " + STREAM + " [{window}] "
    "{{ ?e ex:k ?k ; ex:seq ?seq }} OPTIONAL {{ STREAM " + STREAM + " [RANGE 1m] {{ ?e ex:v ?v }} }} }} "
    "GROUP BY ?k }}",
]
RIGHTS = [
    "{{ SELECT ?k ({b} AS ?b) (MAX(?seq) AS ?fb) WHERE {{ STREAM " + STREAM + " [RANGE 5m] "
    "{{ ?e ex:k ?k ; ex:w ?w ; ex:seq ?seq }} BIND(?w AS ?x) }} GROUP BY ?k }}",
    "{{ SELECT ?k ({b} AS ?b) (MAX(?seq) AS ?fb) WHERE {{ STREAM " + STREAM + " [RANGE 3m] "
    "{{ ?e ex:k ?k ; ex:seq ?seq }} OPTIONAL {{ STREAM " + STREAM + " [RANGE 1m] {{ ?e ex:w ?w }} }} "
    "BIND(?w AS ?x) }} GROUP BY ?k }}",
]
LEFT_AGGREGATES = ["COUNT(*)", "SUM(?v)", "MEDIAN(?v)", "AVG(?v)", "MIN(?v)", "MAX(?v)"]
RIGHT_AGGREGATES = ["COUNT(*)", "COUNT(?x)", "SUM(?x)", "MEDIAN(?x)", "MAX(?x)"]
ORDERS = ["DESC(?r)", "ASC(?r)", "DESC(?r) DESC(?fresh)", "ASC(?r) DESC(?k)", "DESC(?a) ASC(?b)",
          "DESC(?r) ASC(?fb)", "ASC(?fresh)"]
SCORES = ["?a / ?b", "?a - 2 * ?b", "IF(?a > ?b, ?a, ?b)", "-?a + 0.5", "?a / (?b - ?b)", "?b * ?a / 3",
          "IF(?fa <= ?fb, ?a, -?b)", "?a * 3000000000 * 4000000000"]


GAP = st.sampled_from([0, 0, 0.5, 1, 1, 2, 3])


def typed_events(values: st.SearchStrategy) -> st.SearchStrategy:
    """Streams whose ?v are of one type and whose keys are integers: what the tables and
    the rank programs hold to the end (EVENT's odd values make them hand over)."""
    return st.lists(st.tuples(GAP, st.integers(0, 3), st.one_of(st.none(), values),
                              st.one_of(st.none(), st.integers(-2, 5))), min_size=1, max_size=40)


STREAMS = st.one_of(typed_events(st.integers(-3, 9)), typed_events(st.sampled_from(
    [decimal(text) for text in ("0.5", "2", "2.25", "-1.5", "7.125", "0")])), st.lists(EVENT, min_size=1, max_size=30))


def ranked_join_query(a: str, b: str, right: int, window: str, score: str, order: str, limit: int,
                      offset: int, left: int = 0) -> str:
    return PREFIX + (
        f"SELECT ?k ?a ?b ?r ?fresh WHERE {{ {LEFTS[left].format(a=a, window=window)} {RIGHTS[right].format(b=b)} "
        f"BIND({score} AS ?r) BIND(IF(?fa > ?fb, ?fa, ?fb) AS ?fresh) }} ORDER BY {order} LIMIT {limit}"
        + (f" OFFSET {offset}" if offset else ""))


@st.composite
def ranked_join_queries(draw: st.DrawFn) -> str:
    return ranked_join_query(draw(st.sampled_from(LEFT_AGGREGATES)), draw(st.sampled_from(RIGHT_AGGREGATES)),
                             draw(st.integers(0, 1)), draw(st.sampled_from(["RANGE 1m", "RANGE 2m", "NOW"])),
                             draw(st.sampled_from(SCORES)), draw(st.sampled_from(ORDERS)), draw(st.integers(1, 3)),
                             draw(st.sampled_from([0, 0, 1])), draw(st.integers(0, 1)))


def _engine(**options: object) -> Engine:
    return Engine(config=EngineConfig(subject_disjoint_streams=frozenset({EX + "stream"}), **options))  # type: ignore[arg-type]


def outputs(query: str, events, explain: list | None = None, **options: object) -> list:
    engine = _engine(**options)
    registered = register(engine, query, "q")
    played = play(engine, events)
    if explain is not None:
        explain.append(registered.explain())
    return played


def assert_ranked_join_answers_as_its_oracles(query: str, events) -> str:
    """The ranked join's outputs, event for event, are the reference interpreter's and
    the planned join and top-k's; its explain text."""
    explain: list = []
    ranked = outputs(query, events, explain)
    assert "RankedJoin [specialised]" in explain[0]
    assert ranked == outputs(query, events, compiled=False)
    assert ranked == outputs(query, events, top_k="sorted")
    return explain[0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranked_join_queries(), STREAMS)
@example(ranked_join_query("MEDIAN(?v)", "COUNT(?x)", 1, "RANGE 2m", "?a / ?b", "DESC(?r) DESC(?fresh)", 2, 0),
         [(0, "a", 2, 3), (0.5, "b", 4, 1), (0.5, "a", decimal("2.5"), 2), (1, "b", 1, None), (3, "a", 7, 1)])
@example(ranked_join_query("SUM(?v)", "SUM(?x)", 0, "RANGE 1m", "?a / (?b - ?b)", "ASC(?r) DESC(?k)", 1, 0),
         [(0, 1, 2, 3), (0, 2, 4, 1), (0.5, "a", 1, 2)])  # unbound (a zero divisor) everywhere; keys decide
@example(ranked_join_query("COUNT(*)", "COUNT(*)", 0, "RANGE 2m", "?a - 2 * ?b", "DESC(?r)", 1, 1),
         [(0, 1, 2, 3), (0, 2, 4, 1), (0.5, 1, 1, 2), (0.5, 2, -4, 1)])  # ties by the key ids, with an OFFSET
def test_the_ranked_join_answers_as_the_reference_after_every_event(query: str, events) -> None:
    """Every aggregate the tables hold, rank programs with every operator, unbound values,
    ties, OFFSET; odd values (a string for SUM) make a group hand over, ORDER BY ?k over
    string keys and products beyond 64 bits make the pairs hand over."""
    assert_ranked_join_answers_as_its_oracles(query, events)


def test_the_ranked_join_over_many_groups_answers_as_the_reference() -> None:
    """Hundreds of keys (pairs leave the head, refills scan the rest, equal ratios are
    broken by the freshest trip and the key) on Q2's shape: a median over a count."""
    rng = random.Random(11)
    amounts = [decimal(text) for text in ("1.5", "2", "2.5", "3.25", "0")]  # one type: the table holds them
    events = [(rng.choice([0, 0, 0.1, 0.5]), rng.randrange(300), rng.choice(amounts), rng.choice([None, 1, 2]))
              for _ in range(2500)]
    query = ranked_join_query("MEDIAN(?v)", "COUNT(?x)", 1, "RANGE 2m", "?a / ?b", "DESC(?r) DESC(?fresh)", 10, 0)
    explain = assert_ranked_join_answers_as_its_oracles(query, events)
    assert "RankedJoin: pairs of groups ranked by DESC ?r, DESC ?fresh offset 0 limit 10 (compiled" in explain


def test_the_ranked_join_hands_over_where_it_cannot_rank() -> None:
    """A string key in an ORDER BY of the key (its order is the terms', not a number's)
    halfway: the pairs hand over to the join and the top-k, which answer as the
    reference from then on; so does a group that hands its table over (a string value)."""
    rng = random.Random(5)
    events = [(rng.choice([0, 0.2, 0.5]), rng.randrange(40), rng.choice([1, 2, 3]), rng.choice([1, 2]))
              for _ in range(600)]
    by_key = ranked_join_query("SUM(?v)", "COUNT(*)", 0, "RANGE 2m", "?a / ?b", "DESC(?r) ASC(?k)", 3, 0)
    explain = assert_ranked_join_answers_as_its_oracles(by_key, events)
    assert "RankedJoin: pairs of groups ranked" in explain  # integer keys: ranked to the end
    events[300] = (0, "a string key", 1, 1)
    explain = assert_ranked_join_answers_as_its_oracles(by_key, events)
    assert "RankedJoin (handed over to the join and the top-k: CompiledTopK" in explain
    events[300] = (0, 7, "a string value", 1)
    query = ranked_join_query("SUM(?v)", "COUNT(*)", 0, "RANGE 2m", "?a / ?b", "DESC(?r)", 3, 0)
    explain = assert_ranked_join_answers_as_its_oracles(query, events)
    assert "RankedJoin (handed over" in explain and "(reference" in explain


def test_q2_on_the_sample_is_ranked_in_the_tables_and_answers_as_planned_before() -> None:
    """Q2 (queries/q2.cqels) on the bundled 10,004 lines: the same outputs as the join and
    top-k, with its pairs ranked in C to the end."""
    text = (ROOT / "queries" / "q2.cqels").read_text()
    answers = []
    for engine in (Engine(), Engine(top_k="sorted")):
        query = register(engine, text, "q2")
        lines: list = []
        query.listeners.append(lambda output, lines=lines: lines.append((output.trigger.time, output.terms())))
        for event in Feeder(SAMPLE, engine.dictionary):
            engine.process(event)
        answers.append(lines)
        root = query.physical.ordered_root
        assert type(root).__name__ == ("RankedJoin" if len(answers) == 1 else "CompiledTopK")
        assert root.mode == "compiled"
    assert len(answers[0]) > 100 and answers[0] == answers[1]


def test_what_has_no_rank_program_keeps_the_join_and_top_k() -> None:
    """A string function, a comparison as a value, keys that differ between the groups:
    the planned join and top-k."""
    def var(name: str) -> ast.Var:
        return ast.Var(name)
    assert rank_programs([(ast.Call("STR", (var("a"),)), False)], {}, ("k",), ("a",), ("b",)) is None
    assert rank_programs([(ast.Call(">", (var("a"), var("b"))), False)], {}, ("k",), ("a",), ("b",)) is None
    assert rank_programs([(var("c"), True)], {"c": ast.Call("+", (var("a"), var("b")))}, ("k",), ("a",), ("b",)) \
        == [(((1, 0, 0, 0), (1, 1, 0, 0), (4, 0, 0, 0)), True)]
    string_score = ranked_join_query("SUM(?v)", "COUNT(*)", 0, "RANGE 2m", "STR(?a)", "DESC(?r)", 3, 0)
    plan = register(_engine(), string_score, "q").physical
    assert type(plan.ordered_root).__name__ == "CompiledTopK"


@st.composite
def pair_scripts(draw: st.DrawFn) -> tuple:
    """Two tables of deltas over a few keys, a ranking with a small head (pairs move
    between head and rest, the head runs short and is refilled), a sequence of pushes
    (values only added and removed as held) and flushes."""
    capacity = draw(st.integers(1, 4))
    limit = draw(st.integers(1, capacity))
    offset = draw(st.integers(0, capacity - limit))
    held: dict = {}
    script = []
    for _ in range(draw(st.integers(1, 60))):
        side, key = draw(st.integers(0, 1)), draw(st.integers(0, 7))
        values = held.setdefault((side, key), [])
        if values and draw(st.booleans()):
            script.append(("push", side, key, values.pop(draw(st.integers(0, len(values) - 1))), -1))
        else:
            value = draw(st.integers(-5, 9))
            values.append(value)
            script.append(("push", side, key, value, 1))
        if draw(st.integers(0, 2)) == 0:
            script.append(("flush",))
    return capacity, limit, offset, script + [("flush",)]


def brute_force_pairs(held: dict, offset: int, limit: int) -> list[int]:
    """The keys of the pairs ``offset`` to ``offset + limit`` by DESC(SUM(left) / COUNT(right)),
    ASC(MEDIAN(left)), then the key: the rank order, by a sort of every pair."""
    from fractions import Fraction
    from statistics import median

    ranked = []
    for key in range(8):
        left, right = held.get((0, key), []), held.get((1, key), [])
        if left and right:
            ranked.append(((0, -Fraction(sum(left), len(right))), (1, Fraction(median(sorted(left)))), key))
    return [key for *_, key in sorted(ranked)][offset:offset + limit]


@settings(max_examples=300, deadline=None)
@given(pair_scripts())
@example((1, 1, 0, [("push", 0, 1, 2, 1), ("push", 1, 1, 1, 1), ("push", 0, 2, 1, 1), ("push", 1, 2, 1, 1),
                    ("flush",), ("push", 0, 1, 2, -1), ("flush",)]))  # the head runs short: refilled from one pair
def test_the_pairs_report_as_a_sort_of_every_pair(script) -> None:
    """The C pairs with a small head, after every flush, against a full sort."""
    capacity, limit, offset, operations = script
    tables = [CGroupTable(1, ("SUM", "MEDIAN"), False, False), CGroupTable(1, ("COUNT",), False, False)]
    encoders = TermEncoders(Dictionary())
    for table, scales in zip(tables, ([None, None], [None])):
        table.set_results(scales, encoders)
    ratio = ((1, 0, 0, 0), (1, 1, 0, 0), (7, 0, 0, 0))  # SUM(left) / COUNT(right)
    pairs = CRankedPairs(tables[0], tables[1], [(ratio, True), (((1, 0, 1, 0),), False)], offset, limit, capacity)
    held: dict = {}
    reported: list = []
    for operation in operations:
        if operation[0] == "push":
            _, side, key, value, mult = operation
            key_id = encoders.int_id(key)
            tables[side].push((key_id,), (value, value) if side == 0 else (1,), mult)  # COUNT adds its 1s
            values = held.setdefault((side, key), [])
            values.append(value) if mult > 0 else values.remove(value)
            continue
        rows = pairs.flush(lambda row: row)
        if rows is not None:
            assert rows != reported
            reported = rows
        assert [encoders.dictionary.value(row[0]) for row in reported] == brute_force_pairs(held, offset, limit)
    assert pairs.pair_count() == sum(1 for key in range(8) if held.get((0, key)) and held.get((1, key)))


def test_rank_programs_are_checked_against_the_tables() -> None:
    left, right = CGroupTable(1, ("COUNT",)), CGroupTable(1, ("MAX",), False, False)
    for program in ([(1, 0, 3, 0)], [(2, 1, 0, 0)], [(3, 1, 0, 0)], [(4, 0, 0, 0)], [(1, 0, 0, 0), (1, 0, 0, 0)],
                    [(1, 0, 0, 0), (9, 1, 0, 0)], [(42, 0, 0, 0)]):
        with pytest.raises(ValueError):
            CRankedPairs(left, right, [(program, True)], 0, 3)
    with pytest.raises(ValueError):
        CRankedPairs(left, CGroupTable(2, ("COUNT",)), [([(1, 0, 0, 0)], True)], 0, 3)  # key widths differ
    with pytest.raises(ValueError):
        CRankedPairs(left, right, [([(1, 0, 0, 0)], True)], 0, 3, 2)  # a head shorter than the report


# Deliberate mistakes in the pairs' C code (native/_ranked_pairs.pxi), each of which the
# differential tests above must catch.
PAIR_MUTATIONS = [
    ("return -c if self.desc[p] else c", "return c"),  # descending ignored
    ("return -1 if key[i] < their_key[i] else 1", "return 1 if key[i] < their_key[i] else -1"),  # ties reversed
    ("return _reduced(v.n, v.d)\n\n    cdef Val _key_part", "return _reduced(v.n + v.n, v.d)\n\n    cdef Val _key_part"),
    ("low, high = vec.data[size // 2 - 1], vec.data[size // 2]", "low, high = vec.data[size // 2], vec.data[size // 2]"),
    ("stack[top - 1].bound = False  # division by zero: an error", "stack[top - 1] = a  # mutant"),
    ("stack[top] = t if holds else e", "stack[top] = t"),
    ("out[3 * p] = (1 - self.desc[p]) if v.bound else self.desc[p]", "out[3 * p] = 1 if v.bound else 0"),
    ("                if r >= 0 and right._rows[r] == 0:\n", "                if r >= 0 and right._rows[r] < 0:\n"),
    ("            self.rows[l] = None\n", "\n"),
    ("if self.rank.size < self.wanted and self.n_pairs > self.rank.size:",
     "if self.rank.size < self.wanted and self.n_pairs > self.rank.size + 1:"),
    ("return (<RankedPairs> owner).lpart[l] >= 0 and not (<RankedPairs> owner).rank.member[l]",
     "return not (<RankedPairs> owner).rank.member[l]"),  # unpaired slots refilled into the head
]


def _differential_suite() -> None:
    with pytest.MonkeyPatch.context() as patch:  # the table-level test reads the module's names
        patch.setitem(globals(), "CGroupTable", native.CGroupTable)
        patch.setitem(globals(), "CRankedPairs", native.CRankedPairs)
        test_the_pairs_report_as_a_sort_of_every_pair()
    test_the_ranked_join_over_many_groups_answers_as_the_reference()
    test_the_ranked_join_answers_as_the_reference_after_every_event()
    test_q2_on_the_sample_is_ranked_in_the_tables_and_answers_as_planned_before()


@pytest.mark.slow
@pytest.mark.parametrize("original, mutant", PAIR_MUTATIONS)
def test_a_mutation_of_the_pairs_fails_the_differential_tests(tmp_path, original: str, mutant: str) -> None:
    """The differential tests are not vacuous (about 30 s each: a C compile)."""
    module = build_mutant(tmp_path, "_group_table", original, mutant, source="_ranked_pairs.pxi")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "CGroupTable", module.GroupTable)
        patch.setattr(native, "CRankedPairs", module.RankedPairs)
        # a wrong answer, several (hypothesis groups distinct failures), or a row the
        # mutant built from a slot without a group (its key None)
        with pytest.raises((AssertionError, ExceptionGroup, TypeError)):
            _differential_suite()
