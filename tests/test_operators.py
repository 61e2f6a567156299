"""Unit and property tests of the stateful operators against brute-force recomputation."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from taxi_rsp.engine.index.ring import RingIndex
from taxi_rsp.engine.ops.aggregates import make_accumulator
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.ops.minus import AntiJoinOp, LeftJoinOp, SemiJoinOp


class Collect:
    def __init__(self) -> None:
        self.state: Counter = Counter()

    def __call__(self, deltas) -> None:
        for row, mult in deltas:
            self.state[row] += mult
            if not self.state[row]:
                del self.state[row]


def test_ring_index_probe_is_newest_first_and_skips_dead_cells() -> None:
    index = RingIndex()
    for i in range(100):
        index.add(("k",), (i,), 1)
    for i in range(90):
        index.add(("k",), (i,), -1)
    assert [row[0] for row, _ in index.probe(("k",))] == list(range(99, 89, -1))
    assert len(index) == 10
    assert index.cell_count() <= 2 * 10 + 8  # lazily deleted cells were compacted


def test_ring_index_forgets_empty_keys() -> None:
    index = RingIndex()
    index.add(("a",), (1,), 2)
    index.add(("a",), (1,), -2)
    assert index.key_count() == 0 and len(index) == 0


def test_median_exact_with_half_cents() -> None:
    acc = make_accumulator("MEDIAN", distinct=False)
    for cents in (450, 1075, 500, 999):
        acc.update(Fraction(cents, 100))
    assert acc.result() == Fraction(500 + 999, 200)  # 7.495: ends in half a cent
    acc.revert(Fraction(1075, 100))
    assert acc.result() == Fraction(5)
    acc.update(0)
    acc.update(0)
    assert acc.result() == Fraction(9, 2)  # 0, 0, 4.50, 5.00, 9.99


# Random interleavings of inserts and retractions on both sides of the correlated
# operators; after every step the output must equal recomputation from scratch.
ROW = st.tuples(st.integers(0, 2), st.integers(0, 4))
OPS = st.lists(st.tuples(st.sampled_from("LR"), st.booleans(), ROW), max_size=40)


def _apply(ops, operator_factory, expected_fn):
    op = operator_factory()
    out = Collect()
    op.connect(out)
    left: Counter = Counter()
    right: Counter = Counter()
    for side, insert, row in ops:
        held = left if side == "L" else right
        if not insert and held[row] == 0:
            continue
        mult = 1 if insert else -1
        held[row] += mult
        (op.push_left if side == "L" else op.push_right)([(row, mult)])
        assert out.state == expected_fn(+left, +right), (side, insert, row)


def _theta(lrow, rrow) -> bool:
    return rrow[1] > lrow[1]  # a correlated condition like FILTER(?seq3 > ?seq2)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_not_exists_with_correlated_filter_equals_recompute(ops) -> None:
    def factory():
        op = AntiJoinOp(("k", "a"), ("k", "b"), minus=False)
        op.set_condition(lambda row: row[2] > row[1])  # merged schema (k, a, b)
        return op

    def expected(left, right):
        return Counter({l: n for l, n in left.items()
                        if not any(r[0] == l[0] and _theta(l, r) for r in right)})

    _apply(ops, factory, expected)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_exists_equals_recompute(ops) -> None:
    def expected(left, right):
        return Counter({l: n for l, n in left.items() if any(r[0] == l[0] for r in right)})

    _apply(ops, lambda: SemiJoinOp(("k", "a"), ("k", "b")), expected)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_join_equals_recompute(ops) -> None:
    def expected(left, right):
        result: Counter = Counter()
        for l, n in left.items():
            for r, m in right.items():
                if l[0] == r[0]:
                    result[l + (r[1],)] += n * m
        return result

    _apply(ops, lambda: JoinOp(("k", "a"), ("k", "b")), expected)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_optional_equals_recompute(ops) -> None:
    def expected(left, right):
        result: Counter = Counter()
        for l, n in left.items():
            matches = [(r, m) for r, m in right.items() if r[0] == l[0]]
            if not matches:
                result[l + (None,)] += n
            for r, m in matches:
                result[l + (r[1],)] += n * m
        return result

    _apply(ops, lambda: LeftJoinOp(("k", "a"), ("k", "b")), expected)
