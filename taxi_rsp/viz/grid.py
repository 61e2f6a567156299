"""Geometry of the SPEC §2 grids for drawing: cell centres and edges in degrees.

Derived here from SPEC's constants on purpose (not imported from the feeder or
``taxi_rsp.spec``), so a drawing that disagrees with the engine's cells shows up in the
cross-check of ``tests/test_viz.py`` instead of inheriting the same mistake.

>>> Q1.centre(1, 1)
(-74.913585, 41.474937)
>>> Q2.centre(1, 1)
(-74.913585, 41.474937)
>>> Q1.cell_of(parse_nano("-73.956528"), parse_nano("40.716976")), Q2.cell_of(parse_nano("-73.956528"), parse_nano("40.716976"))
((161, 170), (321, 339))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NANO = 10**9
_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")  # ASCII digits only (SPEC §1)


@dataclass(frozen=True)
class MapGrid:
    """One grid of SPEC §2; lengths in integer nano-degrees, x east, y south, 1-based."""

    name: str
    lon_step: int
    lat_step: int
    west: int  # west edge of column 1
    north: int  # north edge of row 1
    cells: int

    def cell_of(self, lon_nano: int, lat_nano: int) -> tuple[int, int] | None:
        """The cell holding a point (a west or north edge belongs to the cell), None outside."""
        x = (lon_nano - self.west) // self.lon_step + 1
        y = (self.north - lat_nano) // self.lat_step + 1
        return (x, y) if 1 <= x <= self.cells and 1 <= y <= self.cells else None

    def centre(self, x: int, y: int) -> tuple[float, float]:
        """(lon, lat) of a cell's centre in degrees (exact to the nano-degree, then float).
        Steps are even numbers of nano-degrees or not: the half step is kept exact by
        working in half nano-degrees."""
        lon2 = 2 * self.west + (2 * x - 1) * self.lon_step
        lat2 = 2 * self.north - (2 * y - 1) * self.lat_step
        return lon2 / (2 * NANO), lat2 / (2 * NANO)

    def bounds(self, x: int, y: int) -> tuple[float, float, float, float]:
        """(west, south, east, north) edges of a cell in degrees."""
        west = self.west + (x - 1) * self.lon_step
        north = self.north - (y - 1) * self.lat_step
        return west / NANO, (north - self.lat_step) / NANO, (west + self.lon_step) / NANO, north / NANO

    def column_edge(self, x: int) -> float:
        """Longitude of the west edge of column x (x = cells + 1: the east edge of the grid)."""
        return (self.west + (x - 1) * self.lon_step) / NANO

    def row_edge(self, y: int) -> float:
        """Latitude of the north edge of row y."""
        return (self.north - (y - 1) * self.lat_step) / NANO

    def column_at(self, lon: float) -> float:
        """Fractional column (1-based) of a longitude, for choosing a drawing extent."""
        return (lon * NANO - self.west) / self.lon_step + 1

    def row_at(self, lat: float) -> float:
        return (self.north - lat * NANO) / self.lat_step + 1


# SPEC §2 table: cell 1.1 is centred on (41.474937 N, -74.913585 E); 500 m and 250 m cells.
Q1 = MapGrid("q1", 5_986_000, 4_491_556, -74_916_578_000, 41_477_182_778, 300)
Q2 = MapGrid("q2", 2_993_000, 2_245_778, -74_915_081_500, 41_476_059_889, 600)


def parse_cell(text: str) -> tuple[int, int] | None:
    """``"161.170"`` -> (161, 170); None for ``NULL`` or anything that is not x.y."""
    x, dot, y = text.partition(".")
    if not dot or not x.isdigit() or not y.isdigit():
        return None
    return int(x), int(y)


def parse_nano(text: str) -> int | None:
    """An xsd:decimal in degrees as exact integer nano-degrees (half to even at the 9th
    decimal, SPEC §1); None when it is not such a number.

    >>> parse_nano("-73.956528"), parse_nano("+40.75"), parse_nano(".5"), parse_nano("1e3")
    (-73956528000, 40750000000, 500000000, None)
    >>> parse_nano("0.0000000005"), parse_nano("0.0000000015")
    (0, 2)
    """
    match = _DECIMAL.fullmatch(text.strip())
    if match is None:
        return None
    sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
    if not whole and not fraction:
        return None
    digits = fraction.ljust(9, "0")
    value = int(whole or "0") * NANO + int(digits[:9])
    rest = digits[9:]
    if rest and int(rest):
        half = "5" + "0" * (len(rest) - 1)
        if rest > half or (rest == half and value % 2 == 1):
            value += 1
    return -value if sign == "-" else value
