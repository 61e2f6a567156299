"""The fidelity table and the `taxi-rsp synth` command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.data import SynthConfig, generate
from taxi_rsp.data.calibration import load_templates
from taxi_rsp.data.fidelity import WINDOW_ROWS, compare, format_table


@pytest.fixture(scope="module")
def templates():
    return load_templates()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_first_hour_matches_the_real_sample_within_tolerance(tmp_path: Path, templates, seed: int) -> None:
    path = tmp_path / "hour.csv"
    generate(SynthConfig(days=1, minutes=70, seed=seed), path, templates)
    rows = compare(path)
    assert len([r for r in rows if r.ok is not None]) >= len(WINDOW_ROWS)
    failed = [(r.label, r.real, r.synthetic, r.tolerance) for r in rows if r.ok is False]
    assert not failed, format_table(rows)


def test_a_file_that_is_not_like_the_sample_fails(tmp_path: Path, templates) -> None:
    # A fifth of the rate: the rate-driven rows must notice.
    path = tmp_path / "thin.csv"
    generate(SynthConfig(days=1, minutes=70, trips=3_000), path, templates)
    failed = {r.label for r in compare(path) if r.ok is False}
    assert "drop-offs per minute, last 30 min" in failed
    assert "distinct Q1 routes, last 30 min" in failed


def test_the_real_sample_matches_itself(sample_20d: Path) -> None:
    rows = compare(sample_20d)
    window = rows[: len(WINDOW_ROWS)]
    assert all(r.real == r.synthetic and r.ok for r in window)


def test_cli_writes_then_checks(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli.csv"
    assert main(["synth", "--days", "1", "--minutes", "70", "--seed", "4", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "wrote" in said and out.is_file()
    assert f"{sum(1 for _ in out.open()):,} lines" in said
    assert main(["synth", "--check", str(out)]) == 0
    table = capsys.readouterr().out
    assert "real sample" in table and "distinct Q1 routes" in table


def test_cli_trips_and_dirty_options(tmp_path: Path, capsys) -> None:
    out = tmp_path / "small.csv"
    assert main(["synth", "--days", "1", "--trips", "5000", "--dirty", "0", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert 4_500 < len(lines) < 5_500
    assert all(len(line.split(",")) == 17 for line in lines)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["synth", "--days", "1"], "--out"),
        (["synth", "--days", "0", "--out", "x.csv"], "--days"),
        (["synth", "--dirty", "2", "--out", "x.csv"], "--dirty"),
        # A missing folder is created (issue 18); a file where the folder should be is an error.
        (["synth", "--out", "/dev/null/x.csv"], "cannot create folder /dev/null"),
        (["synth", "--check", "/nonexistent-file.csv"], "no such file"),
    ],
)
def test_cli_user_errors(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.slow
def test_full_twenty_days_pass_the_check(tmp_path: Path) -> None:
    out = tmp_path / "synth20.csv"
    assert main(["synth", "--days", "20", "--out", str(out)]) == 0
    assert main(["synth", "--check", str(out)]) == 0
