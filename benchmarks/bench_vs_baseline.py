"""The engine against the Spark recompute baseline, in one run (issue 15: ≥ 10× less
execution time for each of Q1, Q2 and Mixed on the same file and machine).

    BENCH_VS_BASELINE_WORKLOADS=mixed .venv/bin/python -m pytest benchmarks/bench_vs_baseline.py -m slow -s

Per workload and back to back: ``taxi-rsp run FILE --query …`` and ``taxi-rsp baseline FILE
--query …`` under ``/usr/bin/time -v``, then ``taxi-rsp verify`` on the two output folders
(identical but for the delay column, or the benchmark fails). Execution seconds come from
each side's ``summary.json`` (the engine's event loop; the baseline's whole recompute, Spark
start-up excluded), CPU seconds and peak RSS from ``time``. The speed-up is baseline exec /
engine exec; the engine runs on one core, Spark on all of them (``local[*]``).

Input: ``BENCH_VS_BASELINE_FILE`` or the cached synthetic 20-day file (seed 0); workloads:
``BENCH_VS_BASELINE_WORKLOADS`` (comma-separated, default ``q1,q2,mixed``; the baseline
needs about a quarter of an hour per workload on the 20-day file on 2 cores). Results merge
into ``cache/vs_baseline.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from bench_scale import CLI, WORKLOADS, commit, machine, timed
from conftest import cached_synthetic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(6 * 3600)]

TARGET = 10.0  # issue 15: baseline exec / engine exec
CHOSEN = [w for w in os.environ.get("BENCH_VS_BASELINE_WORKLOADS", "q1,q2,mixed").split(",") if w]


@pytest.fixture(scope="module")
def input_file(cache_dir: Path) -> Path:
    given = os.environ.get("BENCH_VS_BASELINE_FILE")
    return Path(given) if given else cached_synthetic(cache_dir, 20, 0)


def _side(command: str, input_file: Path, out: Path, queries: list[str]) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    extra = ["--no-progress"] if command == "run" else []
    argv = CLI + [command, str(input_file), "--out", str(out), *extra,
                  *[arg for q in queries for arg in ("--query", q)]]
    measured = timed(argv)
    assert measured["rc"] == 0, measured["stderr"]
    summary = json.loads((out / "summary.json").read_text())
    return {"exec_s": float(summary["exec_seconds"]), "cpu_s": measured["cpu_s"], "wall_s": measured["wall_s"],
            "rss_mib": measured["rss_mib"], "delay_ms": summary.get("delay_ms")}


@pytest.mark.parametrize("workload", CHOSEN)
def test_engine_against_baseline(benchmark, workload: str, input_file: Path, cache_dir: Path) -> None:
    queries = WORKLOADS[workload]
    engine_out, baseline_out = cache_dir / f"vs_engine_{workload}", cache_dir / f"vs_baseline_{workload}"
    engine = benchmark.pedantic(_side, args=("run", input_file, engine_out, queries), rounds=1, iterations=1)
    baseline = _side("baseline", input_file, baseline_out, queries)
    verify = timed(CLI + ["verify", str(engine_out), str(baseline_out)])
    assert verify["rc"] == 0, verify["stdout"] + verify["stderr"]
    speedup = baseline["exec_s"] / engine["exec_s"]
    entry = {"engine": engine, "baseline": baseline, "speedup_exec": speedup, "target": TARGET,
             "file": str(input_file), "commit": commit(), "date": time.strftime("%Y-%m-%d %H:%M"),
             "machine": machine(), "load_at_end": os.getloadavg()}
    store = cache_dir / "vs_baseline.json"
    merged = json.loads(store.read_text()) if store.exists() else {}
    merged[f"{workload}:{input_file.name}"] = entry
    store.write_text(json.dumps(merged, indent=2, default=str))
    benchmark.extra_info.update(speedup_exec=speedup, baseline_exec_s=baseline["exec_s"])
    print(f"\n{workload}: engine {engine['exec_s']:.1f} s exec ({engine['cpu_s']:.1f} CPU s), "
          f"baseline {baseline['exec_s']:.1f} s exec -> {speedup:.1f}x (target {TARGET:g}x)")
