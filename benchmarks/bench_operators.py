"""Per-operator micro-benchmarks: MEDIAN insert/retract, ring-indexed join probe, TMA update.

    .venv/bin/python -m pytest benchmarks/bench_operators.py --benchmark-columns=mean,min,rounds
"""

from __future__ import annotations

import random
from fractions import Fraction

from taxi_rsp.engine.expr import compile_expr
from taxi_rsp.engine.ops.aggregates import make_accumulator
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.ops.tma import TmaTopKOp
from taxi_rsp.engine.ops.topk import TopKOp
from taxi_rsp.lang import ast
from taxi_rsp.rdf.dictionary import Dictionary

N = 10_000


def median_window() -> None:
    """A sliding window of 1,000 cent amounts: each step inserts one and retracts the oldest."""
    rng = random.Random(1)
    values = [Fraction(rng.randint(250, 6000), 100) for _ in range(N)]
    acc = make_accumulator("MEDIAN", distinct=False)
    for i, value in enumerate(values):
        acc.update(value)
        if i >= 1000:
            acc.revert(values[i - 1000])
        acc.result()


def join_probe() -> None:
    """Symmetric join on one key with ~100 keys, FIFO retractions on both sides."""
    join = JoinOp(("k", "a"), ("k", "b"))
    join.connect(lambda deltas: None)
    for i in range(N):
        join.push_left([((i % 100, i), 1)])
        join.push_right([((i % 100, -i), 1)])
        if i >= 500:
            join.push_left([(((i - 500) % 100, i - 500), -1)])
            join.push_right([(((i - 500) % 100, -(i - 500)), -1)])


def _score_rows(d: Dictionary):
    rng = random.Random(2)
    rows = []
    for i in range(N):
        profit, empty = Fraction(rng.randint(0, 8000), 100), rng.randint(1, 8)
        rows.append(tuple(d.encode_value(v) for v in (i, profit, empty, profit / empty)))
    return rows


def top_k_updates(kind: str) -> None:
    d = Dictionary()
    schema = {"id": 0, "profit": 1, "empty": 2, "score": 3}
    order = [(compile_expr(ast.Var("score"), schema, d), True), (compile_expr(ast.Var("id"), schema, d), False)]
    if kind == "tma":
        op = TmaTopKOp(tuple(schema), order, 10, 0, ast.Call("/", (ast.Var("profit"), ast.Var("empty"))),
                       {"profit": 1, "empty": -1}, d.value)
    else:
        op = TopKOp(tuple(schema), order, 10, 0, emits_deltas=False)
    rows = _score_rows(d)
    for i, row in enumerate(rows):
        op.push([(row, 1)] if i < 2000 else [(rows[i - 2000], -1), (row, 1)])
        op.snapshot()


def test_median_insert_retract(benchmark) -> None:
    benchmark(median_window)


def test_join_probe(benchmark) -> None:
    benchmark(join_probe)


def test_tma_update(benchmark) -> None:
    benchmark.pedantic(top_k_updates, args=("tma",), rounds=3, iterations=1)


def test_sorted_top_k_update(benchmark) -> None:
    benchmark.pedantic(top_k_updates, args=("sorted",), rounds=3, iterations=1)
