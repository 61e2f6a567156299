"""The oracle on the 10,004 real lines of the 20-day file: both queries, basic
invariants (nothing is saved; other suites compare their outputs against it)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(1200)  # the session oracle may be computed here: ≈30 s idle, minutes under load


@pytest.fixture(scope="module")
def result(sample_oracle):
    return sample_oracle


def test_counts(result) -> None:
    # The real file is clean: every line is accepted; 178 trips carry zero coordinates
    # or lie outside the grids, and the two grids cover the same area.
    assert result.lines_read == 10_004
    assert result.accepted == 10_004 and result.rejects == []
    assert result.outliers["q1"] == result.outliers["q2"] > 0
    assert result.outliers["q1"] < 500
    assert result.profit_excluded == 0


def test_first_lines_follow_the_first_trips(result) -> None:
    # SPEC §2: the first trip goes from Q1 cell 161.170 to 160.170 (dropoff -73.962440,
    # 40.715008); trip 2 is at (0, 0): a Q1 outlier that changes nothing.
    assert result.q1[0].split(",")[:4] == ["2013-01-01 00:00:00", "2013-01-01 00:02:00",
                                           "161.170", "160.170"]
    assert result.q1[0].endswith(",*")
    assert result.q1[1].split(",")[1] == "2013-01-01 00:03:00"


def test_shape_of_every_line(result) -> None:
    assert len(result.q1) > 100 and len(result.q2) > 50
    assert all(len(line.split(",")) == 23 for line in result.q1)
    assert all(len(line.split(",")) == 43 for line in result.q2)
    # After the first few minutes both lists are full.
    assert "NULL" not in result.q1[-1].split(",")[:-1]
    assert "NULL" not in result.q2[-1].split(",")[:-1]
    # The sample covers 00:02 .. 00:56, less than one Q1 window after the first
    # trip's expiry (00:32), so expiry-only lines are possible but arrivals dominate.
    delays = [line.rsplit(",", 1)[1] for line in result.q1 + result.q2]
    assert set(delays) <= {"*", "NULL"} and delays.count("*") > len(delays) // 2


def test_consecutive_lines_differ_in_their_lists(result) -> None:
    for lines, width in ((result.q1, 2), (result.q2, 4)):
        ids = [line.split(",")[2:-1][::width] if width == 4 else line.split(",")[2:-1]
               for line in lines]
        assert all(a != b for a, b in zip(ids, ids[1:]))
