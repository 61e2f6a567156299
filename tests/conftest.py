"""Shared fixtures: paths to the bundled real sample, and the oracle's answer on it (computed once)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "taxi_rsp" / "samples" / "debs2015"
SAMPLE_20D = SAMPLE_DIR / "sample20d_first10004.csv"
SAMPLE_FULL = SAMPLE_DIR / "full2013_first100.csv"
QUERIES_DIR = ROOT / "queries"



def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the golden fixtures (tests/golden/) from the current code")


@pytest.fixture
def sample_20d() -> Path:
    return SAMPLE_20D


@pytest.fixture
def sample_full() -> Path:
    return SAMPLE_FULL


@pytest.fixture(scope="session")
def sample_oracle():
    """The independent oracle's Q1/Q2 on the real sample; session-wide because it costs ≈30 s."""
    from tests.oracle.run import run_oracle

    return run_oracle(SAMPLE_20D)
