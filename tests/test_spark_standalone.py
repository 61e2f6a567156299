"""`--master spark://…` on a real Spark standalone cluster (a master and one worker
started here from the pyspark installation, on loopback ports), not `local[*]`.

The baseline and the time-partitioned engine are run through the CLI, as a user would,
and their outputs must equal a sequential `taxi-rsp run` (SPEC §5: all fields but the
delay, rejects, summary counts). Executors are separate JVMs that start their own Python
workers and get the project's packages as a zip (taxi_rsp/baseline/session.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from taxi_rsp.baseline.session import find_java_home
from taxi_rsp.verify.compare import compare_folders

pytestmark = [pytest.mark.spark, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
STARTUP_SECONDS = 180


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _alive_workers(web_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=5) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[str]:
    """A standalone master and a 2-core worker; yields the master URL."""
    work = tmp_path_factory.mktemp("standalone")
    env = {**os.environ, "JAVA_HOME": str(find_java_home()), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOG_DIR": str(work), "PYSPARK_PYTHON": sys.executable}
    port, web_port = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    commands = [
        [str(_spark_class()), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(web_port)],
        [str(_spark_class()), "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
         "--cores", "2", "--memory", "2g", "--webui-port", str(_free_port()), "--work-dir", str(work / "worker")],
    ]
    processes = []
    try:
        for name, command in zip(("master", "worker"), commands):
            log = (work / f"{name}.log").open("w")
            processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + STARTUP_SECONDS
        while _alive_workers(web_port) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                logs = "\n".join((work / f"{n}.log").read_text()[-2000:] for n in ("master", "worker"))
                pytest.fail(f"the standalone cluster did not come up:\n{logs}")
            time.sleep(1)
        yield url
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="module")
def sample_prefix(tmp_path_factory) -> Path:
    """The first 1,500 real lines plus a damaged one, so rejects travel through the cluster."""
    path = tmp_path_factory.mktemp("input") / "sample1500.csv"
    with SAMPLE.open("rb") as source:
        lines = [line for _, line in zip(range(1500), source)]
    path.write_bytes(b"".join(lines[:700]) + b"not,a,trip\n" + b"".join(lines[700:]))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", *args], capture_output=True, text=True,
                            timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _assert_same(expected: Path, actual: Path, queries: list[str]) -> None:
    comparison = compare_folders(expected, actual, queries)
    assert comparison.identical, "\n".join(map(str, comparison.differences))


@pytest.fixture(scope="module")
def sequential(sample_prefix: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("seq") / "out"
    _cli("run", str(sample_prefix), "--out", str(out), "--query", "q1", "--query", "q2", "--no-progress")
    return out


def test_baseline_on_a_standalone_cluster_equals_the_engine(cluster: str, sample_prefix: Path,
                                                            sequential: Path, tmp_path: Path) -> None:
    out = tmp_path / "baseline"
    _cli("baseline", str(sample_prefix), "--out", str(out), "--master", cluster)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["master"] == cluster
    assert summary["rejected"]["field_count"] == 1
    _assert_same(sequential, out, ["q1", "q2"])


def test_partitioned_engine_on_a_standalone_cluster_equals_the_sequential_run(
        cluster: str, sample_prefix: Path, sequential: Path, tmp_path: Path) -> None:
    out = tmp_path / "spark"
    _cli("run", str(sample_prefix), "--out", str(out), "--query", "q1", "--query", "q2",
         "--spark", "--master", cluster, "--partitions", "3", "--no-progress")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scaleout"]["master"] == cluster
    assert summary["scaleout"]["chunks"] == 3
    _assert_same(sequential, out, ["q1", "q2"])
