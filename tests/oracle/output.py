"""Output lines in the SPEC §5 format.

The delay column is a measured time, so the oracle writes ``*`` for an arrival
trigger and ``NULL`` for an expiry trigger; comparisons check only that pattern.
"""

from __future__ import annotations

from collections.abc import Sequence

from .clock import Instant
from .grid import number_id
from .q2 import Area
from .timestamps import format_timestamp

TOP_K = 10
NULL = "NULL"
ARRIVAL_DELAY = "*"


def trigger_fields(instant: Instant) -> list[str]:
    """Timestamps of the arriving trip, or the expiry instant twice."""
    if instant.trigger is not None:
        return [instant.trigger.pickup_text, instant.trigger.dropoff_text]
    stamp = format_timestamp(instant.time)
    return [stamp, stamp]


def delay_field(instant: Instant) -> str:
    return ARRIVAL_DELAY if instant.trigger is not None else NULL


def q1_line(instant: Instant, routes: Sequence[str]) -> str:
    """23 fields: 2 timestamps, 10 (start, end) pairs padded with NULL, delay.

    A route is already its two printed fields, ``"x.y,x.y"``.
    """
    fields = trigger_fields(instant) + list(routes)
    fields += [NULL, NULL] * (TOP_K - len(routes))
    fields.append(delay_field(instant))
    return ",".join(fields)


def q2_line(instant: Instant, areas: Sequence[Area]) -> str:
    """43 fields: 2 timestamps, 10 (cell, empty, median, profitability) groups, delay."""
    fields = trigger_fields(instant)
    for area in areas:
        fields += [number_id(area.cell), str(area.empty_taxis),
                   format_money(area.median_half_cents), format_profitability(area)]
    fields += [NULL] * 4 * (TOP_K - len(areas))
    fields.append(delay_field(instant))
    return ",".join(fields)


def format_money(half_cents: int) -> str:
    """Dollars with 2 decimals, or 3 when the amount ends in half a cent."""
    if half_cents % 2 == 0:
        cents = half_cents // 2
        return f"{cents // 100}.{cents % 100:02d}"
    mills = half_cents * 5  # thousandths of a dollar
    return f"{mills // 1000}.{mills % 1000:03d}"


def format_profitability(area: Area) -> str:
    """The exact profitability rounded half to even to 4 decimals."""
    scaled = round(area.profitability * 10_000)  # Fraction rounding is half to even
    return f"{scaled // 10_000}.{scaled % 10_000:04d}"
