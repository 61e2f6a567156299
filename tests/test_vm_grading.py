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


@pytest.mark.skipif(not command_available("baseline"), reason="taxi-rsp baseline not installed")
def test_spark_baseline_in_the_vm(image: ImageFiles, tmp_path: Path) -> None:
    # Spark's JVM under TCG is two orders of magnitude slower than on the host: the
    # 2,000-line slice did not finish in 30 min on a loaded 2-core host, so 200 lines.
    # Not passed yet on that host even with the submission's conf/ (docs/grading.md,
    # "Why the Spark baseline does not finish in the VM"): it needs KVM or a quiet host.
    sample = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
    data = tmp_path / "slice200.csv"
    with sample.open("rb") as source:
        data.write_bytes(b"".join(next(source) for _ in range(200)))
    results = grade(image, tmp_path / "out", data, SUBMISSIONS / "baseline", timeout=3000)
    baseline = results["taxi-rsp spark baseline"]
    assert baseline["verdict"] == "correct", baseline["message"]
