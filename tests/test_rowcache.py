"""The report path's per-row caches: results stay those of the reference operators."""

from __future__ import annotations

import doctest
import importlib

import pytest

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.rowcache import ByIdentity
from taxi_rsp.planner import register

from engine_helpers import Stream

DUPLICATES = """PREFIX ex: <http://example.org/>
SELECT ?g ?n WHERE { STREAM ex:stream [RANGE 3m] { ?s ex:group ?g } BIND(STRLEN(STR(?g)) AS ?n) }
ORDER BY ?g LIMIT 3"""


@pytest.mark.parametrize("module", ["taxi_rsp.engine.rowcache", "taxi_rsp.engine.reclaim", "taxi_rsp.listener.formats"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_a_row_is_computed_again_only_when_it_is_another_object() -> None:
    calls: list[tuple] = []
    memo = ByIdentity(lambda row: calls.append(row) or row[0])
    a, b, c = ("a",), ("b",), ("c",)
    assert memo.map([a, b, a]) == ["a", "b", "a"]  # a row held twice: computed once
    assert memo.map([c, b]) == ["c", "b"]
    assert memo.map([a]) == ["a"]  # dropped from the last result: computed again
    assert calls == [a, b, c, a]


def test_top_k_rows_held_several_times_are_reported_like_the_reference() -> None:
    """Multiplicities rising above one and falling back (the snapshot reads held counts
    only while some row is held more than once), with fused BINDs extended per row."""
    streams = []
    for compiled in (True, False):
        engine = Engine(compiled=compiled)
        register(engine, DUPLICATES, "q")
        streams.append(Stream(engine))
    groups = ["ex:g1", "ex:g1", "ex:g2", "ex:g0", "ex:g1", "ex:g3", "ex:g0", "ex:g2", "ex:g2", "ex:g4"]
    for minute, group in enumerate(groups):
        for stream in streams:
            stream.send(minute, ("ex:s", "ex:group", group))  # equal rows: one row held several times
        compiled, reference = (stream.values() for stream in streams)
        assert compiled == reference, minute
    assert any(len(set(rows)) < len(rows) for _, _, rows in streams[0].values())  # duplicates were reported


def test_a_row_arriving_with_a_multiplicity_above_one_is_reported_that_often() -> None:
    from taxi_rsp.engine.compiled.topk import CompiledTopK
    engine = Engine()
    register(engine, DUPLICATES, "q")
    Stream(engine).send(0, ("ex:s", "ex:group", "ex:g1"))
    top_k = next(op for op in engine.queries[0].physical.operators if isinstance(op, CompiledTopK))
    row = next(iter(top_k._held.values()))[3]  # the very row object it holds
    top_k.push([(row, -1)])
    top_k.push([(row, 2)])  # a new row held twice at once (a join's match counted twice, say)
    assert len(top_k.snapshot()) == 2
    top_k.push([(row, -1)])
    assert len(top_k.snapshot()) == 1
