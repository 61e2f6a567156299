"""Engine memory is bounded by the window contents, not by the stream length: on a long
steady stream the rows held by every operator, the lazily deleted ring cells and the
dictionary stop growing once the windows are full."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from taxi_rsp.feeder import Feeder
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.ops.join import JoinOp
from taxi_rsp.engine.ops.minus import AntiJoinOp
from taxi_rsp.runner import resolve_query
from taxi_rsp.planner import register

POINTS = [(-73.99 + 0.004 * i, 40.72 + 0.003 * j) for i in range(6) for j in range(5)]


def steady_stream(path: Path, hours: int, per_minute: int, taxis: int = 200) -> int:
    rng = random.Random(7)
    start = datetime(2013, 1, 1)
    lines = []
    for minute in range(hours * 60):
        drop = start + timedelta(minutes=minute)
        for _ in range(per_minute):
            (plon, plat), (dlon, dlat) = rng.choice(POINTS), rng.choice(POINTS)
            fare = f"{rng.randint(300, 5000) / 100:.2f}"
            lines.append(
                f"T{rng.randrange(taxis)},H,{drop - timedelta(minutes=rng.randint(1, 20)):%Y-%m-%d %H:%M:%S},"
                f"{drop:%Y-%m-%d %H:%M:%S},600,2.0,{plon:.6f},{plat:.6f},{dlon:.6f},{dlat:.6f},CRD,{fare},"
                f"0.50,0.50,1.00,0.00,10.00"
            )
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def test_state_stays_flat_on_a_long_stream(tmp_path: Path) -> None:
    path = tmp_path / "steady.csv"
    steady_stream(path, hours=5, per_minute=6)
    engine = Engine()
    for name in ("q1", "q2"):
        register(engine, resolve_query(name).text, name)
    samples = []
    for i, event in enumerate(Feeder(path, engine.dictionary), 1):
        engine.process(event)
        if i % 300 == 0:
            samples.append((sum(q.state_size() for q in engine.queries), len(engine.dictionary)))
    warm = samples[len(samples) // 5:]  # after the first hour: windows are full
    states = [s for s, _ in warm]
    assert max(states) < 1.3 * min(states), states
    # Per-event IRIs, seqs, times and coordinates are inlined; the table holds only the
    # 200 medallions, a few strings, the vocabulary and the (≤ 30 + 30) cell ids.
    assert warm[-1][1] <= 200 + 2 + 60 + 40, warm[-1][1]
    for query in engine.queries:
        for op in query.physical.operators:
            if isinstance(op, (JoinOp, AntiJoinOp)):
                index = op._right if isinstance(op, JoinOp) else op.right
                assert index.cell_count() <= 2 * len(index) + 8 * index.key_count() + 8
