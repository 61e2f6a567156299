"""Each logical rewrite rule on its own: (query, expected plan) fixtures, sqlglot style.

The input plan is the translation of the query; the rule alone is applied bottom-up
(``optimize(plan, (rule,))``) and the result must print exactly as expected. A second
fixture per rule shows a near miss the rule must leave alone.
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from taxi_rsp.algebra import optimize as O
from taxi_rsp.algebra import plan as P
from taxi_rsp.algebra.plan import explain
from taxi_rsp.algebra.translate import translate_query
from taxi_rsp.lang import ast
from taxi_rsp.lang.parser import parse_query

S = "STREAM <http://s> [RANGE 1m]"
P_SCAN = "Scan <http://s> [RANGE 60000ms] {?x <http://p> ?a}"
Q_SCAN = "Scan <http://s> [RANGE 60000ms] {?x <http://q> ?c}"

FIXTURES = [
    ("push_filter_below_correlated",
     f"SELECT ?x WHERE {{ {S} {{ ?x <http://p> ?a }} FILTER NOT EXISTS {{ {S} {{ ?y <http://q> ?x }} }} FILTER(?a > 1) }}",
     f"""
     Project ?x
       AntiJoin
         Filter (?a > 1)
           {P_SCAN}
         Scan <http://s> [RANGE 60000ms] {{?y <http://q> ?x}}
     """),
    ("push_filter_below_extend",
     f"SELECT ?x ?b WHERE {{ {S} {{ ?x <http://p> ?a }} BIND(?a * 2 AS ?b) FILTER(?a > 1) }}",
     f"""
     Project ?x ?b
       Extend ?b := (?a * 2)
         Filter (?a > 1)
           {P_SCAN}
     """),
    ("push_filter_into_join_side",
     f"SELECT ?x WHERE {{ {{ {S} {{ ?x <http://p> ?a }} }} {{ {S} {{ ?x <http://q> ?c }} }} FILTER(?c > 1) }}",
     f"""
     Project ?x
       Join
         {P_SCAN}
         Filter (?c > 1)
           {Q_SCAN}
     """),
    # a conjunction split: each side gets the conjuncts it binds, the rest stays above
    ("push_filter_into_join_side",
     f"SELECT ?x WHERE {{ {{ {S} {{ ?x <http://p> ?a }} }} {{ {S} {{ ?x <http://q> ?c }} }} "
     f"FILTER(?c > 1 && ?a < 5 && ?c > ?a && ?a != 2) }}",
     f"""
     Project ?x
       Filter (?c > ?a)
         Join
           Filter ((?a < 5) && (?a != 2))
             {P_SCAN}
           Filter (?c > 1)
             {Q_SCAN}
     """),
    ("push_condition_into_right",
     f"SELECT ?x WHERE {{ {S} {{ ?x <http://p> ?a }} FILTER NOT EXISTS {{ {S} {{ ?x <http://q> ?c }} FILTER(?c > 1 && ?c > ?a) }} }}",
     f"""
     Project ?x
       AntiJoin on (?c > ?a)
         {P_SCAN}
         Filter (?c > 1)
           {Q_SCAN}
     """),
]

# Near misses: the rule must return the plan unchanged.
UNCHANGED = [
    # the filter reads ?b, which the extend computes
    ("push_filter_below_extend", f"SELECT ?x ?b WHERE {{ {S} {{ ?x <http://p> ?a }} BIND(?a * 2 AS ?b) FILTER(?b > 1) }}"),
    # BOUND may change value once the variable is bound by the other side
    ("push_filter_into_join_side",
     f"SELECT ?x WHERE {{ {{ {S} {{ ?x <http://p> ?a }} }} {{ {S} {{ ?x <http://q> ?c }} }} FILTER(BOUND(?c)) }}"),
    # a side that may leave the conjunct's variable unbound (OPTIONAL inside it)
    ("push_filter_into_join_side",
     f"SELECT ?x WHERE {{ {{ {S} {{ ?x <http://p> ?a }} OPTIONAL {{ {S} {{ ?x <http://r> ?d }} }} }} "
     f"{{ {S} {{ ?x <http://q> ?c }} }} FILTER(?d > 1 && ?c > ?d) }}"),
    # the filter reads both sides
    ("push_filter_into_join_side",
     f"SELECT ?x WHERE {{ {{ {S} {{ ?x <http://p> ?a }} }} {{ {S} {{ ?x <http://q> ?c }} }} FILTER(?c > ?a) }}"),
    # every conjunct reads the left side
    ("push_condition_into_right",
     f"SELECT ?x WHERE {{ {S} {{ ?x <http://p> ?a }} FILTER NOT EXISTS {{ {S} {{ ?x <http://q> ?c }} FILTER(?c > ?a) }} }}"),
    # the filter reads a variable of the right side only
    ("push_filter_below_correlated",
     f"SELECT ?x WHERE {{ {S} {{ ?x <http://p> ?a }} OPTIONAL {{ {S} {{ ?x <http://r> ?d }} }} "
     f"FILTER NOT EXISTS {{ {S} {{ ?y <http://q> ?x }} }} FILTER(?zz > 1) }}"),
]


def _plan(query: str) -> P.PlanNode:
    return translate_query(parse_query(query)).root


@pytest.mark.parametrize(("rule", "query", "expected"), FIXTURES, ids=[f[0] for f in FIXTURES])
def test_rule_rewrites_as_expected(rule: str, query: str, expected: str) -> None:
    before = _plan(query)
    after = O.optimize(before, (getattr(O, rule),))
    assert explain(after) == dedent(expected).strip("\n")
    assert explain(after) != explain(before)


@pytest.mark.parametrize(("rule", "query"), UNCHANGED, ids=[u[0] for u in UNCHANGED])
def test_rule_leaves_near_misses_alone(rule: str, query: str) -> None:
    before = _plan(query)
    assert explain(O.optimize(before, (getattr(O, rule),))) == explain(before)


def test_every_rule_has_a_fixture() -> None:
    assert {f[0] for f in FIXTURES} == {r.__name__ for r in O.RULES}


def test_a_filter_holding_a_pattern_is_never_moved() -> None:
    """EXISTS inside an expression reads whatever its pattern binds: no rule may push it
    (the translator rewrites such filters away, so the plan is built by hand)."""
    left = _plan(f"SELECT * WHERE {{ {S} {{ ?x <http://p> ?a }} }}").child  # under the Project
    right = _plan(f"SELECT * WHERE {{ {S} {{ ?x <http://q> ?c }} }}").child
    exists = ast.Exists(pattern=None, negated=False)  # type: ignore[arg-type]
    # ?c alone would go to the right side; with the EXISTS it must stay
    node = P.Filter(P.Join(left, right), ast.Call("||", (ast.Var("c"), exists)))
    for rule in O.RULES:
        assert rule(node) is node
