"""polars against Python on the three run-time jobs issue 18 names (docs/performance.md,
"polars at run time"): the fidelity profile of `synth --check`, `verify`'s comparison
of two multi-million-line outputs, and reading a delay column for `report`.

    .venv/bin/python -m pytest benchmarks/bench_polars_jobs.py -m slow -s

Inputs, made once in ./cache: the 20-day synthetic file (seed 0; a link to an existing
copy works) and a pair of outputs of the real sample's Mixed run repeated to 3,000,000
(q1) and 1,000,000 (q2) lines, the two sides with different measured delays. Each
variant runs 3 times in this process (best wall and CPU seconds, CPU counting every
thread) and once in a fresh process for its peak RSS. Results go to
cache/bench_polars_jobs.json and are printed.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.conftest import cached_synthetic

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
LINES = {"q1": 3_000_000, "q2": 1_000_000}

pytestmark = pytest.mark.slow

# -- the variants ----------------------------------------------------------------------


def profile_python(path: str) -> object:
    from taxi_rsp.data.profile import profile_python as run

    return run(Path(path), 56)


def profile_polars(path: str) -> object:
    from taxi_rsp.data.profile_polars import profile_polars as run

    return run(Path(path), 56)


def verify_stream(a: str, b: str) -> int:
    """What `verify` does now: both files streamed side by side."""
    from taxi_rsp.verify.compare import _read_lines, query_line_differences

    return sum(1 for _ in query_line_differences(_read_lines(Path(a)), _read_lines(Path(b))))


def verify_lists(a: str, b: str) -> int:
    """What `verify` did before issue 18's second part: both files read into lists."""
    from taxi_rsp.verify.compare import _read_lines, query_line_differences

    return sum(1 for _ in query_line_differences(list(_read_lines(Path(a))), list(_read_lines(Path(b)))))


def verify_polars(a: str, b: str) -> int:
    """Columnar: both files read as CSV (all columns strings), every column but the delay
    compared, and the delay's NULL-ness."""
    import polars as pl

    def read(path: str) -> pl.DataFrame:
        return pl.read_csv(path, has_header=False, quote_char=None, infer_schema=False, empty_string_is_null=False)

    left, right = read(a), read(b)
    shared = min(left.height, right.height)
    columns = left.columns
    both = pl.concat([left.head(shared), right.head(shared).rename({c: c + "_b" for c in columns})],
                     how="horizontal")
    body = pl.any_horizontal([pl.col(c) != pl.col(c + "_b") for c in columns[:-1]])
    null = (pl.col(columns[-1]) == "NULL") != (pl.col(columns[-1] + "_b") == "NULL")
    return int(both.select((body | null).sum()).item()) + abs(left.height - right.height)


def delays_python(path: str) -> float:
    from taxi_rsp.verify.delays import read_delays

    return float(read_delays(Path(path)).sum())


def delays_polars(path: str) -> float:
    import polars as pl

    last = Path(path).open().readline().count(",")
    frame = pl.read_csv(path, has_header=False, columns=[last], null_values="NULL", infer_schema=False,
                        quote_char=None)
    return float(frame.to_series().drop_nulls().cast(pl.Float64).to_numpy().sum())


# -- measuring -------------------------------------------------------------------------


def _best(function: Callable, *args: str, repeat: int = 3) -> tuple[float, float, object]:
    wall = cpu = float("inf")
    result = None
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = function(*args)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return wall, cpu, result


def _peak_rss_mib(name: str, *args: str) -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec from this process
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import benchmarks.bench_polars_jobs as b; "
            f"b.{name}(*sys.argv[2:]); "
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT), *args], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1]) / 1024


def _measure(results: dict, job: str, variants: list[str], *args: str) -> None:
    answers = {}
    for name in variants:
        wall, cpu, answers[name] = _best(globals()[name], *args)
        results[name] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mib": round(_peak_rss_mib(name, *args))}
        print(f"{job:>8} {name:<16} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS {results[name]['peak_rss_mib']:>5} MiB")
    first = next(iter(answers.values()))
    assert all(answer == first for answer in answers.values()), answers  # every variant, the same answer


@pytest.fixture(scope="module")
def output_pair(cache_dir: Path, tmp_path_factory) -> tuple[Path, Path]:
    pair = (cache_dir / "polars_jobs_a", cache_dir / "polars_jobs_b")
    if all((folder / "q2.csv").exists() for folder in pair):
        return pair
    for folder in pair:  # two runs: the same answers, different measured delays
        run = tmp_path_factory.mktemp("run") / "out"
        subprocess.run([sys.executable, "-m", "taxi_rsp", "run", str(SAMPLE), "--out", str(run), "--no-progress"],
                       check=True, capture_output=True)
        folder.mkdir(exist_ok=True)
        for query, count in LINES.items():
            lines = (run / f"{query}.csv").read_text().splitlines(keepends=True)
            with (folder / f"{query}.csv").open("w") as out:
                out.writelines(itertools.islice(itertools.cycle(lines), count))
    return pair


def test_polars_jobs(cache_dir: Path, output_pair: tuple[Path, Path]) -> None:
    results: dict = {"load_before": os.getloadavg()[0], "cores": os.cpu_count()}
    synth = str(cached_synthetic(cache_dir, 20, 0))
    _measure(results, "profile", ["profile_python", "profile_polars"], synth)
    a, b = output_pair
    for query in LINES:
        _measure(results.setdefault(f"verify_{query}", {}), "verify", ["verify_lists", "verify_stream", "verify_polars"],
                 str(a / f"{query}.csv"), str(b / f"{query}.csv"))
    _measure(results.setdefault("delays_q1", {}), "delays", ["delays_python", "delays_polars"], str(a / "q1.csv"))
    results["load_after"] = os.getloadavg()[0]
    (cache_dir / "bench_polars_jobs.json").write_text(json.dumps(results, indent=2))
