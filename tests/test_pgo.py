"""The profile-guided build (setup.py ``ProfileGuidedBuild``, ``taxi_rsp/pgo.py``).

The build falls back to plain compilation when its training run fails, so a broken
training would only show as a slower engine; these tests make it show here instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from taxi_rsp import native, pgo
from taxi_rsp.outputs.lines import split_delay

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def test_the_training_run_completes_every_job(tmp_path: Path) -> None:
    env = dict(os.environ, TAXI_RSP_JIT="0")
    done = subprocess.run([sys.executable, "-m", "taxi_rsp.pgo", str(ROOT / "queries"), str(SAMPLE), str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    # every run wrote its outputs: the DEBS queries, the reference run, the extra shapes
    # (which must produce rows, or they would train nothing) and the five ISWC queries
    assert (tmp_path / "debs" / "q1.csv").stat().st_size > 0 and (tmp_path / "debs" / "q2.csv").stat().st_size > 0
    assert _bodies(tmp_path / "reference" / "q1.csv") == _bodies(tmp_path / "debs" / "q1.csv")
    for name in pgo.EXTRA_QUERIES:
        assert len((tmp_path / name / f"{name}.csv").read_text().splitlines()) > 100, name
    for n in range(1, 6):
        assert (tmp_path / f"iswc-q{n}" / "summary.json").exists()


def _bodies(path: Path) -> list[str]:
    return [split_delay(line)[0] for line in path.read_text().splitlines()]


def test_a_failing_job_stops_the_training(tmp_path: Path) -> None:
    # the build then compiles without a profile and records why (setup.py)
    with pytest.raises(Exception):
        pgo.train(ROOT / "queries", tmp_path / "missing.csv", tmp_path / "out")


def test_the_jobs_cover_both_engines_the_stream_input_and_other_shapes(tmp_path: Path) -> None:
    jobs = pgo.jobs(ROOT / "queries", SAMPLE, tmp_path)
    lines = [" ".join(job) for job in jobs]
    assert any("--reference" in line for line in lines)
    assert sum("--stream" in line for line in lines) == 5
    assert all(name in " ".join(lines) for name in pgo.EXTRA_QUERIES)
    assert all(job[0] != "run" or "--no-progress" in job for job in jobs)


@pytest.mark.skipif(not native.c_compiler()[1], reason="the profile-guided build needs GCC")
def test_the_install_was_profile_guided() -> None:
    # README's install command builds with a profile where GCC is; a training run that
    # broke would leave a plain (slower) build and say why here
    record = native.build_profile()
    if str(record["why_not"]).startswith("TAXI_RSP_PGO=0"):
        pytest.skip("installed with TAXI_RSP_PGO=0")
    assert record["profile_guided"] is True, f"plain build: {record['why_not']} (re-run pip install -e . -v)"
