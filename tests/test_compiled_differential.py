"""Differential property: compiled plans (taxi_rsp.engine.compiled) and the reference
operators give identical outputs after every event, on hypothesis-generated streams and
queries — windows, FILTER/BIND, every aggregate (DISTINCT too), grouping on input and
computed keys, ORDER BY/LIMIT, joins, MINUS, OPTIONAL, and values of mixed types (which
send rows down the slow path and make the compiled operator hand over to the reference).
"""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.native.program import programs_available
from taxi_rsp.rdf.terms import Literal
from taxi_rsp.planner import register
from tests.engine_helpers import EX, Stream, play

XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIX = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


def decimal(text: str) -> Literal:
    return Literal(text, XSD + "decimal")


NUMBERS = st.sampled_from([1, 2, 3, 7, 0, -4, decimal("2.5"), decimal("0.125"), decimal("-1.75"), decimal("3")])
ODD_VALUES = st.sampled_from(["text", Literal("x", None, "en"), True])
VALUE = st.one_of(NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS, NUMBERS, ODD_VALUES)
KEYS = st.sampled_from(["a", "b", "c", 1, 2])
EVENT = st.tuples(
    st.sampled_from([0, 0, 0.5, 1, 1, 2, 3, 5, 11]),  # minutes after the previous event
    KEYS,
    st.one_of(st.none(), VALUE),  # ex:v (absent: the pattern does not match)
    st.one_of(st.none(), NUMBERS),  # ex:w
)

AGGREGATES = ["COUNT(*)", "COUNT(?x)", "SUM(?x)", "MIN(?x)", "MAX(?x)", "AVG(?x)", "MEDIAN(?x)",
              "COUNT(DISTINCT ?x)", "MAX(?seq)", "MEDIAN(?seq)", "MIN(?w)"]
WINDOWS = ["RANGE 1m", "RANGE 2m", "RANGE 5m", "NOW", "RANGE 30s", "RANGE 2m SLIDE 1m", "RANGE 1m SLIDE 2m"]


@st.composite
def aggregate_queries(draw) -> str:
    window = draw(st.sampled_from(WINDOWS))
    with_w = draw(st.booleans())
    block = "?e ex:k ?k ; ex:v ?v ; ex:seq ?seq" + (" ; ex:w ?w" if with_w else "")
    body = [f"STREAM <{EX}stream> [{window}] {{ {block} }}"]
    body.append(draw(st.sampled_from(["BIND(?v AS ?x)", "BIND(?v * 2 AS ?x)", "BIND(?v + ?seq AS ?x)",
                                      "BIND(?v / 2 AS ?x)", "BIND(FLOOR(?v) AS ?x)"])))
    body.append(draw(st.sampled_from(["", "FILTER(?seq > 2)", "FILTER(?x >= 0)", "FILTER(?k != \"c\")"])))
    key = draw(st.sampled_from(["?k", "", "?g"]))
    if key == "?g":
        body.append('BIND(CONCAT(STR(?k), "-", STR(?seq - 2 * FLOOR(?seq / 2))) AS ?g)')
    names = AGGREGATES if with_w else [a for a in AGGREGATES if "?w" not in a]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    select = " ".join(f"({a} AS ?a{i})" for i, a in enumerate(chosen))
    query = f"SELECT {key} {select} WHERE {{ {' '.join(body)} }}"
    if key:
        query += f" GROUP BY {key}"
    if draw(st.booleans()):
        query += f" ORDER BY DESC(?a0) {key.replace('?', 'ASC(?') + ')' if key else ''} LIMIT 3"
    return PREFIX + query


JOIN_QUERIES = [
    # two compiled groups joined, a ratio, a top-k (the Q2 shape on another stream)
    """SELECT ?k ?r WHERE {
         { SELECT ?k (MEDIAN(?v) AS ?m) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k }
         { SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s } } GROUP BY ?k }
         BIND(?m / ?n AS ?r)
       } ORDER BY DESC(?r) ASC(?k) LIMIT 2""",
    # every aggregate over a UNION (any value may leave: sorted lists), keyed and not
    """SELECT ?k (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (MEDIAN(?v) AS ?m) (SUM(?v) AS ?s) (AVG(?v) AS ?a)
              (COUNT(?v) AS ?n) WHERE {
         { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v } }
         UNION { STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:w ?v } }
       } GROUP BY ?k""",
    """SELECT (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (MEDIAN(?v) AS ?m) (SUM(?v) AS ?s) (COUNT(*) AS ?n) WHERE {
         { STREAM <%sstream> [RANGE 1m] { ?e ex:w ?v } } UNION { STREAM <%sstream> [RANGE 30s] { ?e ex:seq ?v } }
       }""",
    # a ratio whose divisor can be zero or negative, also projected and reused in a BIND
    """SELECT ?k ?r ?r2 WHERE {
         { SELECT ?k (MAX(?v) AS ?m) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k }
         { SELECT ?k (SUM(?w) AS ?t) (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:w ?w } } GROUP BY ?k }
         BIND(?m / ?t AS ?r)
         BIND(?n / ?m AS ?q)
         BIND(?q * 2 AS ?r2)
       } ORDER BY ASC(?r) DESC(?q) LIMIT 3""",
    # a group over MINUS (stays on the reference) next to a compiled one
    """SELECT ?k (COUNT(*) AS ?n) WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 > ?s) }
       } GROUP BY ?k""",
    # FILTER EXISTS with a correlated condition, and MINUS, without grouping (row order matters)
    """SELECT ?e ?k WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         FILTER EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:v ?v } FILTER(?v > 1) }
       }""",
    """SELECT ?e ?k WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }
       }""",
    # correlated comparisons of numbers of mixed signs and types, and of strings: the
    # compiled condition compares ids only while both are non-negative numbers of one type
    """SELECT ?e ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w2 } FILTER(?w2 > ?w) }
       }""",
    """SELECT ?e ?v WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         FILTER EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:v ?v2 } FILTER(?v <= ?v2) }
       }""",
    """SELECT ?e ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:w ?w }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w2 } FILTER(?w2 = ?w && ?f != ?e) }
       }""",
    # OPTIONAL without grouping (row order matters): several left and right rows per key,
    # padded rows giving way to merged ones and back; and with a correlated inner FILTER
    """SELECT ?e ?k ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k }
         OPTIONAL { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }
       }""",
    """SELECT ?e ?s ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
         OPTIONAL { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w ; ex:seq ?s2 } FILTER(?s2 > ?s) }
       }""",
    # NOT EXISTS on a variable that OPTIONAL may leave unbound: hands over to the reference
    """SELECT ?e ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k }
         OPTIONAL { STREAM <%sstream> [RANGE 2m] { ?e ex:w ?w } }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:v ?w ; ex:seq ?s } }
       }""",
    # a join whose shared variable is sometimes unbound (from OPTIONAL): the hash join
    # hands over to the reference's wildcard probing
    """SELECT ?k ?w ?n WHERE {
         { SELECT ?w (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:w ?w } } GROUP BY ?w }
         { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k } OPTIONAL { STREAM <%sstream> [RANGE 1m] { ?f ex:w ?w } } }
       }""",
    # a plain join of two windows, several rows per key, without ORDER BY (row order matters)
    """SELECT ?k ?v ?w WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w }
       }""",
    # a group over a join with a projection below it: rows arrive with multiplicities
    # above one (a key held twice on one side), and leave so
    """SELECT ?k (MEDIAN(?v) AS ?m) (MIN(?v) AS ?lo) (COUNT(*) AS ?n) WHERE {
         { SELECT ?k WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k } } }
         STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:v ?v }
       } GROUP BY ?k""",
    # OPTIONAL inside the block: group over a left join
    """SELECT ?k (COUNT(?w) AS ?n) (SUM(?v) AS ?t) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         OPTIONAL { STREAM <%sstream> [RANGE 2m] { ?e ex:w ?w } }
       } GROUP BY ?k""",
]


def _engine(compiled: bool) -> Engine:
    """An engine whose test stream is declared subject-disjoint (every event here is a
    star on a fresh subject ex:eN): its blocks are matched per event, so the window
    aggregates, top-k and joins under test are the ones a star over the Feeder gets."""
    return Engine(config=EngineConfig(compiled=compiled, subject_disjoint_streams=frozenset({EX + "stream"})))


def _outputs(query: str, events, compiled: bool, explain: list | None = None, stars: bool = False) -> list:
    engine = _engine(compiled)
    registered = register(engine, query, "q")
    outputs = play(engine, events, stars)
    if explain is not None:
        explain.append(registered.explain())
    return outputs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aggregate_queries(), st.lists(EVENT, min_size=1, max_size=30))
def test_compiled_aggregates_equal_the_reference(query: str, events) -> None:
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


# Star blocks a native program reads from a star graph itself (a constant object, a
# variable twice, a constant subject) or never (a predicate the layout has but no event
# carries, one the layout lacks).
STAR_QUERIES = [
    'SELECT (COUNT(*) AS ?n) (SUM(?v) AS ?s) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k "a" ; ex:v ?v } }',
    "SELECT ?k (COUNT(*) AS ?n) (MEDIAN(?x) AS ?m) WHERE { STREAM <%sstream> [RANGE 2m] "
    "{ ?e ex:k ?k ; ex:v ?x ; ex:w ?x } } GROUP BY ?k",
    "SELECT ?k (MAX(?v) AS ?m) WHERE { STREAM <%sstream> [RANGE 5m] { ex:e3 ex:k ?k ; ex:v ?v } } GROUP BY ?k",
    "SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:u ?u } } GROUP BY ?k",
    "SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:nowhere ?z } } GROUP BY ?k",
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(aggregate_queries(), st.sampled_from(STAR_QUERIES).map(lambda t: PREFIX + t.replace("%s", EX))),
       st.lists(EVENT, min_size=1, max_size=30))
@example(query=PREFIX + STAR_QUERIES[0].replace("%s", EX),  # an absent object; another constant
         events=[(0, "a", 2, None), (0, "b", 3, None), (1, "a", None, 1), (0.5, "a", 4, None)])
@example(query=PREFIX + STAR_QUERIES[1].replace("%s", EX),  # a variable twice, equal and not
         events=[(0, "a", 2, 2), (0, "a", 1, 2), (1, "b", decimal("2.5"), decimal("2.5")), (1, "a", 3, 3)])
@example(query=PREFIX + STAR_QUERIES[2].replace("%s", EX),  # the constant subject and others
         events=[(0, "a", 1, None), (0, "b", 2, None), (0.5, "c", 3, None), (1, "a", 4, None)])
def test_compiled_aggregates_reading_star_graphs_equal_the_reference(query: str, events) -> None:
    """Events whose graphs are star graphs (the Feeder's kind), which a native program
    reads itself, give what the reference gives from the same triples."""
    assert _outputs(query, events, compiled=True, stars=True) == _outputs(query, events, compiled=False)


def test_a_native_program_reads_star_graphs_and_says_so() -> None:
    explain: list[str] = []
    events = [(0, "a", 2, 2), (1, "b", 3, 3)]
    query = PREFIX + STAR_QUERIES[1].replace("%s", EX)
    _outputs(query, events, compiled=True, explain=explain, stars=True)
    assert "reads star graphs" in explain[0] or not programs_available()
    _outputs(query, events, compiled=True, explain=explain)
    assert "reads star graphs" not in explain[1]  # tuples of triples go through the matcher


def test_a_group_emptied_of_decimals_as_an_integer_arrives_sums_as_the_reference() -> None:
    """Key a's decimal 2.5 expires in the instant its integer 1 arrives: the integer makes
    the compiled group hand over, and the reference group it replays keeps the decimal
    total the reference's own group holds until it is dropped at a flush (SUM 1.0)."""
    query = PREFIX + f"""SELECT ?k (COUNT(*) AS ?n) (SUM(?v) AS ?s) (AVG(?v) AS ?a) WHERE {{
        STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:k ?k ; ex:v ?v }} }} GROUP BY ?k"""
    events = [(0, "a", decimal("2.5"), None), (1, "a", 1, None)]
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


def test_a_group_over_deltas_emptied_of_decimals_as_an_integer_arrives_sums_as_the_reference() -> None:
    """The same instant over deltas (a GROUP BY above an OPTIONAL): key a's decimal 2.5
    leaves as its integer 1 arrives, which makes the compiled group hand over; the
    reference group it is given keeps the decimal total (its held flag), SUM 1.0."""
    query = PREFIX + f"""SELECT ?k (COUNT(*) AS ?n) (SUM(?v) AS ?s) (AVG(?v) AS ?a) WHERE {{
        STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:k ?k ; ex:v ?v }}
        OPTIONAL {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:w ?w }} }} }} GROUP BY ?k"""
    events = [(0, "a", decimal("2.5"), None), (1, "a", 1, None)]
    explain: list[str] = []
    compiled = _outputs(query, events, compiled=True, explain=explain)
    assert "CompiledGroup" in explain[0] and "(reference)" in explain[0], explain[0]
    assert compiled == _outputs(query, events, compiled=False)


@pytest.mark.parametrize("template", JOIN_QUERIES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=30))
def test_compiled_plans_inside_larger_plans_equal_the_reference(template: str, events) -> None:
    query = PREFIX + template.replace("%s", EX)
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


def test_the_planner_compiles_group_over_window_and_says_so() -> None:
    engine = _engine(True)
    query = register(engine, PREFIX + f"SELECT ?k (MEDIAN(?v) AS ?m) WHERE {{ STREAM <{EX}stream> [RANGE 1m] "
                            "{ ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k", "q")
    assert "CompiledAggregate" in query.explain()
    reference = register(_engine(False), PREFIX + f"SELECT ?k (MEDIAN(?v) AS ?m) WHERE {{ STREAM "
                                                f"<{EX}stream> [RANGE 1m] {{ ?e ex:k ?k ; ex:v ?v }} }} GROUP BY ?k", "q")
    assert "CompiledAggregate" not in reference.explain()


def test_a_value_of_another_type_hands_over_to_the_reference_without_changing_results() -> None:
    text = PREFIX + f"SELECT ?k (MAX(?v) AS ?m) (MEDIAN(?v) AS ?d) WHERE {{ STREAM <{EX}stream> [RANGE 2m] " \
                    "{ ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k"
    events = [(0, "a", 3, None), (1, "a", decimal("2.5"), None), (1, "a", "text", None), (3, "a", 4, None)]
    explain: list[str] = []
    compiled = _outputs(text, events, compiled=True, explain=explain)
    assert "(reference)" in explain[0]  # the string made it hand over
    assert compiled == _outputs(text, events, compiled=False)
    assert [tuple(t.lexical for t in row) for row in compiled[0][2]] == [("a", "3", "3")]
    assert [tuple(t.lexical for t in row) for row in compiled[1][2]] == [("a", "3", "2.75")]


def test_a_top_k_that_handed_over_reports_every_later_change() -> None:
    """The compiled top-k's change flag mirrors the reference's once it answers: every
    change after the hand-over (a string among the numbers) is reported, none twice."""
    text = PREFIX + f"SELECT ?k ?v WHERE {{ STREAM <{EX}stream> [RANGE 3m] {{ ?e ex:k ?k ; ex:v ?v }} }} " \
                    "ORDER BY DESC(?v) ?k LIMIT 2"
    events = [(0, "a", 3, None), (0.5, "b", 5, None), (0.5, "c", "text", None), (0.5, "d", 1, None),
              (0.5, "e", 9, None), (0.5, "f", 2, None), (2, "g", 4, None), (2, "h", 0, None)]
    explain: list[str] = []
    compiled = _outputs(text, events, compiled=True, explain=explain)
    assert "CompiledTopK" in explain[0] and "(reference)" in explain[0]
    assert compiled == _outputs(text, events, compiled=False)
    assert len(compiled) >= 5  # changes before, at and after the hand-over, and by expiry


def test_ratio_keys_are_reduced_with_a_positive_denominator() -> None:
    from taxi_rsp.engine.compiled.topk import CompiledTopK, _Rational
    from taxi_rsp.engine.ops.topk import TopKOp
    from taxi_rsp.rdf.dictionary import Dictionary

    d = Dictionary()
    topk = CompiledTopK((), [], 1, 0, False, TopKOp((), [], 1, 0, False), d)
    three, minus_four, half = d.integer_id(3), d.integer_id(-4), d.decimal_id(5, 1)
    assert topk._ratio_ascending(three, minus_four) == (-0.75, _Rational(-3, 4))
    assert topk._ratio_descending(half, minus_four) == (0.125, _Rational(1, 8))
    # the same value from different representations gives equal keys
    assert topk._ratio_ascending(d.integer_id(1), d.integer_id(2)) == topk._ascending(half)
    assert _Rational(-3, 4) < _Rational(-1, 2) and not _Rational(1, 2) < _Rational(2, 4)


def test_ratio_keys_whose_floats_tie_but_values_differ_order_exactly() -> None:
    """1/3 and 111111111111111111/333333333333333334 round to the same float: the exact
    parts decide, under every operator a tuple comparison may apply to them (before
    stop 24 only < was defined, and the top-k's `key <= last key` raised TypeError)."""
    text = PREFIX + f"SELECT ?k ?r WHERE {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:k ?k ; ex:v ?v ; ex:w ?w }} " \
                    "BIND(?v / ?w AS ?r) } ORDER BY DESC(?r) LIMIT 2"
    events = [(0, "a", 1, 3), (0.1, "b", 111111111111111111, 333333333333333334), (0.1, "c", 2, 6),
              (0.1, "d", 1, 4), (0.1, "e", 111111111111111112, 333333333333333334)]
    compiled = _outputs(text, events, compiled=True)
    assert compiled == _outputs(text, events, compiled=False)
    assert [[row[0].lexical for row in rows] for _, _, rows, _ in compiled][-1] == ["e", "a"]
    assert _rationals_order_under_every_operator()


def _rationals_order_under_every_operator() -> bool:
    from taxi_rsp.engine.compiled.topk import _Rational

    small, large = _Rational(1, 3), _Rational(111111111111111112, 333333333333333334)
    return (small < large and small <= large and large > small and large >= small and small != large
            and not small == large)


def test_an_emptied_sum_of_decimals_is_a_decimal_zero_like_the_reference() -> None:
    text = PREFIX + f"SELECT (SUM(?v) AS ?s) WHERE {{ STREAM <{EX}stream> [RANGE 1m] {{ ?e ex:v ?v }} }}"
    events = [(0, "a", decimal("2.5"), None), (5, "a", None, None)]
    compiled = _outputs(text, events, compiled=True)
    assert compiled == _outputs(text, events, compiled=False)
    assert [row[0].lexical for _, _, rows, _ in compiled for row in rows] == ["2.5", "0.0"]


def test_a_hand_over_in_the_middle_of_a_batch_passes_the_rest_of_the_batch_on() -> None:
    """A batch of deltas (static data, a burst of expiries) whose middle row does not fit
    the compiled kinds: the rows after it must reach the reference too."""
    from taxi_rsp.engine.compiled.group import CompiledGroup
    from taxi_rsp.engine.expr import compile_expr
    from taxi_rsp.engine.ops.group import GroupOp
    from taxi_rsp.lang import ast
    from taxi_rsp.rdf.dictionary import Dictionary

    d = Dictionary()
    schema = ("k", "v")
    arg = ast.Var("v")
    closure = compile_expr(arg, {"k": 0, "v": 1}, d)
    spec = [("s", "SUM", False, arg, closure)]
    batch = [((d.encode_value(k), d.encode_value(v)), 1)
             for k, v in (("a", 1), ("b", 2), ("a", "text"), ("b", 5), ("c", 7))]
    results = []
    for compiled in (True, False):
        reference = GroupOp(schema, ("k",), [(v, n, dist, c) for v, n, dist, _, c in spec], d)
        op = CompiledGroup(schema, ("k",), spec, reference, d) if compiled else reference
        seen: list = []
        op.connect(seen.extend)
        op.push(batch)
        op.flush()
        results.append(sorted((tuple(d.value(x) if x is not None else None for x in row), m) for row, m in seen))
    assert results[0] == results[1]
    assert (("c", 7), 1) in results[0] and (("b", 7), 1) in results[0]


TOPK_QUERIES = [
    # many groups, few reported: most keys wait outside the sorted head (ordered by a key
    # too, which the group table does not rank: see test_ranked_table.py)
    """SELECT ?g (COUNT(*) AS ?n) (MAX(?s) AS ?f) WHERE {
         STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s }
         BIND(?s - 7 * FLOOR(?s / 7) AS ?g)
       } GROUP BY ?g ORDER BY DESC(?n) DESC(?f) ?g LIMIT 2""",
    JOIN_QUERIES[0],  # the Q2 shape: a ratio key over a join of two groups
    """SELECT ?k (SUM(?v) AS ?t) (MIN(?w) AS ?lo) WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:v ?v ; ex:w ?w } }
       GROUP BY ?k ORDER BY ASC(?t) DESC(?lo) ?k LIMIT 2""",
    """SELECT ?s ?v WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:v ?v ; ex:seq ?s } }
       ORDER BY ?v DESC(?s) LIMIT 1 OFFSET 1""",
]
# integers only: the compiled top-k keeps its keys (no hand-over)
TOPK_EVENT = st.tuples(st.sampled_from([0, 0, 0.5, 1, 1, 2, 3, 5, 11]), st.integers(1, 6),
                       st.one_of(st.none(), st.integers(-3, 9)), st.one_of(st.none(), st.integers(1, 4)))


@pytest.mark.parametrize("template", TOPK_QUERIES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(TOPK_EVENT, min_size=1, max_size=40))
def test_a_top_k_whose_head_holds_only_the_reported_rows_equals_the_reference(template: str, events) -> None:
    """The compiled top-k keeps only its best keys sorted (the head) and the others in an
    unsorted rest, refilling the head when it runs short: with the head's capacity cut to
    the rows reported, every spill, refill and removal from the rest is exercised."""
    from taxi_rsp.engine.compiled import topk

    query = PREFIX + template.replace("%s", EX)
    saved = topk.HEAD_MIN, topk.HEAD_SLACK
    topk.HEAD_MIN, topk.HEAD_SLACK = 1, 1
    try:
        explain: list[str] = []
        compiled = _outputs(query, events, compiled=True, explain=explain)
    finally:
        topk.HEAD_MIN, topk.HEAD_SLACK = saved
    assert "CompiledTopK offset" in explain[0] and "(reference)" not in explain[0]
    assert compiled == _outputs(query, events, compiled=False)


# the first ORDER BY part readable alone (an integer count, a ratio of a median and a count,
# a number), a later part of any type (MAX of mixed values): rows placed in the rest by their first part
# alone may hold a key the compiled top-k cannot compute, found only when a refill needs it
LAZY_KEY_QUERIES = [
    """SELECT ?k (COUNT(*) AS ?n) (MAX(?v) AS ?hi) WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:v ?v } }
       GROUP BY ?k ORDER BY DESC(?n) DESC(?hi) ?k LIMIT 1""",  # (?k: a top-k, not a ranked table)
    """SELECT ?k ?r ?hi WHERE {
         { SELECT ?k (MEDIAN(?w) AS ?m) (MAX(?v) AS ?hi) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v ; ex:w ?w } } GROUP BY ?k }
         { SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 5m] { ?e ex:k ?k ; ex:seq ?s } } GROUP BY ?k }
         BIND(?m / ?n AS ?r)
       } ORDER BY DESC(?r) ASC(?hi) LIMIT 1""",
    # a number read as its float first (decimals and integers mixed), then a value of any type
    """SELECT ?e ?w ?v WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:w ?w ; ex:v ?v } } ORDER BY DESC(?w) ASC(?v) LIMIT 1""",
]


@pytest.mark.parametrize("template", LAZY_KEY_QUERIES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
# b ties the head's first part (the ratio 2, the count 1) and wins on the next: not the rest
@example(events=[(0, "a", 5, 2), (0, "c", 1, 1), (0, "b", 1, 2)])
# c's decimal -0.5 sorts before the head's -1.75 (DESC): read as its value, not its payload
@example(events=[(0, "a", 1, decimal("-1.75")), (0, "b", 1, -4), (0, "c", 1, decimal("-0.5"))])
def test_rest_rows_keyed_only_when_a_refill_needs_them_equal_the_reference(template: str, events) -> None:
    """A new row whose first key part alone sorts after the head waits in the rest without
    a key; a refill computes the missing keys and hands over when one cannot be compiled.
    With the head cut to the rows reported, every such path runs."""
    from taxi_rsp.engine.compiled import topk

    query = PREFIX + template.replace("%s", EX)
    saved = topk.HEAD_MIN, topk.HEAD_SLACK
    topk.HEAD_MIN, topk.HEAD_SLACK = 1, 1
    try:
        compiled = _outputs(query, events, compiled=True)
    finally:
        topk.HEAD_MIN, topk.HEAD_SLACK = saved
    assert compiled == _outputs(query, events, compiled=False)


def test_a_rest_row_without_a_key_is_keyed_by_the_refill_that_needs_it() -> None:
    """Key ``a`` (two rows) heads the ranking; ``b`` and ``c`` (one row each) join the rest
    by their count alone - ``c``'s MAX is a string, outside the compiled key, and nothing
    notices while it waits. When ``a`` leaves the window the head refills, computes ``c``'s
    key, and hands over to the reference, whose reports match the reference engine's."""
    from taxi_rsp.engine.compiled import topk

    query = PREFIX + LAZY_KEY_QUERIES[0].replace("%s", EX)
    events = [(0, "a", 1, None), (0, "a", 2, None), (1, "b", 1, None), (1, "c", "text", None)]
    saved = topk.HEAD_MIN, topk.HEAD_SLACK
    topk.HEAD_MIN, topk.HEAD_SLACK = 1, 1
    try:
        engine = _engine(True)
        registered = register(engine, query, "q")
        (op,) = [o for o in registered.physical.operators if isinstance(o, topk.CompiledTopK)]
        modes = []
        stream = Stream(engine)
        minute = 0.0
        for n, (gap, key, v, _) in enumerate(events, 1):
            minute += gap
            stream.send(minute, (f"ex:e{n}", "ex:k", key), (f"ex:e{n}", "ex:v", v))
            modes.append(op.mode)
        stream.send(minute + 3.5, ("ex:e9", "ex:k", "e"), ("ex:e9", "ex:v", 1))  # a's rows have left
        modes.append(op.mode)
    finally:
        topk.HEAD_MIN, topk.HEAD_SLACK = saved
    assert modes == ["compiled"] * 4 + ["reference"]
    expected = _outputs(query, events + [(3.5, "e", 1, None)], compiled=False)
    assert [(o.trigger.time, o.trigger.is_expiry, o.terms(), o.terms(o.deleted)) for o in stream.outputs] == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 2, 5]), st.sampled_from(["b", "a", "c", "ab", ""]),
                                 st.one_of(st.none(), st.integers(-3, 9)), st.none()), min_size=1, max_size=40))
def test_a_string_sort_key_stays_compiled_and_orders_like_the_reference(events) -> None:
    """ORDER BY a string variable (ascending, a tie-break such as ?taxi): the compiled
    key compares the texts, as the reference orders strings among themselves."""
    query = PREFIX + f"""SELECT ?k (COUNT(*) AS ?n) WHERE {{ STREAM <{EX}stream> [RANGE 2m] {{ ?e ex:k ?k ; ex:seq ?s }} }}
        GROUP BY ?k ORDER BY DESC(?n) ?k LIMIT 2"""
    explain: list[str] = []
    compiled = _outputs(query, events, compiled=True, explain=explain)
    assert "CompiledTopK offset 0 limit 2 (compiled)" in explain[0]
    assert compiled == _outputs(query, events, compiled=False)


OPTIONAL_GROUPS = [
    """SELECT ?k (MEDIAN(?w) AS ?m) (SUM(?w) AS ?s) (MIN(?w) AS ?lo) (MAX(?w) AS ?hi) (AVG(?w) AS ?a)
              (COUNT(?w) AS ?n) (COUNT(*) AS ?all) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s0 }
         OPTIONAL { STREAM <%sstream> [RANGE 1m] { ?e ex:w ?w } }
       } GROUP BY ?k""",
    """SELECT (SUM(?w) AS ?s) (MEDIAN(?w) AS ?m) (COUNT(*) AS ?n) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:seq ?s0 }
         OPTIONAL { STREAM <%sstream> [RANGE 30s] { ?e ex:w ?w } }
       }""",
]


@pytest.mark.parametrize("template", OPTIONAL_GROUPS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(TOPK_EVENT, min_size=1, max_size=40))
def test_a_group_over_optional_counts_unbound_arguments_and_stays_compiled(template: str, events) -> None:
    """An aggregate argument left unbound by OPTIONAL is an error: the compiled group
    counts it per group, the aggregate is unbound while such a row is held (COUNT skips
    it), exactly as the reference accumulators do - without handing over."""
    query = PREFIX + template.replace("%s", EX)
    explain: list[str] = []
    compiled = _outputs(query, events, compiled=True, explain=explain)
    assert "CompiledGroup" in explain[0] and "(reference)" not in explain[0]
    assert compiled == _outputs(query, events, compiled=False)


@pytest.mark.parametrize("template", OPTIONAL_GROUPS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=40))
@example(events=[(0, "a", None, decimal("2.5")), (2, "a", None, 1)])  # emptied in the instant of the hand-over
def test_a_group_holding_unbound_arguments_hands_over_its_error_counts(template: str, events) -> None:
    """Integers then decimals (or a string) in the OPTIONAL argument make the compiled
    group hand over while it may hold rows with unbound arguments: the reference takes
    their error counts too (AVG's count of values excludes them)."""
    query = PREFIX + template.replace("%s", EX)
    assert _outputs(query, events, compiled=True) == _outputs(query, events, compiled=False)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_volatile_bind_under_a_top_k_keeps_one_value_per_row(compiled: bool) -> None:
    """BIND(RAND() ...) right below ORDER BY ... LIMIT: each row draws its value once,
    when it arrives; a top-k that extended only the rows it reports drew it anew at
    every report (a group's row changed its ?r while the group stayed the same)."""
    query = PREFIX + f"""SELECT ?k ?n ?r WHERE {{
        {{ SELECT ?k (COUNT(*) AS ?n) WHERE {{ STREAM <{EX}stream> [RANGE 10m] {{ ?e ex:k ?k }} }} GROUP BY ?k }}
        BIND(RAND() AS ?r) }} ORDER BY DESC(?n) ?k LIMIT 3"""
    events = [(1, k, None, None) for k in "abcabcdab"]
    explain: list[str] = []
    outputs = _outputs(query, events, compiled=compiled, explain=explain)
    assert ("CompiledTopK" in explain[0]) is compiled
    reports = [{(k, n): r for k, n, r in rows} for _, _, rows, _ in outputs]
    for before, after in zip(reports, reports[1:]):
        for row in before.keys() & after.keys():  # the same group, unchanged: the same value
            assert before[row] == after[row], row
    assert sum(len(before.keys() & after.keys()) for before, after in zip(reports, reports[1:])) >= 8


IRI_NAMES = ["trip/9", "trip/10", "trip/100", "trip/2", "trip/0", "t9", "trip/a", "u/1", "u/10"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(st.tuples(st.sampled_from([0, 0.5, 1, 2, 5]), st.sampled_from(IRI_NAMES), st.integers(-3, 9)),
                       min_size=1, max_size=40))
def test_an_iri_sort_key_stays_compiled_and_orders_by_the_iri_text(events) -> None:
    """ORDER BY an IRI variable (a trip, a subject; a tie-break such as ?trip): numbered
    IRIs (inline ids) and dictionary IRIs compare by their text, as the reference orders
    IRIs among themselves - trip/10 before trip/9."""
    query = PREFIX + f"""SELECT ?t ?v WHERE {{ STREAM <{EX}stream> [RANGE 2m] {{ ?e ex:t ?t ; ex:v ?v }} }}
        ORDER BY DESC(?v) ?t LIMIT 2"""
    results, explains = [], []
    for compiled in (True, False):
        engine = _engine(compiled)
        registered = register(engine, query, "q")
        stream = Stream(engine)
        minute = 0.0
        for n, (gap, name, v) in enumerate(events, 1):
            minute += gap
            stream.send(minute, (f"ex:e{n}", "ex:t", f"ex:{name}"), (f"ex:e{n}", "ex:v", v))
        explains.append(registered.explain())
        results.append([(o.trigger.time, o.terms(), o.terms(o.deleted)) for o in stream.outputs])
    assert "CompiledTopK offset 0 limit 2 (compiled)" in explains[0]
    assert results[0] == results[1]


def test_a_group_over_a_join_takes_rows_arriving_and_leaving_several_times() -> None:
    """Key "a" is held three times on the projected side: each of its joined rows arrives
    with multiplicity 1, 2, 3 and leaves (its 1-minute window) with -3 — the compiled
    group's sorted lists must take and drop each value that many times."""
    template = next(t for t in JOIN_QUERIES if "MEDIAN(?v) AS ?m) (MIN" in t)
    query = PREFIX + template.replace("%s", EX)
    events = [(0, "a", 1, None), (0.5, "a", 2, None), (0.2, "a", 3, None), (3, "a", None, None), (0.5, "b", 1, None)]
    explain: list = []
    assert _outputs(query, events, compiled=True, explain=explain) == _outputs(query, events, compiled=False)
    assert "[compiled ] CompiledGroup" in explain[0]


@pytest.mark.parametrize("pattern", ["rising", "falling", "sawtooth", "ties"])
def test_long_min_max_queues_compact_and_equal_the_reference(pattern: str) -> None:
    """MIN/MAX queues long enough for their dead prefix to be cut (in the window's
    :class:`~taxi_rsp.engine.native.GroupTable`; the cut itself is checked in
    tests/test_native_group_table.py): values that keep every one queued (falling under
    MAX, rising under MIN), ties, and runs that alternate, over windows that hold ≈ 60
    values and slide past 300."""
    values = {"rising": list(range(300)), "falling": list(range(300, 0, -1)),
              "sawtooth": [(i * 7) % 40 - (i // 40) for i in range(300)], "ties": [i // 25 for i in range(300)]}[pattern]
    events = [(0.1, "ab"[i % 7 == 0], v, None) for i, v in enumerate(values)]
    text = PREFIX + f"SELECT ?k (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) (COUNT(*) AS ?n) WHERE {{ STREAM <{EX}stream> " \
                    "[RANGE 6m] { ?e ex:k ?k ; ex:v ?v } } GROUP BY ?k"
    engine = _engine(True)
    registered = register(engine, text, "q")
    stream = Stream(engine)
    minute = 0.0
    for n, (gap, key, v, _) in enumerate(events, 1):  # as play() sends them
        minute += gap
        stream.send(minute, (f"ex:e{n}", "ex:k", key), (f"ex:e{n}", "ex:seq", n), (f"ex:e{n}", "ex:v", v))
    assert "CompiledAggregate" in registered.explain() and "(reference)" not in registered.explain()
    outputs = [(o.trigger.time, o.trigger.is_expiry, o.terms(), o.terms(o.deleted)) for o in stream.outputs]
    assert outputs == _outputs(text, events, compiled=False)
