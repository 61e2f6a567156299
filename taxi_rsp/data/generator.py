"""Stream a synthetic DEBS 2015 trip file to disk, sorted by drop-off time.

Minute by minute (numpy draws per minute, one Python step per trip):

1. the number of pickups is Poisson around the demand cycle (:mod:`.demand`);
2. each pickup is a real template line (:mod:`.calibration`) with its points moved by
   a small Gaussian jitter (a smoothed bootstrap: new routes appear, popular ones stay
   popular, zero coordinates stay zero);
3. a taxi near the pickup takes it (:mod:`.fleet`) and is free again after the drop-off;
4. the trip is buffered under its drop-off minute. Once all pickups of minute m are
   drawn no later trip can end in m (trip times are never negative), so minute m's
   buffer is shuffled, lightly corrupted (:mod:`.dirty`) and written.

Memory is bounded by construction: the buffers hold only trips still on the road
(rate x longest trip, ≈15 k lines at the New Year's peak) and the fleet is fixed.
"""

from __future__ import annotations

import math

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TextIO

import numpy as np

from taxi_rsp.data.calibration import Templates, load_templates
from taxi_rsp.data.clock import RunClock
from taxi_rsp.data.demand import START_DATE, minute_rates
from taxi_rsp.data.dirty import Corruptor
from taxi_rsp.data.fleet import ZONE_KEY, Fleet
from taxi_rsp.spec import Q1_GRID

# Metres per micro-degree at New York's latitude (flat earth, like the grids).
_M_PER_MICRO_LAT = 0.1112
_M_PER_MICRO_LON = 0.0843


@dataclass(frozen=True)
class SynthConfig:
    """What to generate. Defaults reproduce the official 20-day file's scale."""

    days: int = 20
    seed: int = 0
    trips: int | None = None  # expected pickups in total; None: the calibrated ≈100 k/day
    dirty: float = 0.001  # share of lines damaged (SPEC §1.1 rejects + money defects)
    minutes: int | None = None  # stop drawing pickups after this many minutes (previews)
    start: date = START_DATE
    fleet: int = 13_000  # medallions at the calibrated demand (NYC had ≈13,200 in 2013)
    drivers: int = 32_000  # hack licenses taking turns on them, at the calibrated demand
    jitter_m: float = 115.0  # std. deviation of the point jitter, metres
    idle_timeout: int = 45  # minutes a taxi waits before going off duty
    ready_share: float = 0.15  # share of taxis free again within their drop-off minute
    on_road_minutes: float = 16.0  # taxis on duty at midnight, in minutes of the first hour's peak demand


@dataclass
class SynthResult:
    """What was written, including what a SPEC-conformant Feeder should report."""

    path: Path
    lines: int = 0
    trips: int = 0  # pickups drawn (one line each, damaged or not)
    medallions: int = 0
    first_dropoff_minute: str = ""  # "YYYY-MM-DD HH:MM" of the first line written
    last_dropoff_minute: str = ""
    dirty: Counter[str] = field(default_factory=Counter)
    expected_rejects: Counter[str] = field(default_factory=Counter)
    expected_profit_exclusions: int = 0


class _Draws:
    """The numpy draws of one minute: templates, jittered points, zones, readiness."""

    def __init__(self, t: Templates, config: SynthConfig, rng: np.random.Generator, count: int) -> None:
        self.template = rng.choice(len(t), size=count, p=t.weight)
        idx = self.template
        noise = rng.normal(0.0, 1.0, size=(4, count))
        lat_sd = config.jitter_m / _M_PER_MICRO_LAT
        lon_sd = config.jitter_m / _M_PER_MICRO_LON
        self.plon, self.plat = _jitter(t.pickup_lon[idx], t.pickup_lat[idx], noise[0], noise[1], lon_sd, lat_sd)
        self.dlon, self.dlat = _jitter(t.dropoff_lon[idx], t.dropoff_lat[idx], noise[2], noise[3], lon_sd, lat_sd)
        self.pzone = zones(self.plon, self.plat)
        self.dzone = zones(self.dlon, self.dlat)
        self.ready_now = rng.random(count) < config.ready_share


def _jitter(lon: np.ndarray, lat: np.ndarray, nx: np.ndarray, ny: np.ndarray, sx: float, sy: float):
    # A zero coordinate is a GPS failure, not a place: it stays exactly zero.
    real = (lon != 0) & (lat != 0)
    lon = np.where(real, lon + np.rint(nx * sx).astype(np.int64), lon)
    lat = np.where(real, lat + np.rint(ny * sy).astype(np.int64), lat)
    return lon, lat


def zones(lon_micro: np.ndarray, lat_micro: np.ndarray) -> np.ndarray:
    """Q1-sized zone keys on an unbounded grid (points outside the grid get keys too)."""
    x = (lon_micro * 1000 - Q1_GRID.west) // Q1_GRID.lon_step
    y = (Q1_GRID.north - lat_micro * 1000) // Q1_GRID.lat_step
    return (x % ZONE_KEY) * ZONE_KEY + (y % ZONE_KEY)


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def generate(config: SynthConfig, out: Path, templates: Templates | None = None,
             on_minute: Callable[[int, int], None] | None = None) -> SynthResult:
    """Write the synthetic file to ``out``; deterministic for ``config``. ``on_minute``:
    called with (minutes drawn, minutes in all) after each minute of pickups (a
    progress line; a full year has 525,600)."""
    t = templates if templates is not None else load_templates()
    rng = np.random.default_rng(config.seed)
    # The sample is 1 January's first hour: its minute-level pickup rate replaces the
    # hourly curve there when the run starts on that date (--trips scales it too).
    midnight = t.midnight_pickups if (config.start.month, config.start.day) == (1, 1) else None
    rates = minute_rates(config.days, config.start, midnight)
    if config.minutes is not None:
        rates = rates[: max(config.minutes, 1)]
    demand = 1.0
    if config.trips is not None:
        demand = config.trips / rates.sum()
        rates = rates * demand
    longest = int(t.duration_seconds.max() + t.pickup_second.max()) // 60 + 2
    clock = RunClock(config.start, len(rates), longest)
    taxis, drivers = fleet_size(config, demand)
    fleet = Fleet(taxis, drivers, config.seed, config.idle_timeout)
    corruptor = Corruptor(config.dirty, clock, rng)
    result = SynthResult(path=out)
    _put_fleet_on_road(fleet, t, rng, round(rates[:60].max() * config.on_road_minutes))

    whole: dict[int, list[str]] = {}  # drop-off minute -> lines ending at hh:mm:00
    timed: dict[int, list[tuple[int, str]]] = {}  # drop-off minute -> (second, line)
    with open(out, "w", encoding="utf-8", newline="\n") as sink:
        for minute, count in enumerate(rng.poisson(rates).tolist()):
            fleet.advance(minute)
            if count:
                _draw_minute(minute, count, t, config, rng, clock, fleet, whole, timed)
                result.trips += count
            _flush(minute, whole, timed, rng, corruptor, clock.stamp, sink, result)
            if on_minute is not None:
                on_minute(minute + 1, len(rates))
        for minute in sorted(set(whole) | set(timed)):
            _flush(minute, whole, timed, rng, corruptor, clock.stamp, sink, result)

    result.medallions = len(fleet.used)
    result.dirty = Counter(corruptor.counts)
    result.expected_rejects = corruptor.expected_rejects()
    result.expected_profit_exclusions = corruptor.expected_profit_exclusions()
    return result


def fleet_size(config: SynthConfig, demand: float) -> tuple[int, int]:
    """Taxis and drivers for ``demand`` times the calibrated pickup rate: the calibrated
    fleet, grown in proportion above it (the fleet knobs were fitted at that rate, so a
    denser stream keeps the same share of taxis busy instead of running out of them);
    below it the fleet stays, as with a quiet day.

    >>> fleet_size(SynthConfig(), 1.0), fleet_size(SynthConfig(), 0.5)
    ((13000, 32000), (13000, 32000))
    >>> fleet_size(SynthConfig(), 4.74)  # the real 2013 year's 173 M trips
    (61620, 151680)
    """
    if demand <= 1.0:
        return config.fleet, config.drivers
    return math.ceil(config.fleet * demand), math.ceil(config.drivers * demand)


def _put_fleet_on_road(fleet: Fleet, t: Templates, rng: np.random.Generator, count: int) -> None:
    """Taxis already on a trip at midnight come free during the first 20 minutes."""
    count = min(count, len(fleet.medallions) // 2)
    idx = rng.choice(len(t), size=count, p=t.weight)
    free_at = rng.integers(0, 20, size=count).tolist()
    for zone, minute in zip(zones(t.dropoff_lon[idx], t.dropoff_lat[idx]).tolist(), free_at):
        fleet.release_at(fleet.take_depot(), minute, zone)


def _draw_minute(
    minute: int,
    count: int,
    t: Templates,
    config: SynthConfig,
    rng: np.random.Generator,
    clock: RunClock,
    fleet: Fleet,
    whole: dict[int, list[str]],
    timed: dict[int, list[tuple[int, str]]],
) -> None:
    """Draw one minute's pickups, give each a taxi and buffer it by drop-off minute."""
    d = _Draws(t, config, rng, count)
    surcharge_now = clock.surcharge_cents(minute)
    stamp, medallions = clock.stamp, fleet.medallions
    pickup_second, duration = t.pickup_second, t.duration_seconds
    time_distance, money, fees, base, surcharged = t.time_distance, t.money, t.fees, t.base_cents, t.surcharged
    start = minute * 60
    for k, plon, plat, dlon, dlat, pzone, dzone, ready in zip(
        d.template.tolist(), d.plon.tolist(), d.plat.tolist(), d.dlon.tolist(), d.dlat.tolist(),
        d.pzone.tolist(), d.dzone.tolist(), d.ready_now.tolist(),
    ):
        taxi = fleet.assign(pzone)
        second = int(pickup_second[k])
        end_minute, end_second = divmod(start + second + int(duration[k]), 60)
        # Free within the drop-off minute only when the trip ended at its first second.
        fleet.release_at(taxi, end_minute if ready and not end_second else end_minute + 1, dzone)
        surcharge = surcharge_now if surcharged[k] else 0
        line = (
            f"{medallions[taxi]},{fleet.license(taxi)},{stamp(minute, second)},{stamp(end_minute, end_second)},"
            f"{time_distance[k]},{plon / 1e6:.6f},{plat / 1e6:.6f},{dlon / 1e6:.6f},{dlat / 1e6:.6f},"
            f"{money[k]},{_money(surcharge)},{fees[k]},{_money(int(base[k]) + surcharge)}"
        )
        if end_second:
            timed.setdefault(end_minute, []).append((end_second, line))
        else:
            whole.setdefault(end_minute, []).append(line)


def _flush(
    minute: int,
    whole: dict[int, list[str]],
    timed: dict[int, list[tuple[int, str]]],
    rng: np.random.Generator,
    corruptor: Corruptor,
    stamp: Callable[[int], str],
    sink: TextIO,
    result: SynthResult,
) -> None:
    """Write every trip that ends in ``minute``: whole-minute ones first, in random
    order (the real file has no order within a minute), then those with seconds."""
    lines = whole.pop(minute, [])
    if len(lines) > 1:
        lines = [lines[i] for i in rng.permutation(len(lines)).tolist()]
    late = timed.pop(minute, None)
    if late:
        late.sort(key=lambda pair: pair[0])
        lines.extend(line for _, line in late)
    if not lines:
        return
    corruptor.apply(lines, minute)
    sink.write("\n".join(lines))
    sink.write("\n")
    if not result.lines:
        result.first_dropoff_minute = stamp(minute)[:16]
    result.lines += len(lines)
    result.last_dropoff_minute = stamp(minute)[:16]
