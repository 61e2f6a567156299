"""TMA grid top-k gives exactly the sorted top-k, and the planner picks it for monotone scores."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.ops.tma import TmaTopKOp
from taxi_rsp.planner.monotone import monotonicity
from taxi_rsp.engine.ops.topk import TopKOp
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.planner import register

SCHEMA = ("id", "profit", "empty", "score")


def test_monotonicity_analysis() -> None:
    v = ast.Var
    assert monotonicity(ast.Call("/", (v("p"), v("e")))) == {"p": 1, "e": -1}
    assert monotonicity(ast.Call("-", (v("a"), ast.Call("-", (v("b"), v("c")))))) == {"a": 1, "b": -1, "c": 1}
    assert monotonicity(ast.Call("/", (v("p"), v("p")))) is None  # pulls both ways
    assert monotonicity(ast.Call("CONCAT", (v("p"), v("e")))) is None


def _ops(d: Dictionary, k: int):
    schema = {name: i for i, name in enumerate(SCHEMA)}
    order = [(compile_expr(ast.Var("score"), schema, d), True), (compile_expr(ast.Var("id"), schema, d), False)]
    expr = ast.Call("/", (ast.Var("profit"), ast.Var("empty")))
    tma = TmaTopKOp(SCHEMA, order, k, 0, expr, {"profit": 1, "empty": -1}, d.value)
    return tma, TopKOp(SCHEMA, order, k, 0, emits_deltas=False)


ROW = st.tuples(st.integers(0, 30), st.integers(0, 40), st.integers(1, 6))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), ROW), max_size=60), st.integers(1, 5))
def test_tma_equals_sorted_top_k(ops, k) -> None:
    d = Dictionary()
    tma, plain = _ops(d, k)
    held: Counter = Counter()
    batch = []
    for insert, (ident, profit_halves, empty) in ops:
        profit = Fraction(profit_halves, 2)
        row = (d.encode_value(ident), d.encode_value(profit), d.encode_value(empty),
               d.encode_value(profit / empty))
        if not insert and not held[row]:
            continue
        held[row] += 1 if insert else -1
        batch.append((row, 1 if insert else -1))
        if len(batch) >= 2:  # batches of two, like a group's retraction + new row
            tma.push(batch)
            plain.push(batch)
            batch = []
            assert tma.snapshot() == plain.snapshot()


def test_planner_uses_tma_for_q2_and_results_agree(sample_20d: Path, tmp_path: Path) -> None:
    from taxi_rsp.feeder import Feeder

    text = (Path(__file__).resolve().parents[1] / "queries" / "q2.cqels").read_text()
    head = tmp_path / "head.csv"
    head.write_text("".join(sample_20d.read_text().splitlines(keepends=True)[:2500]))
    snapshots = {}
    for mode in ("tma", "sorted"):
        engine = Engine(top_k=mode)
        query = register(engine, text, "q2")
        assert ("TmaTopK" in query.explain()) == (mode == "tma")
        seen = []
        query.listeners.append(lambda out, seen=seen: seen.append((out.trigger.time, out.rows)))
        for event in Feeder(head, engine.dictionary):
            engine.process(event)
        snapshots[mode] = [(t, [tuple(engine.dictionary.value(v) for v in r) for r in rows])
                           for t, rows in seen]
    assert snapshots["tma"] == snapshots["sorted"] and len(snapshots["tma"]) > 50
