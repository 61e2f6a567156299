"""The two flat-earth grids of SPEC §2, restated here so the oracle shares no code
with the engine (a typo in ``taxi_rsp/spec.py`` must not hide in both places)."""

from __future__ import annotations

from dataclasses import dataclass

Cell = tuple[int, int]


@dataclass(frozen=True)
class OracleGrid:
    """Grid constants in integer nano-degrees, copied from the SPEC §2 table."""

    lon_step: int
    lat_step: int
    west: int
    north: int
    cells: int

    def cell(self, lon_nano: int, lat_nano: int) -> Cell | None:
        """Return (x, y) of the point, or None when it lies outside the grid.

        Integer floor division puts a point on a west or north edge in that cell.
        """
        x = (lon_nano - self.west) // self.lon_step + 1
        y = (self.north - lat_nano) // self.lat_step + 1
        if 1 <= x <= self.cells and 1 <= y <= self.cells:
            return (x, y)
        return None


Q1 = OracleGrid(lon_step=5_986_000, lat_step=4_491_556, west=-74_916_578_000,
                north=41_477_182_778, cells=300)
Q2 = OracleGrid(lon_step=2_993_000, lat_step=2_245_778, west=-74_915_081_500,
                north=41_476_059_889, cells=600)


def cell_id(cell: Cell) -> str:
    """The output form ``"x.y"`` of a cell."""
    return f"{cell[0]}.{cell[1]}"


def cell_number(cell: Cell) -> int:
    """``x * 1000 + y``: a cheap dictionary key (y <= 600 < 1000) whose integer order is
    the (x ascending, y ascending) order of SPEC §4.2's last tie-breaks."""
    return cell[0] * 1000 + cell[1]


def number_id(number: int) -> str:
    """The output form ``"x.y"`` of a cell number."""
    return f"{number // 1000}.{number % 1000}"
