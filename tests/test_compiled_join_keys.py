"""The compiled join looks the other side up once per run of deltas under one key
(``_has_key``: parts that are the same objects are equal without a rich comparison).
Keys whose parts are only equal values (rows built apart), the same objects (a group's
old and new rows), or that alternate must give exactly the reference join's output,
order included."""

from __future__ import annotations

import random

import pytest

from taxi_rsp.engine.compiled.join import CompiledJoin
from taxi_rsp.engine.ops.join import JoinOp


def big(n: int) -> int:
    """A fresh int object of value 10**12 + n (equal to, not the same as, another call's)."""
    return int(str(10**12 + n))


def _joins() -> tuple[list[JoinOp | CompiledJoin], list[list]]:
    left, right = ("k", "a"), ("k", "b")
    joins: list[JoinOp | CompiledJoin] = [JoinOp(left, right), CompiledJoin(left, right, JoinOp(left, right))]
    outputs: list[list] = [[], []]
    for join, out in zip(joins, outputs):
        join.connect(out.extend)
    return joins, outputs


def test_runs_of_one_key_with_equal_or_identical_parts_join_like_the_reference() -> None:
    shared = big(5)
    batches = [
        ("right", [((big(1), 10), 1), ((big(1), 11), 1), ((big(2), 20), 1), ((shared, 50), 1)]),
        ("left", [((big(1), 1), 1), ((big(2), 2), 1), ((shared, 5), 1)]),
        # equal keys from distinct objects, back to back, then alternating keys
        ("left", [((big(1), 1), -1), ((big(1), 3), 1), ((big(2), 2), -1), ((big(1), 3), -1), ((big(2), 4), 1)]),
        # a group's change: old and new row share the key's very objects
        ("left", [((shared, 5), -1), ((shared, 6), 1)]),
        ("right", [((big(1), 10), -1), ((big(1), 12), 1), ((big(3), 30), 1), ((shared, 50), -1)]),
        ("left", [((big(3), 7), 1), ((big(3), 7), 1), ((big(3), 7), -1), ((shared, 6), -1)]),
    ]
    joins, outputs = _joins()
    for side, deltas in batches:
        for join in joins:
            (join.push_left if side == "left" else join.push_right)(list(deltas))
    reference, compiled = outputs
    assert compiled == reference
    assert len(reference) > 10  # the batches did join
    assert joins[1].mode == "compiled"


# (left schema, right schema): keys and tails at consecutive positions are sliced, others
# projected; each pair mixes both on one side or the other
SCHEMAS = [
    (("k", "a"), ("k", "b")),                  # key leads both rows, tail after it
    (("a", "k", "j"), ("j", "b", "k")),        # left key (k, j) consecutive, right's scattered
    (("j", "a", "k"), ("b", "k", "j", "c")),   # right key consecutive, tail (b, c) not
    (("a", "k"), ("k",)),                      # nothing to add from the right: an empty tail
]


@pytest.mark.parametrize("left,right", SCHEMAS)
def test_sliced_and_projected_keys_and_tails_join_like_the_reference(left: tuple[str, ...],
                                                                      right: tuple[str, ...]) -> None:
    chooser = random.Random(7)
    joins: list[JoinOp | CompiledJoin] = [JoinOp(left, right), CompiledJoin(left, right, JoinOp(left, right))]
    outputs: list[list] = [[], []]
    for join, out in zip(joins, outputs):
        join.connect(out.extend)
    held: dict[str, list[tuple]] = {"left": [], "right": []}
    for _ in range(300):
        side = chooser.choice(["left", "right"])
        schema = left if side == "left" else right
        rows = held[side]
        if rows and chooser.random() < 0.4:
            row, mult = rows.pop(chooser.randrange(len(rows))), -1
        else:
            row = tuple(big(chooser.randrange(3)) if v in ("k", "j") else chooser.randrange(100) for v in schema)
            mult = 1
            rows.append(row)
        for join in joins:
            (join.push_left if side == "left" else join.push_right)([(row, mult)])
    assert outputs[1] == outputs[0]
    assert len(outputs[0]) > 100
    assert joins[1].mode == "compiled"
