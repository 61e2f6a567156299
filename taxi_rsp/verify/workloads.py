"""Running (or re-reading) the engine and baseline workloads the report is made of.

Workloads (SPEC §6): Individual Q1, Individual Q2, Mixed, and the window sweep (Mixed
with scaled windows). The engine runs as a subprocess (`taxi-rsp run`) whose input
reading is sampled from ``/proc/<pid>/io`` to get its throughput over time; the
baseline runs on the report's Spark session. A run folder that already holds a
``summary.json`` is read instead of run again when ``reuse`` is set.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from taxi_rsp.errors import UserError
from taxi_rsp.verify.compare import compare_folders
from taxi_rsp.verify.delays import read_delays

SAMPLE_SECONDS = 0.5


@dataclass(frozen=True)
class Workload:
    """One configuration: which queries and windows (minutes)."""

    name: str
    queries: tuple[str, ...]
    q1_window: int = 30
    q2_windows: tuple[int, int] = (15, 30)

    def args(self) -> list[str]:
        out = []
        for query in self.queries:
            out += ["--query", query]
        return out + ["--q1-window", str(self.q1_window),
                      "--q2-windows", f"{self.q2_windows[0]},{self.q2_windows[1]}"]


def standard_workloads() -> list[Workload]:
    return [Workload("q1", ("q1",)), Workload("q2", ("q2",)), Workload("mixed", ("q1", "q2"))]


def sweep_workloads(windows: list[int]) -> list[Workload]:
    """Mixed with Q1 window W and Q2 windows W/2, W (30 -> 15/30, as SPEC §6 scales them)."""
    return [Workload(f"sweep-{w}", ("q1", "q2"), w, (w // 2, w)) for w in windows]


@dataclass
class RunResult:
    """One finished run: its summary, delays per query, and throughput samples."""

    folder: Path
    summary: dict
    delays: dict[str, np.ndarray] = field(default_factory=dict)
    throughput: list[tuple[float, float]] = field(default_factory=list)  # (seconds, lines/s)


def _load(folder: Path, queries: tuple[str, ...]) -> RunResult:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    result = RunResult(folder, summary, {q: read_delays(folder / f"{q}.csv") for q in queries})
    samples = folder / "throughput.json"
    if samples.exists():
        result.throughput = [tuple(s) for s in json.loads(samples.read_text())]
    return result


def _read_chars(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def run_engine(input_path: Path, folder: Path, workload: Workload, bytes_per_line: float,
               reuse: bool) -> RunResult:
    """`taxi-rsp run` as a subprocess, sampling how fast it reads its input."""
    if not (reuse and (folder / "summary.json").exists()):
        command = [sys.executable, "-m", "taxi_rsp.cli", "run", str(input_path), "--out", str(folder),
                   "--no-progress", *workload.args()]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started, samples, last = time.perf_counter(), [], None
        while process.poll() is None:
            time.sleep(SAMPLE_SECONDS)
            chars, now = _read_chars(process.pid), time.perf_counter() - started
            if chars is not None and last is not None:
                samples.append((round(now, 3), (chars - last[1]) / (now - last[0]) / bytes_per_line))
            if chars is not None:
                last = (now, chars)
        if process.returncode != 0:
            raise UserError(f"engine run failed ({workload.name}): {process.stderr.read().strip()[-300:]}")
        (folder / "throughput.json").write_text(json.dumps(samples))
    return _load(folder, workload.queries)


def run_baseline_workload(input_path: Path, folder: Path, workload: Workload, spark: Callable[[], object],
                          reuse: bool) -> RunResult:
    """The Spark baseline for one workload, in this process; ``spark()`` gives the session
    (called only when a run is needed, so a report from existing folders needs no Spark)."""
    if not (reuse and (folder / "summary.json").exists()):
        from taxi_rsp.baseline.run import BaselineSettings, run_baseline

        run_baseline(input_path, folder, BaselineSettings(workload.queries, workload.q1_window,
                                                          workload.q2_windows), spark())
    return _load(folder, workload.queries)


def engine_available() -> bool:
    """Whether this installation has the engine's `run` command."""
    try:
        import taxi_rsp.commands.run  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class Pair:
    """Engine and baseline results of one workload, and whether their outputs agree."""

    workload: Workload
    baseline: RunResult
    engine: RunResult | None
    identical: bool | None


def run_pair(input_path: Path, root: Path, workload: Workload, spark: Callable[[], object], bytes_per_line: float,
             reuse: bool, log: Callable[[str], None]) -> Pair:
    log(f"{workload.name}: baseline")
    baseline = run_baseline_workload(input_path, root / "baseline" / workload.name, workload, spark, reuse)
    engine, identical = None, None
    if engine_available():
        log(f"{workload.name}: engine")
        engine = run_engine(input_path, root / "engine" / workload.name, workload, bytes_per_line, reuse)
        identical = compare_folders(engine.folder, baseline.folder, list(workload.queries)).identical
    return Pair(workload, baseline, engine, identical)
