"""Property: on random small streams the engine's Q1/Q2 outputs equal the oracle's, line
for line (all fields but the delay, whose NULL-ness must agree)."""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxi_rsp.errors import UserError
from taxi_rsp.outputs.lines import split_delay
from taxi_rsp.runner import RunConfig, run
from tests.oracle.run import run_oracle

# A few points: two Q1 cells sharing Q2 cells, an exact west/north cell edge, an outlier.
POINTS = [
    ("-73.956528", "40.716976"),
    ("-73.962440", "40.715008"),
    ("-73.956520", "40.716970"),
    ("-73.998640", "40.725150"),
    ("-74.916578", "41.477182778"),  # the north-west corner of cell 1.1
    ("0", "0"),  # outside both grids
]
START = datetime(2013, 1, 1)

trip = st.tuples(
    st.sampled_from(["A", "B", "C"]),                    # medallion: taxis are reused
    st.integers(0, 35),                                   # minutes after the previous drop-off
    st.integers(0, 20),                                   # trip duration in minutes
    st.sampled_from(range(len(POINTS))), st.sampled_from(range(len(POINTS))),
    st.sampled_from(["3.50", "4.005", "0.00", "-1.00", "", "abc", "10"]),
    st.sampled_from(["0.00", "1.25", "0.005", "2"]),
)
bad_line = st.sampled_from(["", "x,y", "A,B,2013-01-01 00:00:00,2013-02-30 00:00:00" + ",1" * 13])


def to_csv(items) -> str:
    lines, clock = [], START
    for item in items:
        if isinstance(item, str):
            lines.append(item)
            continue
        medallion, gap, duration, pickup, dropoff, fare, tip = item
        clock += timedelta(minutes=gap)
        p, d = POINTS[pickup], POINTS[dropoff]
        fields = [medallion, "H", f"{clock - timedelta(minutes=duration):%Y-%m-%d %H:%M:%S}",
                  f"{clock:%Y-%m-%d %H:%M:%S}", "60", "1.0", p[0], p[1], d[0], d[1], "CSH", fare,
                  "0.50", "0.50", tip, "0.00", "5.00"]
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n"


def strip_delay(lines: list[str]) -> list[tuple[str, bool]]:
    return [split_delay(line) for line in lines]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(trip, trip, trip, bad_line), min_size=1, max_size=25))
def test_engine_equals_oracle_on_random_streams(items) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.csv"
        path.write_text(to_csv(items))
        expected = run_oracle(path)
        try:
            run(RunConfig(input=path, out=Path(tmp) / "out", queries=["q1", "q2"]))
        except UserError as error:  # no line accepted: no result is written, and the oracle has none
            assert "was accepted" in str(error) and not expected.q1 and not expected.q2
            assert sorted(p.name for p in (Path(tmp) / "out").iterdir()) == ["rejects.csv"]
            return
        for query in ("q1", "q2"):
            mine = (Path(tmp) / "out" / f"{query}.csv").read_text().splitlines()
            assert strip_delay(mine) == strip_delay(getattr(expected, query)), query
