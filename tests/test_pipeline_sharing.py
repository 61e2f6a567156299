"""Shared per-event pipelines (taxi_rsp.engine.pipeline): windows whose match and fused
steps coincide up to variable names compute them once per event, and sharing never
changes a result. These are properties of the reference operators (compiled operators
match and derive on their own), so the engines here run with ``compiled=False``."""

from __future__ import annotations

import itertools

from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register

Q1 = resolve_query("q1").text
Q2 = resolve_query("q2").text


def _rows(engine: Engine, query_names: list[str], path, limit: int) -> dict[str, list]:
    """Every report of every query, as values (ids differ between engines)."""
    seen: dict[str, list] = {name: [] for name in query_names}
    for query in engine.queries:
        query.listeners.append(lambda out, name=query.name: seen[name].append(
            (out.trigger.time, out.values(), out.values(out.deleted))))
    for event in itertools.islice(Feeder(path, engine.dictionary), limit):
        engine.process(event)
    return seen


def test_q2_not_exists_block_shares_the_empty_taxi_pipeline() -> None:
    engine = Engine(compiled=False)
    query = register(engine, Q2, "q2")
    windows = query.physical.windows
    # profit window + one buffer for the two 30-minute blocks (outer and NOT EXISTS)
    assert len(windows) == 2
    buffer = next(w for w in windows if len(w._outputs) == 2)
    outer, inner = (output._leaf for output in buffer._outputs)
    # the 5 shared steps (four cells, the filter) feed both blocks; each then has its
    # own tail (the outer block's ?cell, and each block's projection: see algebra.prune)
    assert outer.parent is inner.parent and len(outer.parent.steps) == 5
    assert "pipeline 5 steps, shared by 2 > " in query.explain()


def test_same_query_twice_matches_once_per_event(sample_20d) -> None:
    engine = Engine(compiled=False)
    register(engine, Q1, "a")
    register(engine, Q1.replace("?startCell ?endCell", "?s ?e").replace("AS ?startCell", "AS ?s")
                    .replace("AS ?endCell", "AS ?e"), "b")
    leaves = {id(w._leaf) for q in engine.queries for w in q.physical.windows}
    assert len(leaves) == 1
    root = next(iter(engine.pipelines._roots.values()))
    calls = 0
    original = root.matcher.match_view

    def counting(view):
        nonlocal calls
        calls += 1
        return original(view)

    root.matcher.match_view = counting
    root._bind()  # run() binds its matcher's match_view once: bind it to the counting one
    rows = _rows(engine, ["a", "b"], sample_20d, 300)
    assert calls == 300 and rows["a"] == rows["b"] and rows["a"]


def test_sharing_does_not_change_results(sample_20d) -> None:
    variants = {"q1": Q1, "q1_60": Q1.replace("${window=30m}", "60m"),
                "q1_small": Q1.replace("?dy <= 300)", "?dy <= 170)"), "q2": Q2}
    together = Engine(compiled=False)
    for name, text in variants.items():
        register(together, text, name)
    shared = _rows(together, list(variants), sample_20d, 1500)
    for name, text in variants.items():
        alone = Engine(compiled=False)
        register(alone, text, name)
        assert _rows(alone, [name], sample_20d, 1500)[name] == shared[name], name
    # the three Q1 variants share the match; the filter variant branches off late
    assert len(together.pipelines._roots) == 3  # Q1 pattern, Q2 profit, Q2 empty taxis


def test_identical_queries_share_the_whole_plan(sample_20d) -> None:
    engine = Engine()
    a = register(engine, Q1, "a")
    b = register(engine, Q1, "b")
    c = register(engine, Q1.replace("${window=30m}", "5m"), "c")
    assert b.physical is a.physical and b in a.twins and c.physical is not a.physical
    rows = _rows(engine, ["a", "b", "c"], sample_20d, 1500)
    alone = Engine()
    register(alone, Q1, "a")
    assert rows["a"] == rows["b"] == _rows(alone, ["a"], sample_20d, 1500)["a"]
    assert rows["c"] != rows["a"]
