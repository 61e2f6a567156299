"""Each physical rule of the planner (taxi_rsp.planner.builder): (query, configuration,
expected physical plan) fixtures. The plan is the frozen tree ``--explain`` prints;
a change of operator choice, fusion or tier shows up here as a diff to review."""

from __future__ import annotations

from textwrap import dedent

import pytest

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.engine.engine import Engine
from taxi_rsp.planner import compile_query

PREFIX = "PREFIX ex: <http://ex/> "
S = "STREAM <http://s> [RANGE 1m]"
SPECIALISED, REFERENCE = EngineConfig(), EngineConfig(compiled=False)
STARS = frozenset({"http://s"})  # <http://s> declared subject-disjoint: stars matched per event
W = "Window <http://s> [RANGE 60000ms], 1 pattern"

FIXTURES = [
    ("FILTER, BIND and the projection fuse into the window",
     f"SELECT ?x ?b WHERE {{ {S} {{ ?x ex:p ?a }} BIND(?a * 2 AS ?b) FILTER(?b > 3) }}", SPECIALISED,
     f"{W}, generated matcher + Extend ?b, Filter, Project -> ?x ?b"),
    ("the reference tier matches with the reference matcher",
     f"SELECT ?x ?b WHERE {{ {S} {{ ?x ex:p ?a }} BIND(?a * 2 AS ?b) }}", REFERENCE,
     f"{W}, reference matcher + Extend ?b, Project -> ?x ?b"),
    ("GROUP BY over a RANGE window: one window aggregate",
     f"SELECT ?x (COUNT(?a) AS ?n) WHERE {{ {S} {{ ?x ex:p ?a }} }} GROUP BY ?x", SPECIALISED,
     f"""
     WindowAggregate [specialised] by ?x: ?n := COUNT -> ?x ?n
       {W}, generated matcher -> ?x ?a
     """),
    ("the reference tier keeps the group apart",
     f"SELECT ?x (COUNT(?a) AS ?n) WHERE {{ {S} {{ ?x ex:p ?a }} }} GROUP BY ?x", REFERENCE,
     f"""
     Group [reference] by ?x: ?n := COUNT -> ?x ?n
       {W}, reference matcher -> ?x ?a
     """),
    ("a SLIDE window is no window aggregate (a specialised group above it)",
     "SELECT ?x (COUNT(?a) AS ?n) WHERE { STREAM <http://s> [RANGE 1m SLIDE 10s] { ?x ex:p ?a } } GROUP BY ?x",
     SPECIALISED,
     """
     Group [specialised] by ?x: ?n := COUNT -> ?x ?n
       Window <http://s> [RANGE 60000ms SLIDE 10000ms] reported on window close, 1 pattern, generated matcher -> ?x ?a
     """),
    ("a SLIDE window reported on content change says so (EngineConfig.slide_report)",
     "SELECT ?x ?a WHERE { STREAM <http://s> [RANGE 1m SLIDE 10s] { ?x ex:p ?a } }",
     EngineConfig(slide_report="content change"),
     """
     Window <http://s> [RANGE 60000ms SLIDE 10000ms] reported on content change, 1 pattern, generated matcher -> ?x ?a
     """),
    ("an aggregate the specialised tier lacks keeps the reference group",
     f"SELECT ?x (SAMPLE(?a) AS ?n) WHERE {{ {S} {{ ?x ex:p ?a }} }} GROUP BY ?x", SPECIALISED,
     f"""
     Group [reference] by ?x: ?n := SAMPLE -> ?x ?n
       {W}, generated matcher -> ?x ?a
     """),
    ("a volatile step stays on the window (one draw per row): no window aggregate",
     f"SELECT ?x (COUNT(?r) AS ?n) WHERE {{ {S} {{ ?x ex:p ?a }} BIND(RAND() AS ?r) }} GROUP BY ?x", SPECIALISED,
     f"""
     Group [specialised] by ?x: ?n := COUNT -> ?x ?n
       {W}, generated matcher + Extend ?r -> ?x ?a ?r
     """),
    ("a specialised top-k takes over the BIND steps right below it",
     f"SELECT ?x (COUNT(?a) * 2 AS ?s) WHERE {{ {S} {{ ?x ex:p ?a }} }} GROUP BY ?x ORDER BY DESC(?s) LIMIT 3",
     SPECIALISED,
     f"""
     TopK [specialised] DESC ?s offset 0 limit 3 + Extend ?s -> ?x ?_agg0 ?s
       WindowAggregate [specialised] by ?x: ?_agg0 := COUNT -> ?x ?_agg0
         {W}, generated matcher -> ?x ?a
     """),
    ("but not a FILTER (HAVING): that map stays",
     f"SELECT ?x (COUNT(?a) * 2 AS ?s) WHERE {{ {S} {{ ?x ex:p ?a }} }} GROUP BY ?x HAVING (COUNT(?a) > 1) "
     "ORDER BY DESC(?s) LIMIT 3", SPECIALISED,
     f"""
     TopK [specialised] DESC ?s offset 0 limit 3 -> ?x ?_agg0 ?s
       Map [specialised] Filter, Extend ?s -> ?x ?_agg0 ?s
         WindowAggregate [specialised] by ?x: ?_agg0 := COUNT -> ?x ?_agg0
           {W}, generated matcher -> ?x ?a
     """),
    ("a monotone score ranks with TMA on the reference tier",
     f"SELECT ?x ?s WHERE {{ {S} {{ ?x ex:p ?a ; ex:q ?b }} BIND(?a / ?b AS ?s) }} ORDER BY DESC(?s) LIMIT 3",
     EngineConfig(compiled=False, subject_disjoint_streams=STARS),
     """
     TmaTopK [reference] k=3 over ?a, ?b -> ?x ?a ?b ?s
       Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, reference matcher + Extend ?s -> ?x ?a ?b ?s
     """),
    ("and with the specialised top-k unless TMA is asked for",
     f"SELECT ?x ?s WHERE {{ {S} {{ ?x ex:p ?a ; ex:q ?b }} BIND(?a / ?b AS ?s) }} ORDER BY DESC(?s) LIMIT 3",
     EngineConfig(subject_disjoint_streams=STARS),
     """
     TopK [specialised] DESC ?s offset 0 limit 3 -> ?x ?a ?b ?s
       Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher + Extend ?s -> ?x ?a ?b ?s
     """),
    ("top_k='tma' asks for it",
     f"SELECT ?x ?s WHERE {{ {S} {{ ?x ex:p ?a ; ex:q ?b }} BIND(?a / ?b AS ?s) }} ORDER BY DESC(?s) LIMIT 3",
     EngineConfig(top_k="tma", subject_disjoint_streams=STARS),
     """
     TmaTopK [reference] k=3 over ?a, ?b -> ?x ?a ?b ?s
       Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher + Extend ?s -> ?x ?a ?b ?s
     """),
    ("three stream inputs: one routed multi-way join",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a }} {S} {{ ?a ex:q ?b }} {S} {{ ?b ex:r ?x }} }}", SPECIALISED,
     """
     MultiJoin [adaptive routing] of 3 inputs, 0 filters -> ?x ?a ?b
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?x ?a
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?a ?b
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?b ?x
     """),
    ("join_routing='binary': binary joins in text order",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a }} {S} {{ ?a ex:q ?b }} {S} {{ ?b ex:r ?x }} }}",
     EngineConfig(join_routing="binary"),
     """
     Join [specialised] on ?x, ?b -> ?x ?a ?b
       Join [specialised] on ?a -> ?x ?a ?b
         Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?x ?a
         Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?a ?b
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?b ?x
     """),
    ("a block's patterns match across the window's events: a join of one window per pattern",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a ; ex:q ?b }} }}", SPECIALISED,
     f"""
     Join [specialised] on ?x -> ?x ?a ?b
       {W}, generated matcher -> ?x ?a
       {W}, generated matcher -> ?x ?b
     """),
    ("over a subject-disjoint stream a star is matched per event, stars are joined",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a ; ex:q ?b . ?a ex:r ?c }} }}", EngineConfig(subject_disjoint_streams=STARS),
     """
     Join [specialised] on ?a -> ?x ?a ?b ?c
       Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher -> ?x ?a ?b
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?a ?c
     """),
    ("connected patterns join before an unconnected one (no avoidable cross product)",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a . ?y ex:q ?b . ?a ex:r ?y }} }}", EngineConfig(join_routing="binary"),
     f"""
     Join [specialised] on ?y -> ?x ?a ?y ?b
       Join [specialised] on ?a -> ?x ?a ?y
         {W}, generated matcher -> ?x ?a
         {W}, generated matcher -> ?a ?y
       {W}, generated matcher -> ?y ?b
     """),
    ("a NOT EXISTS of a later row of the same key in the same window: each key's latest row",
     f"SELECT ?x ?k WHERE {{ {S} {{ ?x ex:k ?k ; ex:seq ?s }} "
     f"FILTER NOT EXISTS {{ {S} {{ ?y ex:k ?k ; ex:seq ?s2 }} FILTER(?s2 > ?s) }} }}",
     EngineConfig(subject_disjoint_streams=STARS),
     """
     Map [specialised] Project -> ?x ?k
       LatestPerKey [specialised] by ?k: rows with no later ?s ((?s2 > ?s); the inner window is the outer one) -> ?x ?k ?s
         Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher -> ?x ?k ?s
     """),
    ("a GROUP BY over each key's latest row: one window aggregate whose table counts the newest rows",
     f"SELECT ?k (COUNT(?x) AS ?n) WHERE {{ {S} {{ ?x ex:k ?k ; ex:seq ?s }} "
     f"FILTER NOT EXISTS {{ {S} {{ ?y ex:k ?k ; ex:seq ?s2 }} FILTER(?s2 > ?s) }} }} GROUP BY ?k",
     EngineConfig(subject_disjoint_streams=STARS),
     """
     WindowAggregate [specialised] by ?k: ?n := COUNT over the latest row per ?k (no later ?s) -> ?k ?n
       Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher -> ?x ?k ?s
     """),
    ("the same with the rule off (EngineConfig.latest_per_key): the anti-join over both windows",
     f"SELECT ?x ?k WHERE {{ {S} {{ ?x ex:k ?k ; ex:seq ?s }} "
     f"FILTER NOT EXISTS {{ {S} {{ ?y ex:k ?k ; ex:seq ?s2 }} FILTER(?s2 > ?s) }} }}",
     EngineConfig(subject_disjoint_streams=STARS, latest_per_key=False),
     """
     Map [specialised] Project -> ?x ?k
       NotExists [specialised] if (?s2 > ?s) -> ?x ?k ?s
         Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher -> ?x ?k ?s
         Window <http://s> [RANGE 60000ms], 2 patterns of one subject, matched per event, generated matcher -> ?y ?k ?s2
     """),
    ("an OPTIONAL sharing no variable has nothing to specialise on",
     f"SELECT * WHERE {{ {S} {{ ?x ex:p ?a }} OPTIONAL {{ {S} {{ ?y ex:q ?b }} }} }}", SPECIALISED,
     f"""
     Optional [reference] -> ?x ?a ?y ?b
       {W}, generated matcher -> ?x ?a
       Window <http://s> [RANGE 60000ms], 1 pattern, generated matcher -> ?y ?b
     """),
]

def physical_plan(text: str, config: EngineConfig) -> str:
    return str(compile_query(Engine(config=config), PREFIX + text, "q").physical.tree)


@pytest.mark.parametrize(("rule", "text", "config", "expected"), FIXTURES, ids=[f[0] for f in FIXTURES])
def test_physical_rule(rule: str, text: str, config: EngineConfig, expected: str) -> None:
    plan = physical_plan(text, config)
    assert plan == dedent(expected).strip(), plan


def test_the_tree_is_frozen_and_the_operators_agree_with_it() -> None:
    """The plan is a value (frozen dataclasses); instantiation checks every operator's
    row layout against its node (a disagreement raises)."""
    plan = compile_query(Engine(), PREFIX + FIXTURES[2][1], "q").physical
    with pytest.raises(AttributeError):
        plan.tree.root.schema = ("y",)  # type: ignore[misc]
    assert plan.root.schema == plan.tree.root.schema
