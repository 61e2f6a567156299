"""Trip templates derived from the real DEBS 2015 sample, at generation time.

Every synthetic trip is a *template* (one real line of the sample) moved to a new
pickup minute, with its coordinates slightly jittered and a taxi assigned by
:mod:`taxi_rsp.data.fleet`. Resampling whole real lines keeps the joint distribution
of places, route, trip time, distance, payment type, fare, tip and tolls exactly as
in the sample (tips mostly on card payments, ≈1.5 % zero coordinates, ≈1.8 % outside
the grids) without a model of their dependencies.

Length-bias correction: the sample holds the trips picked up on or after 00:00 and
dropped off by its last minute (00:56), so a trip of D minutes had only
``T - D + 1`` of the ``T + 1`` pickup minutes in which it could be seen. Templates
are drawn with weight ``(T + 1) / (T - D + 1)`` (capped) to undo that bias; a window
of the synthetic file cut the same way then shows the sample's own duration mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np

from taxi_rsp.spec import FIELD_COUNT, FIELD_INDEX

SAMPLE_PATH = Path(__file__).resolve().parents[1] / "samples" / "debs2015" / "sample20d_first10004.csv"

# The inverse-inclusion weight of a very long trip rests on a handful of lines;
# a cap keeps one 47-minute airport trip from being copied thousands of times.
MAX_LENGTH_WEIGHT = 6.0

_TS_FORMAT = "%Y-%m-%d %H:%M:%S"


def to_micro(text: str) -> int:
    """Exact micro-degrees of a decimal string (the sample has 6 decimals)."""
    return int((Decimal(text) * 1_000_000).to_integral_value(ROUND_HALF_EVEN))


def to_cents(text: str) -> int:
    """Exact cents of a money string."""
    return int((Decimal(text) * 100).to_integral_value(ROUND_HALF_EVEN))


@dataclass(frozen=True)
class Templates:
    """Column arrays, one row per real trip of the sample (index = template id)."""

    pickup_lon: np.ndarray  # int64 micro-degrees
    pickup_lat: np.ndarray
    dropoff_lon: np.ndarray
    dropoff_lat: np.ndarray
    pickup_second: np.ndarray  # int64, second of the pickup minute (0 for most)
    duration_seconds: np.ndarray  # int64, dropoff - pickup as written in the line
    weight: np.ndarray  # float64, drawing probability (sums to 1)
    time_distance: tuple[str, ...]  # "trip_time_in_secs,trip_distance" as written
    money: tuple[str, ...]  # "payment_type,fare_amount" as written
    fees: tuple[str, ...]  # "mta_tax,tip_amount,tolls_amount" as written
    base_cents: np.ndarray  # int64, fare + mta + tip + tolls (total minus surcharge)
    surcharged: np.ndarray  # bool, the real line paid a (night) surcharge
    span_minutes: int  # last dropoff minute of the sample after its first midnight
    midnight_pickups: np.ndarray  # float64, pickups per minute from the sample's midnight on

    def __len__(self) -> int:
        return len(self.pickup_lon)


def load_templates(path: Path = SAMPLE_PATH) -> Templates:
    """Read the real sample and derive the template table (≈0.2 s for 10 k lines)."""
    rows = [line.rstrip("\r\n").split(",") for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if len(r) == FIELD_COUNT]
    if not rows:
        raise ValueError(f"{path}: no 17-field lines to calibrate on")
    f = FIELD_INDEX
    pickups = [datetime.strptime(r[f["pickup_datetime"]], _TS_FORMAT) for r in rows]
    dropoffs = [datetime.strptime(r[f["dropoff_datetime"]], _TS_FORMAT) for r in rows]
    midnight = min(pickups).replace(hour=0, minute=0, second=0)
    span = max(int((d - midnight).total_seconds()) // 60 for d in dropoffs)

    duration = np.array([int((d - p).total_seconds()) for p, d in zip(pickups, dropoffs)], dtype=np.int64)
    duration = np.maximum(duration, 0)  # a trip never ends before it starts
    minutes = duration // 60
    weight = (span + 1) / np.maximum(span + 1 - minutes, 1)
    weight = np.minimum(weight, MAX_LENGTH_WEIGHT)
    weight = weight / weight.sum()
    pickup_minute = np.array([int((p - midnight).total_seconds()) // 60 for p in pickups], dtype=np.int64)

    def column(name: str) -> list[str]:
        return [r[f[name]] for r in rows]

    def micro(name: str) -> np.ndarray:
        return np.array([to_micro(v) for v in column(name)], dtype=np.int64)

    def cents(name: str) -> np.ndarray:
        return np.array([to_cents(v) for v in column(name)], dtype=np.int64)

    base = cents("fare_amount") + cents("mta_tax") + cents("tip_amount") + cents("tolls_amount")
    return Templates(
        pickup_lon=micro("pickup_longitude"),
        pickup_lat=micro("pickup_latitude"),
        dropoff_lon=micro("dropoff_longitude"),
        dropoff_lat=micro("dropoff_latitude"),
        pickup_second=np.array([p.second for p in pickups], dtype=np.int64),
        duration_seconds=duration,
        weight=weight,
        time_distance=tuple(f"{a},{b}" for a, b in zip(column("trip_time_in_secs"), column("trip_distance"))),
        money=tuple(f"{a},{b}" for a, b in zip(column("payment_type"), column("fare_amount"))),
        fees=tuple(
            f"{a},{b},{c}" for a, b, c in zip(column("mta_tax"), column("tip_amount"), column("tolls_amount"))
        ),
        base_cents=base,
        surcharged=cents("surcharge") > 0,
        span_minutes=span,
        midnight_pickups=_pickup_rate(pickup_minute, minutes, weight, span),
    )


# Minutes before the sample's end for which a pickup's trip has too little time to be
# seen: the truncation correction below is not trusted there.
_RATE_MARGIN = 15


def _pickup_rate(pickup_minute: np.ndarray, minutes: np.ndarray, weight: np.ndarray, span: int) -> np.ndarray:
    """Pickups per minute after midnight, corrected for trips that end after the sample.

    A trip picked up at minute m is in the sample only if it lasts at most span - m
    minutes; dividing the count by that probability (from the corrected duration mix)
    gives the pickup rate. This is the real shape of New Year's midnight: ≈45 pickups
    per minute at 00:00 (the city is watching the ball drop), ≈250 by 00:20.
    """
    last = max(span - _RATE_MARGIN, 1)
    counts = np.bincount(pickup_minute[pickup_minute < last], minlength=last).astype(np.float64)
    seen = np.array([weight[minutes <= span - m].sum() for m in range(last)])
    rate = counts / np.maximum(seen, 1e-9)
    # A 3-minute moving average removes the sampling noise, not the shape.
    padded = np.concatenate([rate[:1], rate, rate[-1:]])
    return np.convolve(padded, np.ones(3) / 3, mode="valid")
