"""The native group table against its pure-Python twin (issue 50): one window aggregate's
state — a 30-minute window of arrivals, COUNT, MAX and MEDIAN per group over ~1,000
groups, an instant's flush after every arrival — driven the way ``CompiledAggregate``
drives it, without the engine around it. Both sides run the same operations and emit the
same rows (checked).

    .venv/bin/python -m pytest benchmarks/bench_group_table.py --benchmark-columns=mean,min,rounds
"""

from __future__ import annotations

import random

import pytest

from taxi_rsp.engine.native import CGroupTable, PyGroupTable, native_available
from taxi_rsp.engine.native.encoders import TermEncoders
from taxi_rsp.rdf.dictionary import Dictionary

N = 20_000
MINUTE = 60_000


def _arrivals() -> list[tuple[int, tuple, tuple]]:
    """(time ms, key, arguments): one arrival every 90 ms on average, cent amounts."""
    rng = random.Random(7)
    time, out = 0, []
    for seq in range(N):
        time += rng.randint(0, 180)
        out.append((time, (rng.randrange(1000) | (1 << 62),), (1, seq, rng.randint(250, 6000))))
    return out


ARRIVALS = _arrivals()


def window_aggregate(table_class: type) -> int:
    """Every arrival: expire what left the window, insert, flush; the rows emitted."""
    table = table_class(1, ("COUNT", "MAX", "MEDIAN"), False)
    table.set_results([None, None, 2], TermEncoders(Dictionary()))
    emitted = [0]

    def sink(out: list) -> None:
        emitted[0] += len(out)

    sinks, retire = [sink], (lambda out: None)
    for time, key, args in ARRIVALS:
        table.expire(time)
        table.insert(time + 30 * MINUTE, key, args)
        table.flush(sinks, retire)
    return emitted[0]


TABLES = [PyGroupTable, *([CGroupTable] if native_available() else [])]


def test_both_tables_emit_the_same_rows() -> None:
    assert len({window_aggregate(table_class) for table_class in TABLES}) == 1


@pytest.mark.parametrize("table_class", TABLES, ids=lambda c: c.__module__.rsplit(".", 1)[-1])
def test_window_aggregate_state(benchmark, table_class: type) -> None:
    benchmark.pedantic(window_aggregate, args=(table_class,), rounds=5, iterations=1)
