"""Reading the input file into accepted trips and rejects (SPEC §1, §1.1)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import grid
from .grid import cell_id, cell_number
from .numbers import parse_scaled
from .timestamps import parse_timestamp

FIELD_COUNT = 17
MEDALLION, PICKUP, DROPOFF = 0, 2, 3
PICKUP_LON, PICKUP_LAT, DROPOFF_LON, DROPOFF_LAT = 6, 7, 8, 9
FARE, TIP = 11, 14
NANO_PLACES, CENT_PLACES = 9, 2


@dataclass(frozen=True)
class Trip:
    """One accepted line, with everything the two queries need precomputed."""

    seq: int  # 1-based physical line number
    medallion: str
    pickup_text: str
    dropoff_text: str
    dropoff: int  # event time, seconds
    q1_route: str | None  # "x.y,x.y" as printed; None: outlier of Q1
    q2_pickup: int | None  # Q2 cell numbers (grid.cell_number); both None: outlier of Q2
    q2_dropoff: int | None
    profit_cents: int | None  # fare + tip; None: excluded from profit


@dataclass(frozen=True)
class Reject:
    line_no: int
    reason: str
    raw_line: str


def split_lines(data: bytes) -> list[str]:
    """Physical lines: split on LF only; the CR of a CRLF ending belongs to the line end.

    A final LF does not start another line; a final line without LF is a line (and a
    CR at its very end is an ordinary character: it ends no CRLF).
    """
    chunks = data.split(b"\n")
    last = chunks.pop()  # b"" when the data ends with LF (or is empty)
    lines = [c[:-1] if c.endswith(b"\r") else c for c in chunks]
    if last:
        lines.append(last)
    return [line.decode("utf-8", errors="replace") for line in lines]


def read_file(path: str | Path) -> tuple[list[Trip], list[Reject], int]:
    """Accepted trips in seq order, the rejects, and the number of lines read."""
    lines = split_lines(Path(path).read_bytes())
    trips: list[Trip] = []
    rejects: list[Reject] = []
    latest: int | None = None  # latest accepted dropoff time
    for line_no, raw in enumerate(lines, start=1):
        outcome = _validate(line_no, raw, latest)
        if isinstance(outcome, str):
            rejects.append(Reject(line_no, outcome, raw))
        else:
            trips.append(outcome)
            latest = outcome.dropoff
    return trips, rejects, len(lines)


def _validate(line_no: int, raw: str, latest: int | None) -> Trip | str:
    """The trip, or the first reject reason in SPEC §1.1 table order."""
    fields = [f.strip() for f in raw.split(",")]
    if len(fields) != FIELD_COUNT:
        return "field_count"
    if fields[MEDALLION] == "":
        return "bad_medallion"
    pickup, dropoff = parse_timestamp(fields[PICKUP]), parse_timestamp(fields[DROPOFF])
    if pickup is None or dropoff is None:
        return "bad_timestamp"
    if pickup > dropoff:
        return "pickup_after_dropoff"
    coords = [parse_scaled(fields[i], NANO_PLACES)
              for i in (PICKUP_LON, PICKUP_LAT, DROPOFF_LON, DROPOFF_LAT)]
    if any(c is None for c in coords):
        return "bad_coordinate"
    if latest is not None and dropoff < latest:
        return "out_of_order"
    p_lon, p_lat, d_lon, d_lat = coords
    q1_from, q1_to = grid.Q1.cell(p_lon, p_lat), grid.Q1.cell(d_lon, d_lat)
    q2_from, q2_to = grid.Q2.cell(p_lon, p_lat), grid.Q2.cell(d_lon, d_lat)
    q2_valid = q2_from is not None and q2_to is not None
    return Trip(
        seq=line_no,
        medallion=fields[MEDALLION],
        pickup_text=fields[PICKUP],
        dropoff_text=fields[DROPOFF],
        dropoff=dropoff,
        q1_route=(f"{cell_id(q1_from)},{cell_id(q1_to)}"
                  if q1_from is not None and q1_to is not None else None),
        q2_pickup=cell_number(q2_from) if q2_valid else None,
        q2_dropoff=cell_number(q2_to) if q2_valid else None,
        profit_cents=_profit(fields[FARE], fields[TIP]),
    )


def _profit(fare_text: str, tip_text: str) -> int | None:
    """fare + tip in cents, or None if either is missing, unparseable or negative."""
    fare, tip = parse_scaled(fare_text, CENT_PLACES), parse_scaled(tip_text, CENT_PLACES)
    if fare is None or tip is None or fare < 0 or tip < 0:
        return None
    return fare + tip
