"""Q1 and Q2 through the real engine path (feeder -> CQELS engine -> listener) against the
independent oracle in tests/oracle and the hand-built cases in tests/cases."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from taxi_rsp.outputs.lines import split_delay
from taxi_rsp.runner import RunConfig, run
from tests.conftest import ROOT, SAMPLE_20D
from tests.outputs import read_output

CASES = sorted(p for p in (ROOT / "tests" / "cases").glob("*") if (p / "input.csv").is_file())


def engine_outputs(path: Path, out: Path, queries=("q1", "q2"), **params) -> dict[str, list[str]]:
    run(RunConfig(input=path, out=out, queries=list(queries), params=params))
    files = {q: (out / f"{q}.csv").read_text(encoding="utf-8").splitlines() for q in queries}
    files["summary"] = json.loads((out / "summary.json").read_text())
    return files


def without_delay(lines: list[str]) -> list[str]:
    return [split_delay(line)[0] for line in lines]


def test_real_sample_q1_q2_equal_the_oracle(tmp_path: Path, sample_oracle) -> None:
    outputs = engine_outputs(SAMPLE_20D, tmp_path)
    for query in ("q1", "q2"):
        expected = getattr(sample_oracle, query)
        assert without_delay(outputs[query]) == without_delay(expected), query
        # the delay column: NULL exactly for expiry triggers, else a number with 3 decimals
        for mine, theirs in zip(outputs[query], expected):
            delay = mine.rsplit(",", 1)[1]
            assert (delay == "NULL") == (theirs.rsplit(",", 1)[1] == "NULL")
            if delay != "NULL":
                assert float(delay) >= 0 and len(delay.split(".")[1]) == 3
    summary = outputs["summary"]
    assert summary["lines_read"] == sample_oracle.lines_read
    assert summary["rejected"] == sample_oracle.rejected
    assert summary["outliers"] == sample_oracle.outliers
    assert summary["emitted"] == {"q1": len(sample_oracle.q1), "q2": len(sample_oracle.q2)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hand_built_case(tmp_path: Path, case: Path) -> None:
    params = {}
    if (case / "params.json").exists():  # windows other than the defaults
        windows = json.loads((case / "params.json").read_text())
        if "q1_window_min" in windows:
            params["q1"] = {"window": f"{windows['q1_window_min']}m"}
        if "q2_windows_min" in windows:
            profit, empty = windows["q2_windows_min"]
            params["q2"] = {"profit_window": f"{profit}m", "empty_window": f"{empty}m"}
    outputs = engine_outputs(case / "input.csv", tmp_path, **params)
    for query in ("q1", "q2"):
        expected_file = case / f"expected_{query}.csv"
        if not expected_file.exists():
            continue
        expected = expected_file.read_text(encoding="utf-8").splitlines()
        assert without_delay(outputs[query]) == without_delay(expected), f"{case.name} {query}"
        nulls = [line.endswith(",NULL") for line in outputs[query]]
        assert nulls == [line.endswith(",NULL") for line in expected]
    # the rejects and counts the case's README derives by hand (the oracle is held to them too)
    assert engine_rejects(tmp_path / "rejects.csv") == expected_rejects(case)
    summary_path = case / "expected_summary.json"
    if summary_path.exists():
        expected_summary = json.loads(summary_path.read_text(encoding="utf-8"))
        assert {key: outputs["summary"][key] for key in expected_summary} == expected_summary


def engine_rejects(path: Path) -> list[tuple[int, str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["line_no", "reason", "raw_line"]
    return [(int(line_no), reason, raw) for line_no, reason, raw in rows[1:]]


def expected_rejects(case: Path) -> list[tuple[int, str, str]]:
    """``expected_rejects.csv``: the raw line is everything after the second comma,
    unquoted (tests/cases/README.md); no file: no rejects."""
    path = case / "expected_rejects.csv"
    if not path.exists():
        return []
    rows = read_output(path)
    assert rows[0] == "line_no,reason,raw_line"
    return [(int(line_no), reason, raw) for line_no, reason, raw in (row.split(",", 2) for row in rows[1:])]


def test_window_sweep_parameters_reach_the_queries(tmp_path: Path) -> None:
    from tests.oracle.run import run_oracle

    head = tmp_path / "head.csv"
    head.write_text("".join(SAMPLE_20D.read_text().splitlines(keepends=True)[:1500]))
    outputs = engine_outputs(head, tmp_path / "out", q1={"window": "60m"}, q2={"profit_window": "30m",
                                                                                "empty_window": "60m"})
    oracle = run_oracle(head, q1_window_min=60, q2_windows_min=(30, 60))
    assert without_delay(outputs["q1"]) == without_delay(oracle.q1)
    assert without_delay(outputs["q2"]) == without_delay(oracle.q2)
