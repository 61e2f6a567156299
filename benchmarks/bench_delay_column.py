"""Where polars would earn its place: reading the delay column of a multi-million-line
output (what `report` and the delay statistics do), Python loop vs polars.

    .venv/bin/python -m pytest benchmarks/bench_delay_column.py -m slow -s

Writes a 3,000,000-line Q1 output (the real sample's q1.csv repeated) into ./cache once,
reads its delay column both ways (best of 3 each), checks the values agree, and prints
both times; docs/performance.md (its git history, "Install weight and polars") records the figures.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from taxi_rsp.outputs.delays import read_delays

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
LINES = 3_000_000

pytestmark = pytest.mark.slow


def _polars_delays(path: Path, columns: int) -> np.ndarray:
    frame = pl.read_csv(path, has_header=False, columns=[columns - 1], null_values="NULL", infer_schema=False)
    return frame.to_series().drop_nulls().cast(pl.Float64).to_numpy()


def _best(function, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def test_delay_column_python_vs_polars(cache_dir: Path, tmp_path: Path) -> None:
    big = cache_dir / f"q1_{LINES}.csv"
    if not big.exists():
        subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE), "--out", str(tmp_path / "o"),
                        "--query", "q1", "--no-progress"], check=True, capture_output=True)
        lines = (tmp_path / "o" / "q1.csv").read_text().splitlines()
        with big.open("w") as out:
            for line in itertools.islice(itertools.cycle(lines), LINES):
                out.write(line + "\n")
    columns = big.open().readline().count(",") + 1
    python_s, by_python = _best(lambda: read_delays(big))
    polars_s, by_polars = _best(lambda: _polars_delays(big, columns))
    assert by_python.size == by_polars.size > 0
    assert np.allclose(by_python, by_polars)
    print(f"\n{LINES:,} lines, {big.stat().st_size / 2**20:,.0f} MiB: Python loop {python_s:.2f} s, "
          f"polars {polars_s:.2f} s (best of 3)")
