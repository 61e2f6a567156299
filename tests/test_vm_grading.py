"""Real boots of the grading image under QEMU (TCG here: slow, so small data).

Marked ``vm`` and ``slow``: not in CI (a fresh clone has no image, and building one
takes ~3 minutes, root and ~3 GB). Run with::

    sudo .venv/bin/python -m pytest -m "vm and slow" tests/test_vm_grading.py

The image is read from ``$TAXI_RSP_VM_IMAGE`` (default ``vm/build/image``) and built
there first when absent or when ``TAXI_RSP_VM_REBUILD=1`` (do that after changing
the engine: the VM runs the project as it was when the image was built).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.grading.image import DEFAULT_OUT, ImageFiles, build_image
from taxi_rsp.grading.reference import command_available

pytestmark = [pytest.mark.vm, pytest.mark.slow, pytest.mark.timeout(3600)]
ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "vm" / "submissions"
SLICE_LINES = 2000


@pytest.fixture(scope="module")
def image() -> ImageFiles:
    for tool in ("qemu-system-x86_64", "mke2fs", "debugfs"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool} (apt-get install -y qemu-system-x86 e2fsprogs)")
    files = ImageFiles(Path(os.environ.get("TAXI_RSP_VM_IMAGE", DEFAULT_OUT)))
    if not files.rootfs.is_file() or os.environ.get("TAXI_RSP_VM_REBUILD") == "1":
        if os.geteuid() != 0 or shutil.which("mmdebstrap") is None:
            pytest.skip("no image, and building one needs root and mmdebstrap")
        build_image(files.directory)
    return files


@pytest.fixture(scope="module")
def data_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 2,000 lines of the real 20-day sample."""
    sample = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
    path = tmp_path_factory.mktemp("data") / "slice2000.csv"
    with sample.open("rb") as source:
        path.write_bytes(b"".join(next(source) for _ in range(SLICE_LINES)))
    return path


def grade(image: ImageFiles, out: Path, data: Path, *subs: Path, timeout: float,
          extra: tuple[str, ...] = ()) -> dict[str, dict]:
    code = main(["grade", *map(str, subs), "--data", str(data), "--image", str(image.directory),
                 "--out", str(out), "--timeout", str(timeout), *extra])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert (out / "leaderboard.md").read_text().startswith("# Grading results")
    return {entry["name"]: entry for entry in results["submissions"]}


def test_tiny_submissions_show_every_failure_kind(image: ImageFiles, data_slice: Path,
                                                  tmp_path: Path) -> None:
    # A hand-made reference: the submission below copies exactly these lines.
    reference = tmp_path / "reference"
    reference.mkdir()
    nulls = ",".join(["NULL"] * 18)
    rows = [f"2013-01-01 00:0{i}:00,2013-01-01 00:0{i + 2}:00,161.170,160.170,{nulls},"
            + ("NULL" if i == 2 else "0.250") for i in range(3)]
    (reference / "q1.csv").write_text("".join(r + "\n" for r in rows))
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "expected.csv").write_text((reference / "q1.csv").read_text())
    (copy / "run.sh").write_text('test -r "$1" || exit 3\ncp expected.csv "$2/q1.csv"\n')
    (copy / "submission.toml").write_text(
        'name = "copy"\ncommand = "sh run.sh {input} {output}"\nqueries = ["q1"]\n')
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "submission.toml").write_text(
        'name = "crash"\ncommand = "python3 -c \'raise SystemExit(7)\' {input} {output}"\n'
        'queries = ["q1"]\n')

    results = grade(image, tmp_path / "out", data_slice, copy, crash, SUBMISSIONS / "sleeper",
                    timeout=20, extra=("--reference", str(reference), "--cpus", "2",
                                       "--memory", "2048"))

    assert results["copy"]["verdict"] == "correct"
    assert results["copy"]["place"] == 1
    assert results["copy"]["grades"]["q1"]["matched"] == 3
    assert results["copy"]["run"]["boot_seconds"] > 0
    assert results["crash"]["verdict"] == "crashed"
    assert results["crash"]["run"]["exit_code"] == 7
    sleeper = results["never exits"]
    assert sleeper["verdict"] == "timeout"
    assert sleeper["run"]["timed_out"] and 20 <= sleeper["run"]["exec_seconds"] < 40


def test_example_submissions_on_the_real_slice(image: ImageFiles, data_slice: Path,
                                               tmp_path: Path) -> None:
    results = grade(image, tmp_path / "out", data_slice, SUBMISSIONS / "engine",
                    SUBMISSIONS / "ascending", timeout=900, extra=("--no-cross-check",))

    engine = results["taxi-rsp engine"]
    assert engine["verdict"] == "correct", engine["message"]
    assert engine["grades"]["q1"]["expected_lines"] > 0 and engine["grades"]["q2"]["expected_lines"] > 0
    assert engine["grades"]["q1"]["delay"]["p99"] is not None
    assert engine["place"] == 1 and engine["run"]["exec_seconds"] > 0
    wrong = results["ascending order (wrong)"]
    assert wrong["verdict"] == "incorrect"
    mismatch = wrong["grades"]["q1"]["first_mismatch"]
    assert mismatch["fields"] and mismatch["fields"][0] in ("start_cell_1", "end_cell_1")
    assert wrong["grades"]["q1"]["matched"] < wrong["grades"]["q1"]["expected_lines"]


def test_guest_cpu_sorts_correctly(image: ImageFiles, tmp_path: Path) -> None:
    """numpy's sorts and partitions give right answers in the guest (issue 20: under
    `-cpu max` QEMU 7.2 emulated AVX2 wrongly and they did not). The submission copies
    the expected line only when every check passes, so `correct` means a sound CPU."""
    reference = tmp_path / "reference"
    reference.mkdir()
    line = "2013-01-01 00:00:00,2013-01-01 00:02:00,161.170,160.170," + ",".join(["NULL"] * 19)
    (reference / "q1.csv").write_text(line + "\n")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "expected.csv").write_text(line + "\n")
    (probe / "check.py").write_text(SORT_CHECK)
    (probe / "submission.toml").write_text(
        'name = "numpy sorts"\ncommand = "python3 check.py {input} {output}"\nqueries = ["q1"]\n')
    data = tmp_path / "empty.csv"
    data.write_text("")
    results = grade(image, tmp_path / "out", data, probe, timeout=600,
                    extra=("--reference", str(reference), "--cpus", "2", "--memory", "2048"))
    entry = results["numpy sorts"]
    assert entry["verdict"] == "correct", entry["message"]
    assert entry["run"]["guest_cpu"] and "avx" not in entry["run"]["guest_cpu"]


# Random arrays of the sizes the baseline sorts, each result checked by pure Python.
SORT_CHECK = """
import shutil, sys
import numpy as np
rng = np.random.default_rng(20)
wrong = 0
for trial in range(200):
    n = int(rng.integers(11, 400))
    for dtype in (np.int64, np.int32, np.float64, np.float32):
        x = rng.integers(-1000, 1000, n).astype(dtype)
        expected = sorted(x.tolist())
        wrong += sorted(x[np.argpartition(x, 9)[:10]].tolist()) != expected[:10]
        wrong += np.partition(x, 9)[9] != expected[9]
        wrong += x[np.argsort(x)].tolist() != expected
        wrong += np.sort(x).tolist() != expected
        wrong += np.argsort(x, kind="stable").tolist() != sorted(range(n), key=lambda i: x[i])
print(f"{wrong} wrong results")
if wrong == 0:
    shutil.copy("expected.csv", f"{sys.argv[2]}/q1.csv")
"""


@pytest.mark.skipif(not command_available("baseline"), reason="taxi-rsp baseline not installed")
def test_spark_baseline_in_the_vm(image: ImageFiles, tmp_path: Path) -> None:
    # 200 lines: Spark's start-up dominates under TCG (docs/grading.md, "The Spark
    # baseline in the VM"). The reference is our engine on the host, cross-checked by
    # the baseline on the host; the guest's baseline must give the same lines.
    sample = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
    data = tmp_path / "slice200.csv"
    with sample.open("rb") as source:
        data.write_bytes(b"".join(next(source) for _ in range(200)))
    results = grade(image, tmp_path / "out", data, SUBMISSIONS / "baseline", timeout=3000)
    baseline = results["taxi-rsp spark baseline"]
    assert baseline["verdict"] == "correct", baseline["message"]
    assert baseline["grades"]["q1"]["matched"] == baseline["grades"]["q1"]["expected_lines"] > 100
    assert baseline["grades"]["q2"]["matched"] == baseline["grades"]["q2"]["expected_lines"] > 10
