"""What every page draws first: both grids' constants, a drawing extent and the pickup
density of the input (or none), as one JSON document."""

from __future__ import annotations

from pathlib import Path

from taxi_rsp.viz.density import NEW_YORK, busy_extent, pickup_density
from taxi_rsp.viz.grid import Q1, Q2, MapGrid

DENSITY_LINES = 200_000  # enough lines to draw the city; reading them takes about a second


def _grid(grid: MapGrid) -> dict:
    return {"lon_step": grid.lon_step, "lat_step": grid.lat_step, "west": grid.west, "north": grid.north,
            "cells": grid.cells}


def background(data: Path | None, max_lines: int = DENSITY_LINES) -> dict:
    """The page's background: grids, extent, and the pickups per 250 m cell of the first
    ``max_lines`` lines of ``data`` (a FIFO or a missing file: no density)."""
    doc: dict = {"grids": {"q1": _grid(Q1), "q2": _grid(Q2)}, "extent": NEW_YORK.as_dict(), "density": None}
    if data is None or not data.is_file():
        return doc
    density = pickup_density(data, Q2, max_lines)
    doc["extent"] = busy_extent(density).as_dict()
    doc["density"] = {**density.sparse(), "lines": density.lines, "source": data.name}
    return doc
