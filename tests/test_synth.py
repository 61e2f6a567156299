"""The synthetic generator: determinism, order, taxis, bounded memory, dirty lines.

Dirty lines are judged by a small SPEC §1.1 validator written here from the SPEC
text, independent of the generator and of the Feeder.
"""

from __future__ import annotations

import hashlib
import re
import tracemalloc
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from taxi_rsp.data import SynthConfig, generate
from taxi_rsp.data.calibration import load_templates
from taxi_rsp.data.dirty import CORRUPTIONS
from taxi_rsp.spec import REJECT_REASONS


@pytest.fixture(scope="module")
def templates():
    return load_templates()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path, templates) -> None:
    config = SynthConfig(days=1, minutes=60, seed=7)
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    generate(config, a, templates)
    generate(config, b, templates)
    generate(SynthConfig(days=1, minutes=60, seed=8), c, templates)
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)


@pytest.fixture(scope="module")
def clean_file(tmp_path_factory, templates) -> tuple[Path, object]:
    # Five hours of New Year's night: the peak, the fall and the quiet early morning.
    path = tmp_path_factory.mktemp("synth") / "clean.csv"
    return path, generate(SynthConfig(days=1, minutes=300, dirty=0.0, seed=3), path, templates)


def _rows(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_text(encoding="utf-8").splitlines()]


def test_clean_file_is_well_formed_and_sorted_by_dropoff(clean_file) -> None:
    path, result = clean_file
    rows = _rows(path)
    assert len(rows) == result.lines == result.trips > 20_000
    assert all(len(r) == 17 for r in rows)
    dropoffs = [r[3] for r in rows]
    assert dropoffs == sorted(dropoffs)
    assert dropoffs[0].startswith("2013-01-01 00:")
    assert all(r[2] <= r[3] for r in rows)
    whole = sum(r[2].endswith(":00") and r[3].endswith(":00") for r in rows)
    assert 0.98 < whole / len(rows) < 1.0  # like the real file: a few lines carry seconds
    for r in rows:
        datetime.strptime(r[2], "%Y-%m-%d %H:%M:%S")
        datetime.strptime(r[3], "%Y-%m-%d %H:%M:%S")


def test_total_amount_is_the_sum_of_its_parts(clean_file) -> None:
    path, _ = clean_file
    for r in _rows(path):
        cents = [round(float(v) * 100) for v in r[11:17]]
        assert sum(cents[:5]) == cents[5], r


def test_a_taxi_is_never_on_two_trips_at_once(clean_file) -> None:
    path, _ = clean_file
    trips = defaultdict(list)
    for r in _rows(path):
        trips[r[0]].append((r[2], r[3]))
    reused = 0
    for mine in trips.values():
        mine.sort()
        for (_, dropoff), (pickup, _) in zip(mine, mine[1:]):
            assert pickup >= dropoff
            reused += 1
    assert reused > len(trips)  # taxis do several trips, as in the real data


def test_a_denser_stream_than_calibrated_gets_a_larger_fleet(tmp_path: Path, templates) -> None:
    # The real 2013 year's density (≈474 k trips a day, 4.7x the calibrated rate) used to
    # run the 13,000-taxi fleet dry; the fleet now grows with the demand.
    path = tmp_path / "dense.csv"
    result = generate(SynthConfig(days=1, trips=474_000, minutes=90, dirty=0.0), path, templates)
    assert result.medallions > 13_000
    busy: dict[str, str] = {}
    for medallion, _, pickup, dropoff in (r[:4] for r in sorted(_rows(path), key=lambda r: (r[2], r[3]))):
        assert pickup >= busy.get(medallion, ""), "a taxi on two trips at once"
        busy[medallion] = dropoff


def test_progress_hears_of_every_minute_drawn(tmp_path: Path, templates) -> None:
    seen: list[tuple[int, int]] = []
    generate(SynthConfig(days=1, minutes=30, trips=3_000, dirty=0.0), tmp_path / "p.csv", templates,
             on_minute=lambda minute, minutes: seen.append((minute, minutes)))
    assert seen == [(minute, 30) for minute in range(1, 31)]


def test_the_daily_cycle_is_applied(tmp_path: Path, templates) -> None:
    path = tmp_path / "day.csv"
    generate(SynthConfig(days=2, trips=40_000, dirty=0.0), path, templates)
    per_hour = Counter(r[2][:13] for r in _rows(path))  # by pickup hour
    # 2 Jan 2013 is a Wednesday: quiet at 5 am, busy in the evening.
    assert per_hour["2013-01-02 05"] * 4 < per_hour["2013-01-02 19"]
    assert 35_000 < sum(per_hour.values()) < 45_000


def _peak_bytes(config: SynthConfig, path: Path, templates) -> int:
    tracemalloc.start()
    try:
        generate(config, path, templates)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_length_of_the_file(tmp_path: Path, templates) -> None:
    # Same rate per minute, four times the days: the peak must stay put (streaming).
    short = _peak_bytes(SynthConfig(days=1, trips=8_000), tmp_path / "short.csv", templates)
    long = _peak_bytes(SynthConfig(days=4, trips=32_000), tmp_path / "long.csv", templates)
    assert (tmp_path / "long.csv").stat().st_size > 3.5 * (tmp_path / "short.csv").stat().st_size
    assert long < 1.25 * short


# --- an independent SPEC §1.1 validator -------------------------------------------------

_STAMP = "%Y-%m-%d %H:%M:%S"
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")


def _valid_stamp(text: str) -> bool:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}", text):
        return False
    try:
        datetime.strptime(text, _STAMP)
    except ValueError:
        return False
    return True


def _money_ok(text: str) -> bool:
    return bool(_DECIMAL.fullmatch(text)) and round(float(text) * 100) >= 0


def spec_validate(path: Path) -> tuple[Counter, int, int]:
    """(rejects by reason, accepted lines, accepted lines excluded from profit)."""
    rejects: Counter = Counter()
    accepted = excluded = 0
    latest = ""
    with open(path, encoding="utf-8", errors="replace", newline="") as source:
        for raw in source:
            f = [v.strip() for v in raw.rstrip("\n").rstrip("\r").split(",")]
            if len(f) != 17:
                reason = "field_count"
            elif not f[0]:
                reason = "bad_medallion"
            elif not (_valid_stamp(f[2]) and _valid_stamp(f[3])):
                reason = "bad_timestamp"
            elif f[2] > f[3]:
                reason = "pickup_after_dropoff"
            elif not all(_DECIMAL.fullmatch(v) for v in f[6:10]):
                reason = "bad_coordinate"
            elif f[3] < latest:
                reason = "out_of_order"
            else:
                reason = None
            if reason:
                rejects[reason] += 1
                continue
            latest = f[3]
            accepted += 1
            excluded += not (_money_ok(f[11]) and _money_ok(f[14]))
    return rejects, accepted, excluded


def test_dirty_lines_hit_every_spec_reject_reason(tmp_path: Path, templates) -> None:
    path = tmp_path / "dirty.csv"
    result = generate(SynthConfig(days=1, minutes=180, dirty=0.02, seed=5), path, templates)
    assert set(result.dirty) == {c.name for c in CORRUPTIONS}
    rejects, accepted, excluded = spec_validate(path)
    assert set(rejects) == set(REJECT_REASONS)
    assert rejects == result.expected_rejects
    assert accepted == result.lines - sum(rejects.values())
    assert excluded == result.expected_profit_exclusions > 0
    assert 0.015 < sum(result.dirty.values()) / result.lines < 0.025


def test_dirty_zero_gives_a_clean_file(clean_file) -> None:
    path, result = clean_file
    rejects, accepted, excluded = spec_validate(path)
    assert rejects == Counter() and excluded == 0 and accepted == result.lines
    assert sum(result.dirty.values()) == 0
