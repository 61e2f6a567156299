"""The oracle reproduces every hand-built case in tests/cases/ (expected files written
by hand from SPEC; each case's README.md explains the derivation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracle import run_oracle
from outputs import read_output

CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(p.name for p in CASES_DIR.iterdir() if (p / "input.csv").exists())


def _params(case: Path) -> dict:
    path = case / "params.json"
    if not path.exists():
        return {}
    params = json.loads(path.read_text())
    if "q2_windows_min" in params:
        params["q2_windows_min"] = tuple(params["q2_windows_min"])
    return params


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("name", CASES)
def test_case_outputs(name: str) -> None:
    case = CASES_DIR / name
    result = run_oracle(case / "input.csv", **_params(case))
    assert result.q1 == read_output(case / "expected_q1.csv")
    assert result.q2 == read_output(case / "expected_q2.csv")


@pytest.mark.parametrize("name", CASES)
def test_case_rejects_and_counts(name: str) -> None:
    case = CASES_DIR / name
    result = run_oracle(case / "input.csv", **_params(case), queries=())
    rejects_path = case / "expected_rejects.csv"
    expected_rejects: list[tuple[int, str, str]] = []
    if rejects_path.exists():
        rows = read_output(rejects_path)
        assert rows[0] == "line_no,reason,raw_line"
        for row in rows[1:]:
            line_no, reason, raw = row.split(",", 2)
            expected_rejects.append((int(line_no), reason, raw))
    assert result.rejects == expected_rejects
    summary_path = case / "expected_summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        assert result.lines_read == summary["lines_read"]
        assert result.accepted == summary["accepted"]
        assert result.rejected == summary["rejected"]
        assert result.outliers == summary["outliers"]
        assert result.profit_excluded == summary["profit_excluded"]
