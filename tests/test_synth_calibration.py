"""Units of the generator: calibration tables, demand curve, surcharge rule, fleet."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from taxi_rsp.data.calibration import load_templates
from taxi_rsp.data.clock import RunClock
from taxi_rsp.data.demand import minute_rates
from taxi_rsp.data.fleet import ZONE_KEY, Fleet


@pytest.fixture(scope="module")
def templates():
    return load_templates()


def test_templates_are_the_sample_lines(templates) -> None:
    assert len(templates) == 10_004
    assert templates.span_minutes == 56
    assert templates.weight.sum() == pytest.approx(1.0)
    assert int((templates.pickup_lon == 0).sum()) > 100  # GPS failures are kept
    assert templates.pickup_lon[0] == -73_956_528 and templates.pickup_lat[0] == 40_716_976


def test_long_trips_weigh_more_length_bias(templates) -> None:
    minutes = templates.duration_seconds // 60
    short = templates.weight[minutes == 5].mean()
    long = templates.weight[minutes == 40].mean()
    assert long == pytest.approx(short * 52 / 17, rel=1e-9)  # (57 - 5) / (57 - 40)


def test_midnight_pickup_rate_rises_from_the_ball_drop(templates) -> None:
    rate = templates.midnight_pickups
    assert rate.size == 56 - 15
    assert rate[0] < 80 < 200 < rate[20:].min()


def test_twenty_days_hold_two_million_trips_with_a_daily_cycle(templates) -> None:
    rates = minute_rates(20, first_minutes=templates.midnight_pickups)
    assert 1.95e6 < rates.sum() < 2.05e6
    per_hour = rates.reshape(20, 24, 60).sum(axis=2)
    weekday = per_hour[1]  # Wednesday 2 January
    assert int(np.argmin(weekday)) in (4, 5)
    assert int(np.argmax(weekday)) in range(18, 22)
    assert rates[0] == pytest.approx(templates.midnight_pickups[0])


def test_rates_have_no_steps_on_the_hour() -> None:
    rates = minute_rates(3)
    assert np.abs(np.diff(rates)).max() < 0.05 * rates.max()


@pytest.mark.parametrize(
    "day, hour, cents",
    [(2, 17, 100), (2, 21, 50), (2, 3, 50), (2, 12, 0), (5, 17, 0), (5, 22, 50)],  # 2nd Wed, 5th Sat
)
def test_surcharge_rule_of_2013(day: int, hour: int, cents: int) -> None:
    clock = RunClock(date(2013, 1, 1), 6 * 1440, 0)
    assert clock.surcharge_cents((day - 1) * 1440 + hour * 60) == cents


def test_clock_formats_inside_and_beyond_the_precomputed_range() -> None:
    clock = RunClock(date(2013, 1, 1), 10, 0)
    assert clock.stamp(0) == "2013-01-01 00:00:00"
    assert clock.stamp(61, 7) == "2013-01-01 01:01:07"
    assert clock.stamp(-3) == "2012-12-31 23:57:00"


def test_fleet_prefers_the_longest_waiting_taxi_nearby() -> None:
    fleet = Fleet(size=10, drivers=10, seed=0, idle_timeout=30)
    here, next_door = 50 * ZONE_KEY + 50, 51 * ZONE_KEY + 50
    a, b, c = fleet.assign(here), fleet.assign(here), fleet.assign(here)  # from the depot
    fleet.release_at(a, 1, here)
    fleet.release_at(b, 2, here)
    fleet.release_at(c, 2, next_door)
    for minute in range(3):
        fleet.advance(minute)
    assert fleet.assign(here) == a  # waited longest in the zone
    assert fleet.assign(here) == b
    assert fleet.assign(here) == c  # then the ring around it
    assert fleet.assign(here) not in (a, b, c)  # then the depot


def test_fleet_sends_idle_taxis_off_duty() -> None:
    fleet = Fleet(size=2, drivers=4, seed=0, idle_timeout=10)
    zone = 7 * ZONE_KEY + 7
    a = fleet.assign(zone)
    fleet.assign(zone)  # the other taxi stays busy
    fleet.release_at(a, 1, zone)
    for minute in range(1, 12):
        fleet.advance(minute)
    licence_before = fleet.license(a)
    # a went off duty at minute 11: a trip far away takes it from the depot, new driver.
    assert fleet.assign(90 * ZONE_KEY + 90) == a
    assert fleet.license(a) != licence_before


def test_an_exhausted_fleet_is_an_error_not_a_hang() -> None:
    fleet = Fleet(size=1, drivers=1, seed=0, idle_timeout=10)
    fleet.assign(1)
    with pytest.raises(RuntimeError):
        fleet.assign(1)
