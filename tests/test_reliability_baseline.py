"""The Spark baseline under the failures of issue 8 §5 that need Spark running: a full
file system while writing and a window longer than the data. (Missing Java and an
unreadable input are refused before Spark starts: tests/test_reliability_errors.py.)

Slow (a Spark session and two small runs, about a minute): `pytest -m slow tests/test_reliability_baseline.py`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from taxi_rsp.baseline.run import BaselineSettings, run_baseline
from taxi_rsp.baseline.session import spark_session
from taxi_rsp.outputs.atomic import OutputError
from tests.test_reliability_errors import BAD, good_lines

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def spark():
    return spark_session("local[2]", shuffle_partitions=2)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_baseline_on_a_full_file_system(spark, tmp_path: Path, tiny_fs: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(5) + [BAD] * 2000) + "\n")  # ~240 KB of rejects
    out = tiny_fs / "out"
    # an OutputError (a UserError: the CLI prints it as one line) naming the file and the cause
    with pytest.raises(OutputError, match=r"cannot write .*rejects\.csv: No space left on device"):
        run_baseline(data, out, BaselineSettings(), spark)
    assert not out.exists()  # partial files removed, no summary, and the folder the run made is gone


def test_baseline_warns_about_a_window_longer_than_the_data(spark, tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text("\n".join(good_lines(20)) + "\n")
    summary = run_baseline(data, tmp_path / "out", BaselineSettings(), spark)
    message = "window 30 min is longer than the data (19 min of drop-offs): no trip ever left it"
    assert summary["warnings"] == [f"q1: {message}", f"q2: {message}"]
