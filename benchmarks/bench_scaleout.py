"""Scale-out figures: the sequential engine against the time-partitioned run on Spark.

    $ .venv/bin/python -m pytest benchmarks/bench_scaleout.py --benchmark-only -s          # real sample
    $ SCALEOUT_INPUT=/tmp/synth500k.csv SCALEOUT_PARTITIONS=2,4 nice -n 10 \\
        .venv/bin/python -m pytest benchmarks/bench_scaleout.py --benchmark-only -s

Environment: ``SCALEOUT_INPUT`` (default: the real sample), ``SCALEOUT_QUERIES`` (default
``q1``), ``SCALEOUT_PARTITIONS`` (chunk counts, default ``2``), ``SCALEOUT_MASTER``
(default ``local[2]``), ``SCALEOUT_WORK`` (a folder kept between invocations, so the
one-core sequential run and the Spark run can be timed separately, ``-k test_sequential``
then ``-k test_spark`` (not ``-k spark``: the module's marker matches every test), and the
Spark output is still checked against the sequential one). Each configuration runs once
(a run is long and its output is checked against the sequential one); ``extra_info`` and ``cache/scaleout_results.json``
get wall and CPU seconds, the load average, the commit and the per-chunk figures
(lines, warm-up lines, warm-up and run CPU seconds) that docs/scaling.md builds on.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from taxi_rsp.runner import RunConfig, run
from taxi_rsp.verify.compare import compare_folders

pytestmark = [pytest.mark.spark, pytest.mark.timeout(6 * 3600)]

ROOT = Path(__file__).resolve().parents[1]
INPUT = Path(os.environ.get("SCALEOUT_INPUT", ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"))
QUERIES = os.environ.get("SCALEOUT_QUERIES", "q1").split(",")
PARTITIONS = [int(n) for n in os.environ.get("SCALEOUT_PARTITIONS", "2").split(",")]
MASTER = os.environ.get("SCALEOUT_MASTER", "local[2]")
KEY = f"{INPUT.name}/{'+'.join(QUERIES)}"


def _context() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "taxi_rsp", "feeder", "listener"], check=False, cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return {"commit": commit.stdout.strip() + ("+uncommitted changes" if dirty else ""),
            "date": time.strftime("%Y-%m-%d %H:%M"), "load_before": os.getloadavg(), "cpus": os.cpu_count()}


def _record(name: str, figures: dict, benchmark) -> None:
    benchmark.extra_info.update(figures)
    path = ROOT / "cache" / "scaleout_results.json"
    path.parent.mkdir(exist_ok=True)
    with (path.parent / "scaleout_results.lock").open("w") as lock:  # runs of other inputs may finish alongside
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = json.loads(path.read_text()) if path.exists() else {}
        results.setdefault(KEY, {})[name] = figures
        path.write_text(json.dumps(results, indent=2) + "\n")


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    kept = os.environ.get("SCALEOUT_WORK")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return Path(kept)
    return tmp_path_factory.mktemp("scaleout")


def test_sequential(benchmark, work: Path) -> None:
    figures = _context()
    config = RunConfig(input=INPUT, out=work / "seq", queries=QUERIES)
    cpu = time.process_time()
    started = time.perf_counter()
    summary = benchmark.pedantic(run, args=(config,), rounds=1, iterations=1)
    figures.update(wall_seconds=round(time.perf_counter() - started, 3),
                   cpu_seconds=round(time.process_time() - cpu, 3), load_after=os.getloadavg(),
                   lines=summary["lines_read"], exec_seconds=summary["exec_seconds"], emitted=summary["emitted"])
    _record("sequential", figures, benchmark)


@pytest.mark.parametrize("partitions", PARTITIONS)
def test_spark(benchmark, work: Path, partitions: int) -> None:
    from taxi_rsp.baseline.session import spark_session
    from taxi_rsp.scaleout import run_spark

    spark_session(MASTER, app_name="taxi-rsp-scaleout")  # started outside the timed run
    figures = _context()
    out = work / f"spark{partitions}"
    config = RunConfig(input=INPUT, out=out, queries=QUERIES)
    started = time.perf_counter()
    summary = benchmark.pedantic(run_spark, args=(config, MASTER, partitions), rounds=1, iterations=1)
    chunks = summary["scaleout"]["per_chunk"]
    figures.update(
        wall_seconds=round(time.perf_counter() - started, 3), load_after=os.getloadavg(), master=MASTER,
        lines=summary["lines_read"], exec_seconds=summary["exec_seconds"],
        scan_seconds=summary["scaleout"]["scan_seconds"], scan_cpu_seconds=summary["scaleout"]["scan_cpu_seconds"],
        replay_seconds=summary["scaleout"]["replay_seconds"], concat_seconds=summary["scaleout"]["concat_seconds"],
        chunk_cpu_seconds=round(sum(c["warm_cpu_seconds"] + c["run_cpu_seconds"] for c in chunks), 3),
        longest_chunk_cpu_seconds=max(c["warm_cpu_seconds"] + c["run_cpu_seconds"] for c in chunks),
        per_chunk=chunks,
    )
    _record(f"spark{partitions}", figures, benchmark)
    if (work / "seq" / "summary.json").exists():  # the figures only count if the results agree
        comparison = compare_folders(work / "seq", out)
        assert comparison.identical, "\n".join(map(str, comparison.differences))
