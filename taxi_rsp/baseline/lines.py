"""SPEC §5 output lines of the baseline (Q1 23 fields, Q2 43 fields)."""

from __future__ import annotations

from collections.abc import Sequence

from taxi_rsp.baseline.parse import ROUTE_BASE
from taxi_rsp.baseline.topk import Area
from taxi_rsp.spec import TOP_K

NULL = "NULL"


def cell_id(code: int) -> str:
    """``x * 1000 + y`` -> ``"x.y"``."""
    return f"{code // 1000}.{code % 1000}"


def format_delay(delay_ms: float | None) -> str:
    return NULL if delay_ms is None else f"{delay_ms:.3f}"


def q1_body(routes: Sequence[int]) -> list[str]:
    """The 20 route fields: start and end cell of each route, NULL-padded."""
    fields: list[str] = []
    for route in routes:
        fields += [cell_id(route // ROUTE_BASE), cell_id(route % ROUTE_BASE)]
    return fields + [NULL, NULL] * (TOP_K - len(routes))


def money(half_cents: int) -> str:
    """Dollars with 2 decimals, or 3 when the amount ends in half a cent."""
    if half_cents % 2 == 0:
        cents = half_cents // 2
        return f"{cents // 100}.{cents % 100:02d}"
    mills = half_cents * 5
    return f"{mills // 1000}.{mills % 1000:03d}"


def profitability(area: Area) -> str:
    """median / empty dollars, exact, rounded half to even to 4 decimals."""
    # half_cents / (200 * empty) dollars = half_cents * 50 / empty ten-thousandths.
    quotient, remainder = divmod(area.median_half_cents * 50, area.empty_taxis)
    twice = 2 * remainder
    if twice > area.empty_taxis or (twice == area.empty_taxis and quotient % 2 == 1):
        quotient += 1
    return f"{quotient // 10_000}.{quotient % 10_000:04d}"


def q2_body(areas: Sequence[Area]) -> list[str]:
    """The 40 area fields: cell, empty taxis, median profit, profitability; NULL-padded."""
    fields: list[str] = []
    for area in areas:
        fields += [cell_id(area.cell), str(area.empty_taxis), money(area.median_half_cents),
                   profitability(area)]
    return fields + [NULL] * 4 * (TOP_K - len(areas))
