"""`taxi-rsp baseline` and `taxi-rsp report` refuse bad arguments with exit 2, before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.cli import main as cli_main


@pytest.mark.parametrize("extra", [["--q2-windows", "15"], ["--q2-windows", "a,b"], ["--q1-window", "0"],
                                   ["--q2-windows", "15,-1"], ["--chunks", "-1"]])
def test_bad_windows_and_chunks(tmp_path: Path, capsys, extra: list[str]) -> None:
    data = tmp_path / "in.csv"
    data.write_text("")
    assert cli_main(["baseline", str(data), "--out", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("taxi-rsp baseline: error:") and err.count("\n") == 1


def test_missing_input(tmp_path: Path, capsys) -> None:
    assert cli_main(["baseline", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "out")]) == 2
    assert cli_main(["report", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "out")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report_sweep_must_be_minutes(tmp_path: Path, capsys) -> None:
    data = tmp_path / "in.csv"
    data.write_text("")
    assert cli_main(["report", str(data), "--out", str(tmp_path / "out"), "--sweep", "30,x"]) == 2
    assert cli_main(["report", str(data), "--out", str(tmp_path / "out"), "--sweep", "1"]) == 2
    assert "--sweep" in capsys.readouterr().err
