"""Running (or re-reading) the engine and baseline workloads the report is made of.

Workloads (SPEC §6): Individual Q1, Individual Q2, Mixed, and the window sweep (Mixed
with scaled windows). The engine runs as a subprocess (`taxi-rsp run`) whose input
reading is sampled from ``/proc/<pid>/io`` to get its throughput over time; the
baseline runs on the report's Spark session. A run folder that already holds a
``summary.json`` is read instead of run again when ``reuse`` is set. Each workload runs
``repeat`` times on each side, so the report can give medians and their spread.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from taxi_rsp.errors import UserError
from taxi_rsp.procfs import ReadOffset
from taxi_rsp.verify.compare import compare_folders
from taxi_rsp.outputs.delays import read_delays
from taxi_rsp.verify.rss import PeakRss

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
    peak_rss_mib: float | None = None
    reused: bool = False  # read from a folder an earlier command left (report --reuse)

    @property
    def lines_per_second(self) -> float | None:
        """Input lines per second of execution time (start-up of Python or Spark excluded)."""
        seconds = self.summary.get("exec_seconds")
        return self.summary["lines_read"] / seconds if seconds else None


def _load(folder: Path, queries: tuple[str, ...], reused: bool = False) -> RunResult:
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    result = RunResult(folder, summary, {q: read_delays(folder / f"{q}.csv") for q in queries}, reused=reused)
    samples = folder / "throughput.json"
    if samples.exists():
        result.throughput = [tuple(s) for s in json.loads(samples.read_text())]
    result.peak_rss_mib = summary.get("peak_rss_mib")  # the engine's own VmHWM
    sampled = folder / PEAK_RSS_FILE
    if sampled.exists():  # the baseline's: driver + JVM + Python workers, sampled
        result.peak_rss_mib = json.loads(sampled.read_text()).get("peak_rss_mib")
    return result


PEAK_RSS_FILE = "peak_rss.json"


def _read_chars(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


Progress = Callable[[float | None], None]  # fraction of the input read so far (None: unknown)


def run_engine(input_path: Path, folder: Path, workload: Workload, bytes_per_line: float,
               reuse: bool, progress: Progress = lambda fraction: None) -> RunResult:
    """`taxi-rsp run` as a subprocess, sampling how fast it reads its input."""
    reused = reuse and (folder / "summary.json").exists()
    if not reused:
        command = [sys.executable, "-m", "taxi_rsp", "run", str(input_path), "--out", str(folder),
                   "--no-progress", "--force", *workload.args()]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        size, offset = input_path.stat().st_size, ReadOffset(input_path, process.pid)
        started, samples, last = time.perf_counter(), [], None
        while process.poll() is None:
            time.sleep(SAMPLE_SECONDS)
            chars, now = _read_chars(process.pid), time.perf_counter() - started
            if chars is not None and last is not None:
                samples.append((round(now, 3), (chars - last[1]) / (now - last[0]) / bytes_per_line))
            if chars is not None:
                last = (now, chars)
            position = offset.position()
            progress(min(1.0, position / size) if position is not None and size else None)
        if process.returncode != 0:
            raise UserError(f"engine run failed ({workload.name}): {process.stderr.read().strip()[-300:]}")
        (folder / "throughput.json").write_text(json.dumps(samples))
    return _load(folder, workload.queries, reused)


def run_baseline_workload(input_path: Path, folder: Path, workload: Workload, spark: Callable[[], object],
                          reuse: bool) -> RunResult:
    """The Spark baseline for one workload, in this process; ``spark()`` gives the session
    (called only when a run is needed, so a report from existing folders needs no Spark).
    The peak RSS of this process, the JVM and its Python workers is sampled meanwhile."""
    reused = reuse and (folder / "summary.json").exists()
    if not reused:
        from taxi_rsp.baseline.run import BaselineSettings, run_baseline

        session = spark()
        with PeakRss([os.getpid(), *_jvm_pid()]) as peak:
            run_baseline(input_path, folder, BaselineSettings(workload.queries, workload.q1_window,
                                                              workload.q2_windows), session, force=True)
        (folder / PEAK_RSS_FILE).write_text(json.dumps({
            "peak_rss_mib": peak.mib, "what": "resident MiB of the driver process, the JVM and its "
            "Python workers, sampled every 0.25 s during the run"}))
    return _load(folder, workload.queries, reused)


def _jvm_pid() -> list[int]:
    from pyspark import SparkContext

    gateway = SparkContext._gateway  # noqa: SLF001 - the JVM PySpark started
    proc = getattr(gateway, "proc", None)
    return [proc.pid] if proc is not None else []


def engine_available() -> bool:
    """Whether this installation has the engine's `run` command."""
    # Looked up, not imported: `verify` stays independent of the engine it checks.
    return all(importlib.util.find_spec(name) is not None for name in ("taxi_rsp.runner", "lark"))


@dataclass
class Pair:
    """Engine and baseline results of one workload (``repeat`` runs of each), and whether
    their outputs agree (every engine run against the first baseline run)."""

    workload: Workload
    baselines: list[RunResult]
    engines: list[RunResult]
    identical: bool | None

    @property
    def baseline(self) -> RunResult:
        return self.baselines[0]

    @property
    def engine(self) -> RunResult | None:
        return self.engines[0] if self.engines else None

    def warnings(self) -> list[str]:
        """The runs' data warnings (a window longer than the data, ...), each once."""
        found = [w for run in [*self.baselines, *self.engines] for w in run.summary.get("warnings", [])]
        return list(dict.fromkeys(found))


class Steps:
    """Which of the report's runs is going, and how far it is: a line redrawn in place on
    a terminal (at most every 0.5 s), one line per run otherwise."""

    def __init__(self, total: int, log: Callable[[str], None], tty: bool | None = None) -> None:
        self.total, self.log, self.done = total, log, 0
        self.tty = sys.stdout.isatty() if tty is None else tty
        self.label, self.started = "", 0.0

    def start(self, label: str) -> Progress:
        self.done += 1
        self.label, self.started = f"[{self.done}/{self.total}] {label}", time.monotonic()
        if not self.tty:
            self.log(self.label)
        return self.update

    def update(self, fraction: float | None) -> None:
        if not self.tty:
            return
        elapsed = time.monotonic() - self.started
        text = f"{self.label}: {elapsed:.0f} s"
        if fraction:
            eta = elapsed * (1 - fraction) / fraction
            text += f", {fraction:.0%} of the input, ETA {eta:.0f} s"
        sys.stdout.write(f"\r\x1b[2K{text}")
        sys.stdout.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stdout.write("\r\x1b[2K")
            sys.stdout.flush()


def run_pair(input_path: Path, root: Path, workload: Workload, spark: Callable[[], object], bytes_per_line: float,
             reuse: bool, steps: Steps, repeat: int = 1) -> Pair:
    """``repeat`` baseline and engine runs of one workload, in folders
    ``root/{baseline,engine}/<workload>/run-<i>``."""
    baselines, engines = [], []
    for index in range(1, repeat + 1):
        steps.start(f"{workload.name}: baseline, run {index}/{repeat}")(None)
        baselines.append(run_baseline_workload(input_path, root / "baseline" / workload.name / f"run-{index}",
                                               workload, spark, reuse))
    identical = None
    if engine_available():
        for index in range(1, repeat + 1):
            progress = steps.start(f"{workload.name}: engine, run {index}/{repeat}")
            engines.append(run_engine(input_path, root / "engine" / workload.name / f"run-{index}", workload,
                                      bytes_per_line, reuse, progress))
        identical = all(compare_folders(e.folder, baselines[0].folder, list(workload.queries)).identical
                        for e in engines)
    steps.finish()
    return Pair(workload, baselines, engines, identical)
