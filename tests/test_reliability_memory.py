"""Bounded memory (issue 8 §4): every lazily cleaned structure of the Q1/Q2 plans stays
proportional to the window contents on a long steady stream, and `taxi-rsp run` records
its peak RSS at line-count checkpoints in summary.json.

tests/test_bounded_state.py checks operator rows and the join's ring index; this file
looks inside each structure that deletes lazily or keeps per-key containers: ring
indexes (dead cells), one-way indexes (empty key maps), MEDIAN's sorted lists (groups
left behind when they empty) and the TMA top-k grid (empty cells).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.index.oneway import OneWayIndex
from taxi_rsp.engine.index.ring import RingIndex
from taxi_rsp.engine.ops.aggregates import Median
from taxi_rsp.engine.ops.group import GroupOp
from taxi_rsp.engine.compiled.aggregate import CompiledAggregate
from taxi_rsp.engine.compiled.correlated import CompiledCorrelated
from taxi_rsp.engine.compiled.latest import LatestPerKey
from taxi_rsp.engine.compiled.group import CompiledGroup
from taxi_rsp.engine.compiled.join import CompiledJoin
from taxi_rsp.engine.compiled.topk import CompiledTopK
from taxi_rsp.engine.ops.tma import TmaTopKOp
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register
from tests.test_bounded_state import steady_stream


def attributes(op: object) -> list[object]:
    """The values an operator holds, whether it uses __dict__ or __slots__."""
    values = list(vars(op).values()) if hasattr(op, "__dict__") else []
    for cls in type(op).__mro__:
        values += [getattr(op, name) for name in getattr(cls, "__slots__", ()) if hasattr(op, name)]
    return values


def check_ring(index: RingIndex) -> int:
    """No ring without a live row; dead cells bounded by the compaction rule."""
    rings = [*index._rings.values(), *index._wild.values()]
    assert all(ring.live > 0 for ring in rings)
    assert sum(ring.live for ring in rings) == len(index)
    assert all(len(ring.cells) <= 2 * ring.live + 8 for ring in rings)
    return index.cell_count()


def check_oneway(index: OneWayIndex) -> int:
    """No empty key map left behind; the size counter matches what is stored."""
    maps = list(index._keys.values())
    assert all(maps) and sum(len(rows) for rows in maps) == len(index)
    assert index._wild <= set(index._keys)
    return len(index)


def check_medians(op: GroupOp) -> int:
    """Groups go when their last row leaves; a MEDIAN list holds at most its group's rows."""
    held = 0
    for state in op._groups.values():
        assert state.rows > 0 or op._implicit
        for acc in state.accumulators:
            if isinstance(acc, Median):
                assert len(acc.values) <= state.rows
                held += len(acc.values)
    return held


def check_tma(op: TmaTopKOp) -> int:
    """No empty grid cell; every row is in exactly the cell its map says."""
    assert all(op._cells.values())
    assert sum(len(rows) for rows in op._cells.values()) == len(op._where)
    assert all(row in op._cells[cell] for row, cell in op._where.items())
    return len(op._cells)


def check_flushed(table) -> None:
    """Between events every instant is flushed: no group is left touched in a compiled
    operator's table (a flag left set would keep a group out of the next instant's flush)."""
    assert not table.has_changes()


def check_compiled_aggregate(op: CompiledAggregate) -> tuple[int, int]:
    """Between events every instant is flushed; groups go when their last row leaves (at
    most one per entry, besides the implicit one); the MIN/MAX/MEDIAN values stored stay
    within two per entry and value slot plus a cut-off dead prefix of 16 per group."""
    table = op._table
    check_flushed(table)
    groups, values = table.group_count(), table.held_values()
    assert groups <= len(table) + op._implicit
    slots = sum(name in ("MIN", "MAX", "MEDIAN") for name, *_ in op._aggs)
    assert values <= slots * (2 * len(table) + 17 * groups)
    return groups, values


def structure_sizes(engine: Engine) -> dict[str, int]:
    sizes: dict[str, int] = defaultdict(int)
    for query in engine.queries:
        for op in query.physical.operators:
            if isinstance(op, CompiledAggregate):
                groups, values = check_compiled_aggregate(op)
                sizes["compiled groups"] += groups
                sizes["compiled median values"] += values
                sizes["compiled window rows"] += op.state_size()
            if isinstance(op, CompiledJoin):
                # no key left behind with neither side's rows (a merged row only for two lone rows)
                assert all(slot[0] is not None or slot[1] is not None for slot in op._slots.values())
                assert all(slot[2] is None or (type(slot[0]) is tuple and type(slot[1]) is tuple)
                           for slot in op._slots.values())
                sizes["compiled join/minus rows"] += op.state_size()
            if isinstance(op, CompiledCorrelated):
                sides = (op._left, op._right)
                assert all(rows for side in sides for rows in side.values())  # no empty key left behind
                sizes["compiled join/minus rows"] += sum(len(rows) for side in sides for rows in side.values())
            if isinstance(op, LatestPerKey):
                assert all(op._rows.values())  # a key goes with its last row
                sizes["latest-per-key rows"] += op.state_size()
            if isinstance(op, CompiledGroup):
                assert all(rows > 0 for _, rows, *_ in op._table.states())  # emptied groups are dropped
                check_flushed(op._table)
                sizes["compiled groups"] += op._table.group_count()
            if isinstance(op, CompiledTopK):
                assert len(op._sorted) + op._rest_count[0] == len(op._held)  # head + rest
                assert sum(entry[2] for entry in op._held.values()) == op._rest_count[0]  # rest flags
                sizes["compiled top-k rows"] += len(op._held)
            if isinstance(op, GroupOp) and any(
                    isinstance(acc, Median) for s in op._groups.values() for acc in s.accumulators):
                sizes["median values"] += check_medians(op)
            if isinstance(op, TmaTopKOp):
                sizes["tma cells"] += check_tma(op)
            for value in attributes(op):
                if isinstance(value, RingIndex):
                    sizes["ring cells"] += check_ring(value)
                elif isinstance(value, OneWayIndex):
                    sizes["one-way rows"] += check_oneway(value)
    return dict(sizes)


@pytest.mark.parametrize("compiled", [False, True])
def test_lazy_structures_stay_proportional_to_the_window(tmp_path: Path, compiled: bool) -> None:
    path = tmp_path / "steady.csv"
    steady_stream(path, hours=4, per_minute=6)  # windows are 15 and 30 minutes: full after 30
    engine = Engine(compiled=compiled)
    for name in ("q1", "q2"):
        register(engine, resolve_query(name).text, name)
    samples = []
    for i, event in enumerate(Feeder(path, engine.dictionary), 1):
        engine.process(event)
        if i % 240 == 0:  # every 40 minutes of stream time, internal invariants included
            samples.append(structure_sizes(engine))
    expected = ({"compiled join/minus rows", "compiled groups", "compiled median values", "compiled window rows",
                 "compiled top-k rows"} if compiled else {"ring cells", "one-way rows", "median values", "tma cells"})
    assert expected <= set(samples[-1]), samples[-1]
    warm = samples[1:]  # from 80 minutes on
    for kind in samples[-1]:
        series = [s.get(kind, 0) for s in warm]
        assert max(series) <= 1.5 * min(series) + 8, (kind, series)


def test_summary_records_peak_rss_at_line_checkpoints(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    steady_stream(data, hours=1, per_minute=2)  # 120 lines
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", "run", str(data), "--out", str(out),
                           "--rss-at", "50,10,500"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    rss = summary["rss_mib_at_lines"]
    assert list(rss) == ["10", "50"]  # 500 was never reached
    assert 10 < rss["10"] <= rss["50"] <= summary["peak_rss_mib"] < 4096


def test_peak_rss_is_the_run_s_own_not_its_parent_s(tmp_path: Path) -> None:
    """Linux carries ``ru_maxrss`` over fork and exec: a run started by a process
    holding 600 MiB (as `taxi-rsp report` or a benchmark under pytest may) reported
    that as its own peak. The summary reads the run's own high-water mark instead."""
    data = tmp_path / "in.csv"
    steady_stream(data, hours=1, per_minute=2)
    out = tmp_path / "out"
    ballast = bytearray(600 * 2**20)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # touched: resident in this process
    done = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", "run", str(data), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    del ballast
    assert done.returncode == 0, done.stderr
    assert 10 < json.loads((out / "summary.json").read_text())["peak_rss_mib"] < 400
