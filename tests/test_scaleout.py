"""`taxi-rsp run --spark` on a real local Spark equals the sequential run (SPEC §5:
every field but the delay; rejects and summary counts too), for 1, 2 and 7 chunks on
the real sample and with chunk boundaries on the hazards of the hand-made files
(equal timestamps, expiry bursts, a taxi's empty period, dirty and late lines, a
far-future drop-off early in the file). One Spark session serves the whole module.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scaleout_inputs import adversarial_lines, time_jump_lines, write_lines

from taxi_rsp.baseline.session import spark_session
from taxi_rsp.cli import main as cli_main
from taxi_rsp.runner import RunConfig, run
from taxi_rsp.scaleout import run_spark
from taxi_rsp.verify.compare import compare_folders

pytestmark = [pytest.mark.spark, pytest.mark.timeout(2400)]  # a hang guard: the shared Spark batch needs minutes idle, far more under load

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"
SHORT_WINDOWS = {"q1": {"window": "5m"}, "q2": {"profit_window": "3m", "empty_window": "5m"}}


@pytest.fixture(scope="module")
def spark():
    return spark_session("local[2]", shuffle_partitions=2)


@pytest.fixture(scope="module")
def sample_prefix(tmp_path_factory) -> Path:
    """The first 2,000 real lines (00:02-00:24): short enough for CI, several windows long
    with SHORT_WINDOWS."""
    path = tmp_path_factory.mktemp("sample") / "sample2000.csv"
    with SAMPLE.open("rb") as source:
        path.write_bytes(b"".join(line for _, line in zip(range(2000), source)))
    return path


def _config(path: Path, out: Path, params: dict | None = None) -> RunConfig:
    return RunConfig(input=path, out=out, queries=["q1", "q2"], params=params or {})


def _assert_same(sequential: Path, partitioned: Path) -> None:
    comparison = compare_folders(sequential, partitioned)
    assert comparison.identical, "\n".join(map(str, comparison.differences))


@pytest.mark.parametrize("params", [None, SHORT_WINDOWS], ids=["default_windows", "short_windows"])
def test_real_sample_1_2_7_chunks(spark, sample_prefix: Path, tmp_path: Path, params) -> None:
    run(_config(sample_prefix, tmp_path / "seq", params))
    for chunks in (1, 2, 7):
        out = tmp_path / f"spark{chunks}"
        summary = run_spark(_config(sample_prefix, out, params), "local[2]", chunks)
        assert summary["scaleout"]["chunks"] == chunks
        _assert_same(tmp_path / "seq", out)
    warm = [c["warm_lines"] for c in summary["scaleout"]["per_chunk"]]
    if params:  # 5-minute windows: later chunks replay less than everything before them
        assert warm[-1] < sum(c["lines"] for c in summary["scaleout"]["per_chunk"][:-1])


def test_hazards_at_chunk_boundaries(spark, tmp_path: Path) -> None:
    lines, marks = adversarial_lines()
    path = write_lines(tmp_path / "adv.csv", lines, ending="\r\n", final=False)
    run(_config(path, tmp_path / "seq"))
    run_spark(_config(path, tmp_path / "marks"), "local[2]", cut_lines=sorted(marks.values()))
    _assert_same(tmp_path / "seq", tmp_path / "marks")
    run_spark(_config(path, tmp_path / "seven"), "local[2]", 7)
    _assert_same(tmp_path / "seq", tmp_path / "seven")


def test_far_future_dropoff_before_the_chunk(spark, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "jump.csv", time_jump_lines())
    run(_config(path, tmp_path / "seq"))
    run_spark(_config(path, tmp_path / "spark"), "local[2]", 7)
    _assert_same(tmp_path / "seq", tmp_path / "spark")


def test_cli_spark_flags(spark, tmp_path: Path, capsys) -> None:
    path = write_lines(tmp_path / "jump.csv", time_jump_lines())
    assert cli_main(["run", str(path), "--out", str(tmp_path / "seq"), "--no-progress"]) == 0
    assert cli_main(["run", str(path), "--out", str(tmp_path / "spark"), "--spark", "--master", "local[2]",
                     "--partitions", "3"]) == 0
    _assert_same(tmp_path / "seq", tmp_path / "spark")
    assert not list((tmp_path / "spark").glob(".*"))  # no partial files or chunk folders left
    assert cli_main(["run", str(path), "--out", str(tmp_path / "x"), "--partitions", "3"]) == 2
    assert "need --spark" in capsys.readouterr().err
