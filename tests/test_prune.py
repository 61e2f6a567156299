"""Column pruning (taxi_rsp.algebra.prune): which plans it narrows, which it leaves
alone, and that it never changes a result (pruned against unpruned engines, after every
event, on the differential templates and on pruning's own edge cases); and the same for
all logical rewrites together (taxi_rsp.algebra.optimize and pruning against neither)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.optimize import optimize
from taxi_rsp.algebra.prune import prune
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.lang.parser import parse_query
from taxi_rsp.planner import register
from tests.engine_helpers import EX, play, star_engine
from tests.test_compiled_differential import EVENT, JOIN_QUERIES, PREFIX

QUERIES = Path(__file__).resolve().parents[1] / "queries"


def _plan(text: str) -> P.PlanNode:
    return prune(optimize(translate_query(parse_query(PREFIX + text.replace("%s", EX), {}, "q")).root))


def _nodes(node: object, kind: type) -> list:
    found = [node] if isinstance(node, kind) else []
    for name in ("child", "left", "right"):
        if hasattr(node, name):
            found += _nodes(getattr(node, name), kind)
    for inner in getattr(node, "inputs", ()):
        found += _nodes(inner, kind)
    return found


def _inner_projections(root: P.PlanNode) -> list[tuple[str, ...]]:
    """The variables of every Project below the query's own."""
    return [p.vars for p in _nodes(root.child if isinstance(root, P.Project) else root, P.Project)]


def test_q2_windows_keep_only_what_not_exists_and_the_group_read() -> None:
    logical = translate_query(parse_query((QUERIES / "q2.cqels").read_text(), {}, "q2"))
    root = prune(optimize(logical.root))
    anti = _nodes(root, P.AntiJoin)[0]
    assert isinstance(anti.left, P.Project) and set(anti.left.vars) == {"taxi~3", "seq~3", "cx", "cy", "cell"}
    assert isinstance(anti.right, P.Project) and set(anti.right.vars) == {"taxi~3", "seq2~3"}


def test_a_join_keeps_every_shared_variable_on_both_sides() -> None:
    root = _plan("""SELECT ?v WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v ; ex:seq ?s }
                                      STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w } }""")
    assert sorted(map(sorted, _inner_projections(root))) == [["k"], ["k", "v"]]


def test_minus_keeps_the_shared_variables_that_decide_it() -> None:
    root = _plan("""SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:v ?v ; ex:w ?w0 }
                                      MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } } }""")
    anti = _nodes(root, P.AntiJoin)[0]
    assert set(anti.left.vars) == {"e", "k"} and anti.right.vars == ("k",)


def test_a_bare_window_is_narrowed_only_when_half_its_columns_go() -> None:
    """Its rows are the match's own (shared with a twin of the same patterns): a narrower
    copy pays only when it drops at least half; a window with a BIND builds its rows
    anyway, so any unread column goes."""
    bare = _plan("""SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
                    FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 } FILTER(?s2 > ?s) } }""")
    assert _inner_projections(bare) == []  # 3 -> 2 columns on the right: kept whole
    computed = _plan("""SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s }
                        FILTER NOT EXISTS { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:seq ?s2 }
                                            BIND(?s2 + 1 AS ?next) FILTER(?next > ?s) } }""")
    assert _inner_projections(computed) == [("k", "next")]


def test_count_distinct_star_keeps_every_variable_below_it() -> None:
    """Whole rows are compared, so every column counts (SELECT DISTINCT instead projects
    first: pruning below that projection is sound, and the differential covers it)."""
    root = _plan("""SELECT (COUNT(DISTINCT *) AS ?n) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
                                                          STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k } }""")
    join = _nodes(root, P.Join)[0]
    assert not isinstance(join.left, P.Project) and not isinstance(join.right, P.Project)


def test_an_unread_bind_goes_and_a_drawing_one_stays() -> None:
    root = _plan("""SELECT ?k WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
                                      BIND(?v * 2 AS ?unread) BIND(RAND() AS ?drawn) }""")
    assert [e.var for e in _nodes(root, P.Extend)] == ["drawn"]


def test_a_condition_with_exists_keeps_both_sides_whole() -> None:
    root = _plan("""SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
                   OPTIONAL { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w }
                              FILTER(EXISTS { STREAM <%sstream> [RANGE 2m] { ?g ex:w ?w } }) } }""")
    left_join = _nodes(root, P.LeftJoin)[0]
    assert not isinstance(left_join.left, P.Project) and not isinstance(left_join.right, P.Project)


def test_pruning_is_an_engine_option_and_explain_shows_the_narrow_windows() -> None:
    text = PREFIX + """SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:v ?v }
                         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:v ?v2 }
                                             FILTER(?s2 > ?s) } }""".replace("%s", EX)
    # (a star matched per event: one window per block, whose columns pruning narrows)
    pruned = register(star_engine(), text, "q").explain().split("physical operators:")[1]
    whole = register(star_engine(prune_columns=False), text, "q").explain().split("physical operators:")[1]
    assert "-> ?k, ?s2\n" in pruned and "?v2" not in pruned
    assert "?v2" in whole


EDGE_CASES = [
    # NOT EXISTS whose only shared variable nobody above reads
    """SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:v ?v }
         FILTER NOT EXISTS { STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s2 ; ex:w ?w } FILTER(?s2 > ?s) } }""",
    # MINUS whose sides share nothing once the right side's own variables are gone
    """SELECT ?e WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:w ?w ; ex:seq ?s } } }""",
    # FILTER EXISTS with no shared variable at all (existence alone decides)
    """SELECT ?e ?k WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         FILTER EXISTS { STREAM <%sstream> [RANGE 1m] { ?f ex:w ?w ; ex:seq ?s } } }""",
    # OPTIONAL whose right side binds more than is read; a count of its bound values
    """SELECT ?k (COUNT(?w) AS ?n) (COUNT(*) AS ?all) WHERE {
         STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:seq ?s ; ex:v ?v }
         OPTIONAL { STREAM <%sstream> [RANGE 2m] { ?f ex:k ?k ; ex:w ?w ; ex:seq ?s2 } FILTER(?s2 < ?s) } } GROUP BY ?k""",
    # multiplicities: the join's narrowed side holds equal rows, counted by the group
    """SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:seq ?s ; ex:w ?w } } GROUP BY ?k""",
    # DISTINCT and COUNT(DISTINCT *) over a join: nothing below them is pruned
    """SELECT DISTINCT ?k WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }""",
    """SELECT (COUNT(DISTINCT *) AS ?n) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } }""",
    # BINDs nobody reads, an ORDER BY on a BIND, a UNION of narrowed joins
    """SELECT ?k ?x WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v ; ex:seq ?s }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w }
         BIND(?v * 2 AS ?x) BIND(?w + 1 AS ?unread) } ORDER BY DESC(?x) ASC(?k) LIMIT 3""",
    """SELECT ?k WHERE { { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v } MINUS { STREAM <%sstream> [RANGE 1m] { ?f ex:k ?k ; ex:w ?w } } }
         UNION { STREAM <%sstream> [RANGE 1m] { ?e ex:k ?k ; ex:seq ?s } } }""",
]


def _outputs(query: str, events, prune_columns: bool) -> list:
    return _reports(Engine(config=EngineConfig(prune_columns=prune_columns)), query, events)


def _reports(engine: Engine, query: str, events) -> list:
    register(engine, query, "q")
    return play(engine, events)


@pytest.mark.parametrize("template", EDGE_CASES + JOIN_QUERIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=30))
def test_pruned_plans_report_exactly_what_unpruned_ones_do(template: str, events) -> None:
    query = PREFIX + template.replace("%s", EX)
    assert _outputs(query, events, prune_columns=True) == _outputs(query, events, prune_columns=False)


def test_edge_cases_are_pruned_at_all() -> None:
    """The differential above compares something: most edge cases do narrow a window."""
    narrowed = [t for t in EDGE_CASES if _inner_projections(_plan(t))]
    assert len(narrowed) >= 5


# conjunctions across a join's sides: split by push_filter_into_join_side
SPLIT_FILTERS = [
    """SELECT ?k ?v ?w WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w } FILTER(?v > 1 && ?w < 3 && ?v != ?w && ?k != "c") }""",
    """SELECT ?k (COUNT(*) AS ?n) WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v } BIND(?v * 2 AS ?x)
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w ; ex:seq ?s }
         FILTER(?x >= 2 && ?w > 0 && ?s > 3) } GROUP BY ?k ORDER BY DESC(?n) ASC(?k) LIMIT 2""",
    # a side with OPTIONAL keeps its conjuncts above the join
    """SELECT ?k ?w ?v WHERE { { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k } OPTIONAL { STREAM <%sstream> [RANGE 1m] { ?e ex:w ?w } } }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:v ?v } FILTER(?w > 0 && ?v > 1) }""",
]


@pytest.mark.parametrize("template", SPLIT_FILTERS + EDGE_CASES + JOIN_QUERIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENT, min_size=1, max_size=30))
def test_rewritten_plans_report_exactly_what_the_translated_ones_do(template: str, events) -> None:
    query = PREFIX + template.replace("%s", EX)
    rewritten = _reports(Engine(), query, events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("taxi_rsp.planner.compile.optimize", lambda root: root)
        as_translated = _reports(Engine(config=EngineConfig(prune_columns=False)), query, events)
    assert rewritten == as_translated


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_equal_rows_a_join_holds_once_leave_the_top_k_by_value(compiled: bool) -> None:
    # Found by the differential above: pruned, two identical events give equal rows on
    # both sides of the join, which holds each side's equal rows once with a count. The
    # join's output then credits one row object with what an equal one contributed, so a
    # retraction can exceed what the top-k counted for that very object; it must switch
    # to counting by value (it raised "retraction below zero").
    query = PREFIX + """SELECT ?k ?x WHERE { STREAM <%sstream> [RANGE 2m] { ?e ex:k ?k ; ex:v ?v ; ex:seq ?s }
         STREAM <%sstream> [RANGE 5m] { ?f ex:k ?k ; ex:w ?w }
         BIND(?v * 2 AS ?x) BIND(?w + 1 AS ?unread) } ORDER BY DESC(?x) ASC(?k) LIMIT 3""".replace("%s", EX)
    events = [(0, "b", 1, 1), (0, "b", 1, 1), (2, "a", None, None)]
    engine = Engine(config=EngineConfig(prune_columns=True, compiled=compiled))
    register(engine, query, "q")
    outputs = play(engine, events)
    assert [len(rows) for _, _, rows, _ in outputs] == [1, 3, 0]  # 4 joined rows (top 3), then none
    assert outputs == _outputs(query, events, prune_columns=False)
