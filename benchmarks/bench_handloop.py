"""The engine against plain hand-written loops (issue 15, "Ratio to a plain hand-written loop").

    .venv/bin/python -m pytest benchmarks/bench_handloop.py -m slow --benchmark-only -s

In one benchmark run, per workload and side by side: the engine (``taxi_rsp.runner.run``,
exactly what ``taxi-rsp run FILE --out DIR --query ...`` does, output files included)
and the hand loop of ``handloop_q1.py`` / ``handloop_q2.py`` (Mixed: the two loops
back to back, each reading the file). Each side runs in a fresh process of its own
(``handloop_side.py``: a side run after other workloads in one process is 10-13 % slower
on a heap they fragmented), timed in CPU seconds (``time.process_time``, which a shared
machine does not stretch) around the whole call; the ratio is engine / hand loop (issue 15
targets: ≤ 1.5 for Q1, ≤ 1.0 for Q2, ≤ 0.8 for Mixed). ``BENCH_HANDLOOP_ROUNDS=N``
(default 1) alternates engine and loops N times and takes each side's minimum (the host's
speed drifts by tens of per cent over minutes; alternation exposes both sides to it).
Every output line must be identical but for the measured delay (NULL in both for expiry
lines). pytest-benchmark records the first engine run; the figures are in ``extra_info``,
printed at the end and merged into ``cache/handloop_results.json``.

Input: ``BENCH_HANDLOOP_FILE=path`` or else the first ``BENCH_HANDLOOP_LINES``
(default 300,000) lines of the cached synthetic 20-day file (seed 0), cut once into
``cache/s300k.csv`` (etc.).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cached_synthetic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(4 * 3600)]

ROOT = Path(__file__).resolve().parents[1]
LINES = int(os.environ.get("BENCH_HANDLOOP_LINES", "300000"))
TARGETS = {"q1": 1.5, "q2": 1.0, "mixed": 0.8}  # issue 15: engine CPU / hand-loop CPU
WORKLOADS = {"q1": ["q1"], "q2": ["q2"], "mixed": ["q1", "q2"]}
ROUNDS = int(os.environ.get("BENCH_HANDLOOP_ROUNDS", "1"))
SIDE = Path(__file__).resolve().parent / "handloop_side.py"


@pytest.fixture(scope="module")
def input_file(cache_dir: Path) -> Path:
    """The file both sides read: BENCH_HANDLOOP_FILE, or a cached slice of the 20-day file."""
    given = os.environ.get("BENCH_HANDLOOP_FILE")
    if given:
        return Path(given)
    name = f"s{LINES // 1000}k.csv" if LINES % 1000 == 0 else f"s{LINES}.csv"
    path = cache_dir / name
    if not path.exists():
        full = cached_synthetic(cache_dir, 20, 0)
        part = path.with_suffix(".part")
        with full.open("rb") as source, part.open("wb") as target:
            for number, line in enumerate(source):
                if number == LINES:
                    break
                target.write(line)
        part.rename(path)
    return path


@pytest.fixture(scope="module")
def results(cache_dir: Path, input_file: Path):
    """This session's figures; at the end printed and merged into cache/handloop_results.json."""
    found: dict = {}
    yield found
    if not found:
        return
    store = cache_dir / "handloop_results.json"
    merged = json.loads(store.read_text()) if store.exists() else {}
    merged.setdefault(input_file.name, {}).update(found)
    store.write_text(json.dumps(merged, indent=2) + "\n")
    print("\n" + render(input_file, found))


def differences(actual: Path, expected: Path) -> list[str]:
    """Lines that differ in any field but the delay, or in whether the delay is NULL."""
    def split(path: Path) -> list[tuple[str, bool]]:
        rows = path.read_text(encoding="utf-8").splitlines()
        return [(row.rsplit(",", 1)[0], row.endswith(",NULL")) for row in rows]

    got, want = split(actual), split(expected)
    problems = [f"line {n}: {a[0]!r} != {b[0]!r}" for n, (a, b) in enumerate(zip(got, want), 1) if a != b]
    if len(got) != len(want):
        problems.append(f"{len(got)} lines, expected {len(want)}")
    return problems


def side(kind: str, queries: list[str], input_file: Path, out: Path) -> tuple[float, dict]:
    """Run one side (see handloop_side.py) in a fresh process: its CPU seconds and result."""
    proc = subprocess.run([sys.executable, str(SIDE), kind, ",".join(queries), str(input_file), str(out)],
                          capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout.strip().splitlines()[-1])
    return measured["cpu_s"], measured["result"]


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_engine_vs_hand_loop(benchmark, workload: str, input_file: Path, cache_dir: Path,
                             results: dict) -> None:
    queries = WORKLOADS[workload]
    engine_out = cache_dir / f"handloop_engine_{workload}"
    loop_out = cache_dir / f"handloop_loop_{workload}"
    loop_out.mkdir(exist_ok=True)
    measured_at = commit()

    def engine() -> tuple[float, dict]:
        shutil.rmtree(engine_out, ignore_errors=True)
        return side("engine", queries, input_file, engine_out)

    engine_runs: list[float] = []
    loop_runs: dict[str, list[float]] = {q: [] for q in queries}
    for round_number in range(ROUNDS):
        engine_cpu, summary = benchmark.pedantic(engine, rounds=1, iterations=1) if round_number == 0 else engine()
        engine_runs.append(engine_cpu)
        for query in queries:
            cpu, counts = side("loop", [query], input_file, loop_out / f"{query}.csv")
            loop_runs[query].append(cpu)
            assert counts["lines_read"] == summary["lines_read"]
            assert counts["rejected"] == summary["rejected"]
            assert counts["emitted"] == summary["emitted"][query]
            assert differences(loop_out / f"{query}.csv", engine_out / f"{query}.csv") == []
    engine_cpu = min(engine_runs)
    loop_cpu = {q: min(runs) for q, runs in loop_runs.items()}
    loops = sum(loop_cpu.values())
    entry = {
        "lines": summary["lines_read"],
        "engine_cpu_s": round(engine_cpu, 3),
        "engine_loop_cpu_s": summary.get("cpu_seconds"),  # the engine's own figure, feed loop only (last run)
        "hand_loop_cpu_s": {q: round(s, 3) for q, s in loop_cpu.items()},
        "ratio": round(engine_cpu / loops, 3),
        "target": TARGETS[workload],
        "engine_delay_mean_ms": {q: summary["delay_ms"][q]["mean"] for q in queries},
        "rounds": ROUNDS,
        "engine_cpu_s_runs": [round(s, 3) for s in engine_runs],
        "hand_loop_cpu_s_runs": {q: [round(s, 3) for s in runs] for q, runs in loop_runs.items()},
        "process": "one per side",
        "commit": measured_at,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    results[workload] = entry
    benchmark.extra_info.update(entry)


def commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, check=False).stdout.strip()
    return (proc.stdout.strip() or "?") + ("+dirty" if dirty else "")


def render(input_file: Path, found: dict) -> str:
    """A markdown table of this session's figures."""
    lines = [f"Engine vs hand loop on {input_file.name} (CPU s, one process):", "",
             "| workload | lines | engine CPU s | hand loop CPU s | engine / hand loop | target | commit |",
             "|---|---|---|---|---|---|---|"]
    for workload, e in found.items():
        loops = " + ".join(f"{s:.2f}" for s in e["hand_loop_cpu_s"].values())
        lines.append(f"| {workload} | {e['lines']:,} | {e['engine_cpu_s']:.2f} | {loops} "
                     f"| {e['ratio']:.2f} | ≤ {e['target']} | `{e['commit']}` |")
    return "\n".join(lines)
