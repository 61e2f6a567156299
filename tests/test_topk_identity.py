"""The compiled top-k keys its held rows by identity while every retraction names the
very row object inserted, and by value from the first one that does not: its reports
stay those of a multiset of rows either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.engine.compiled.topk import CompiledTopK
from taxi_rsp.engine.engine import Engine
from taxi_rsp.feeder.reader import Feeder
from taxi_rsp.planner import register

from engine_helpers import Stream

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
GROUPS = """PREFIX ex: <http://example.org/>
SELECT ?g ?n WHERE { STREAM ex:stream [RANGE 3m] { ?s ex:group ?g } BIND(STRLEN(STR(?g)) AS ?n) }
ORDER BY ?g LIMIT 3"""


def _top_k(engine: Engine) -> CompiledTopK:
    return next(op for query in engine.queries for op in query.physical.operators if isinstance(op, CompiledTopK))


def _holding_one_row() -> tuple[CompiledTopK, tuple]:
    """A compiled top-k (its key compiled) holding one group's row, and that row object."""
    engine = Engine()
    register(engine, GROUPS, "q")
    Stream(engine).send(0, ("ex:s", "ex:group", "ex:g1"))
    top_k = _top_k(engine)
    return top_k, next(iter(top_k._held.values()))[3]


@pytest.mark.parametrize("query", ["q2"])
def test_the_debs_queries_top_k_stays_keyed_by_identity(query: str) -> None:
    """Q2's join of two groups retracts the very rows it emitted, also after a group's
    row was rebuilt equal at an instant (the group keeps the emitted one). Planned as the
    join and a top-k (``top_k="sorted"``): by default Q2's pairs of groups and Q1's groups
    are ranked in their tables (test_ranked_join.py, test_ranked_table.py)."""
    engine = Engine(top_k="sorted")
    register(engine, (ROOT / "queries" / f"{query}.cqels").read_text(), query)
    for event in Feeder(SAMPLE, engine.dictionary):
        engine.process(event)
    top_k = _top_k(engine)
    assert top_k.mode == "compiled" and len(top_k._held) > 10
    assert not top_k._by_value
    assert all(key == id(entry[3]) for key, entry in top_k._held.items())


def test_equal_rows_held_as_distinct_objects_are_merged_when_keyed_by_value() -> None:
    top_k, row = _holding_one_row()
    reported = top_k.snapshot()
    twin = tuple(list(row))
    assert twin == row and twin is not row

    top_k.push([(twin, 1)])  # an equal row, another object: a second entry by identity
    assert not top_k._by_value and len(top_k._held) == 2
    assert top_k.snapshot() == reported * 2

    top_k.push([(tuple(list(row)), -1)])  # names neither object: keyed by value from now on
    assert top_k._by_value and len(top_k._held) == 1
    assert len(top_k._sorted) + top_k._rest_count[0] == 1 and top_k._multiples[0] == 0
    assert top_k.snapshot() == reported

    top_k.push([(twin, 1), (row, 1)])  # by value: one entry, its multiplicity counted
    assert len(top_k._held) == 1 and top_k._multiples[0] == 1
    assert top_k.snapshot() == reported * 3
    top_k.push([(row, -3)])
    assert top_k.snapshot() == [] and not top_k._held


def test_a_retraction_of_a_row_never_inserted_is_still_refused() -> None:
    top_k, row = _holding_one_row()
    with pytest.raises(ValueError, match="not in the top-k input"):
        top_k.push([(row[:-1] + (row[-1] + 1,), -1)])
