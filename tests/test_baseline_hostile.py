"""The Spark baseline gives the oracle's answer whatever environment it starts in.

Issue 20: the baseline's answer inside the grading VM differed from the host's. The
cause was the emulated CPU (docs/grading.md), but the other suspects are kept out
for good here: each run is the real `taxi-rsp baseline` command in a fresh process
(its own JVM), on the first 200 real lines, under settings a machine or a user can
impose — another time zone (half-hour and +14 h offsets), the C and a Turkish
locale (the OS's and the JVM's), one and four local cores, byte-range splits of 2-4 KB (10-20 splits, each
Arrow batch a few lines), odd chunk counts, the grading VM's `conf/` (no code
generation) — and compared line by line with the independent oracle.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from oracle import run_oracle
from outputs import compare_outputs, read_output

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
VM_CONF = ROOT / "vm" / "submissions" / "baseline" / "conf" / "spark-defaults.conf"
SLICE_LINES = 200

# name -> (environment, Spark settings, baseline arguments, oracle windows)
HOSTILE = {
    "st-johns-C-1-core-tiny-splits": (
        {"TZ": "America/St_Johns", "LC_ALL": "C", "LANG": "C"},
        {"spark.sql.files.maxPartitionBytes": "2048", "spark.sql.files.openCostInBytes": "0",
         "spark.sql.execution.arrow.maxRecordsPerBatch": "3"},
        ["--master", "local[1]", "--chunks", "7"],
        (30, (15, 30)),
    ),
    "kiritimati-turkish-4-cores-vm-conf-short-windows": (
        {"TZ": "Pacific/Kiritimati", "LC_ALL": "tr_TR.UTF-8", "LANG": "tr_TR.UTF-8"},
        {"spark.sql.files.maxPartitionBytes": "4096", "spark.sql.files.openCostInBytes": "0",
         "spark.sql.execution.arrow.maxRecordsPerBatch": "5"},
        # Short windows: trips expire, so expiry instants and the history each chunk
        # is given are exercised too; 16 chunks over 9 minutes of drop-offs.
        ["--master", "local[4]", "--chunks", "16", "--q1-window", "3", "--q2-windows", "2,4"],
        (3, (2, 4)),
    ),
}


@pytest.fixture(scope="module")
def real_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "slice200.csv"
    with SAMPLE.open("rb") as source:
        path.write_bytes(b"".join(next(source) for _ in range(SLICE_LINES)))
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_baseline_matches_the_oracle_in_a_hostile_environment(name: str, real_slice: Path,
                                                              tmp_path: Path) -> None:
    env_vars, spark_conf, args, (q1_window, q2_windows) = HOSTILE[name]
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    vm_conf = VM_CONF.read_text() if "vm-conf" in name else ""
    if "turkish" in name:  # the JVM's own locale too, whether or not the OS has tr_TR
        java_options = _conf_value(vm_conf, "spark.driver.defaultJavaOptions")
        spark_conf = {**spark_conf, "spark.driver.defaultJavaOptions":
                      f"{java_options} -Duser.language=tr -Duser.country=TR".strip()}
    # Later lines of a properties file win: the hostile values override the VM's.
    (conf_dir / "spark-defaults.conf").write_text(
        vm_conf + "".join(f"{key} {value}\n" for key, value in spark_conf.items()))
    env = {**os.environ, **env_vars, "SPARK_CONF_DIR": str(conf_dir)}
    env.pop("PYSPARK_PYTHON", None)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "taxi_rsp.cli", "baseline", str(real_slice),
                           "--out", str(out), *args], env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]

    expected = run_oracle(real_slice, q1_window, q2_windows)
    assert len(expected.q1) > 50 and len(expected.q2) > 10  # the slice has something to get wrong
    for query, lines in (("q1", expected.q1), ("q2", expected.q2)):
        problems = compare_outputs(read_output(out / f"{query}.csv"), lines)
        assert problems == [], f"{name} {query}:\n" + "\n".join(problems[:5])


def _conf_value(conf: str, key: str) -> str:
    for line in conf.splitlines():
        if line.split(maxsplit=1)[:1] == [key]:
            return line.split(maxsplit=1)[1]
    return ""


def test_the_hostile_settings_reach_spark(real_slice: Path, tmp_path: Path) -> None:
    """The settings above are not silently ignored: SPARK_CONF_DIR's split size shows
    in the number of input partitions the baseline's session reads the slice in."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(
        "spark.sql.files.maxPartitionBytes 2048\nspark.sql.files.openCostInBytes 0\n")
    probe = ("import sys\nfrom taxi_rsp.baseline.session import spark_session\n"
             "s = spark_session('local[1]')\n"
             "print(s.read.text(sys.argv[1]).rdd.getNumPartitions(), s.conf.get('spark.sql.session.timeZone'))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(real_slice)], capture_output=True, text=True,
                          env={**os.environ, "SPARK_CONF_DIR": str(conf_dir), "TZ": "America/St_Johns"},
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    partitions, zone = done.stdout.split()[-2:]
    assert int(partitions) == -(-real_slice.stat().st_size // 2048) and zone == "UTC"
