"""The map background: where trips start, counted per 250 m cell from the input itself.

Counting pickups per Q2 cell draws the city without map tiles: Manhattan's avenues, the
bridges and the two airports stand out from the rest of the grid. Lines that are not
17 fields or whose pickup is not a number or lies outside the grid are skipped (they are
background, not answers; the run's rejects file accounts for them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from taxi_rsp.viz.grid import Q2, MapGrid, parse_nano

PICKUP_LON, PICKUP_LAT = 6, 7  # SPEC §1 field positions
FIELDS = 17


@dataclass(frozen=True)
class Density:
    """Pickups per cell of ``grid``: ``counts[y - 1, x - 1]``; ``lines`` read to get it."""

    grid: MapGrid
    counts: np.ndarray
    lines: int

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def sparse(self) -> dict[str, list[int]]:
        """The non-empty cells as three parallel lists (x, y, count), for the live page."""
        ys, xs = np.nonzero(self.counts)
        return {"x": (xs + 1).tolist(), "y": (ys + 1).tolist(), "n": self.counts[ys, xs].tolist()}


def pickup_density(path: Path, grid: MapGrid = Q2, max_lines: int | None = None) -> Density:
    """Count the pickups of the first ``max_lines`` lines (all when None) per cell."""
    counts = np.zeros((grid.cells, grid.cells), dtype=np.int64)
    lines = 0
    with path.open("rb") as handle:
        for raw in handle:
            if max_lines is not None and lines >= max_lines:
                break
            lines += 1
            fields = raw.split(b",")
            if len(fields) != FIELDS:
                continue
            lon = parse_nano(fields[PICKUP_LON].decode("ascii", "replace"))
            lat = parse_nano(fields[PICKUP_LAT].decode("ascii", "replace"))
            cell = grid.cell_of(lon, lat) if lon is not None and lat is not None else None
            if cell is not None:
                counts[cell[1] - 1, cell[0] - 1] += 1
    return Density(grid, counts, lines)


@dataclass(frozen=True)
class Extent:
    """A drawing window in degrees."""

    west: float
    south: float
    east: float
    north: float

    def as_dict(self) -> dict[str, float]:
        return {"west": self.west, "south": self.south, "east": self.east, "north": self.north}

    def including(self, lon: float, lat: float, margin: float = 0.01) -> Extent:
        return Extent(min(self.west, lon - margin), min(self.south, lat - margin),
                      max(self.east, lon + margin), max(self.north, lat + margin))


# Without data: midtown and lower Manhattan, Brooklyn and Queens up to both airports.
NEW_YORK = Extent(-74.05, 40.62, -73.75, 40.86)


def busy_extent(density: Density, share: float = 0.995) -> Extent:
    """The smallest window of whole cells that holds ``share`` of the pickups (cut evenly
    from each side), with a 1 km margin; New York's centre when there are none. Outliers
    such as (0, 0) never enter: they are outside the grid."""
    if density.total == 0:
        return NEW_YORK
    cut = (1 - share) / 2
    grid = density.grid
    cols = np.cumsum(density.counts.sum(axis=0)) / density.total
    rows = np.cumsum(density.counts.sum(axis=1)) / density.total
    x0, x1 = int(np.searchsorted(cols, cut)) + 1, int(np.searchsorted(cols, 1 - cut)) + 1
    y0, y1 = int(np.searchsorted(rows, cut)) + 1, int(np.searchsorted(rows, 1 - cut)) + 1
    margin = 4  # cells of 250 m: 1 km
    x0, y0 = max(1, x0 - margin), max(1, y0 - margin)
    x1, y1 = min(grid.cells, x1 + margin), min(grid.cells, y1 + margin)
    return Extent(grid.column_edge(x0), grid.row_edge(y1 + 1), grid.column_edge(x1 + 1), grid.row_edge(y0))
