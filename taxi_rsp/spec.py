"""Constants of SPEC.md: the CSV schema, the two grids and the reject reasons.

This module holds *data* from the contract only, no query logic, so that the engine
path (feeder, queries, listener) and the independent Spark baseline may both use it.
"""

from __future__ import annotations

from dataclasses import dataclass

FIELDS: tuple[str, ...] = (
    "medallion",
    "hack_license",
    "pickup_datetime",
    "dropoff_datetime",
    "trip_time_in_secs",
    "trip_distance",
    "pickup_longitude",
    "pickup_latitude",
    "dropoff_longitude",
    "dropoff_latitude",
    "payment_type",
    "fare_amount",
    "surcharge",
    "mta_tax",
    "tip_amount",
    "tolls_amount",
    "total_amount",
)
FIELD_INDEX: dict[str, int] = {name: i for i, name in enumerate(FIELDS)}
FIELD_COUNT = len(FIELDS)

# Reject reasons in SPEC §1.1 table order: the first that holds is the one reported.
REJECT_REASONS: tuple[str, ...] = (
    "field_count",
    "bad_medallion",
    "bad_timestamp",
    "pickup_after_dropoff",
    "bad_coordinate",
    "out_of_order",
)
REJECTS_HEADER = "line_no,reason,raw_line"

NANO = 1_000_000_000  # nano-degrees per degree


@dataclass(frozen=True)
class Grid:
    """A flat-earth grid of SPEC §2; every length in integer nano-degrees."""

    name: str
    lon_step: int
    lat_step: int
    west: int
    north: int
    cells: int

    def cell(self, lon_nano: int, lat_nano: int) -> tuple[int, int] | None:
        """Return the 1-based (x, y) cell of a point, or None outside the grid.

        >>> Q1_GRID.cell(-73_956_528_000, 40_716_976_000)
        (161, 170)
        """
        x = (lon_nano - self.west) // self.lon_step + 1
        y = (self.north - lat_nano) // self.lat_step + 1
        if 1 <= x <= self.cells and 1 <= y <= self.cells:
            return x, y
        return None


Q1_GRID = Grid("q1", 5_986_000, 4_491_556, -74_916_578_000, 41_477_182_778, 300)
Q2_GRID = Grid("q2", 2_993_000, 2_245_778, -74_915_081_500, 41_476_059_889, 600)

Q1_FIELD_COUNT = 23
Q2_FIELD_COUNT = 43
TOP_K = 10
