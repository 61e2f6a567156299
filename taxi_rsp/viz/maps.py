"""Matplotlib maps of the answers (no tiles: the background is the input's own pickups).

Every map is drawn in longitude/latitude with the aspect of a flat earth at New York's
latitude (1° of longitude is cos 40.75° of 1° of latitude), the 250 m density cells as
the background and the 500 m Q1 grid as faint lines, so cells sit where the engine
computed them (geometry: ``taxi_rsp.viz.grid``).
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from taxi_rsp.viz.answers import Answer, Area, Route  # noqa: E402
from taxi_rsp.viz.density import Density, Extent  # noqa: E402
from taxi_rsp.viz.grid import Q1, Q2, parse_cell  # noqa: E402

ASPECT = 1 / math.cos(math.radians(40.75))
RANK_COLOURS = plt.get_cmap("plasma")(np.linspace(0.0, 0.85, 10))  # rank 1 dark purple … rank 10 orange


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


def draw_background(ax, density: Density, extent: Extent, labels: bool = True) -> None:
    """Pickups per 250 m cell (log grey scale), the Q1 grid lines, axes in degrees."""
    grid = density.grid
    x0 = max(1, math.floor(grid.column_at(extent.west)))
    x1 = min(grid.cells, math.ceil(grid.column_at(extent.east)))
    y0 = max(1, math.floor(grid.row_at(extent.north)))
    y1 = min(grid.cells, math.ceil(grid.row_at(extent.south)))
    counts = density.counts[y0 - 1:y1, x0 - 1:x1].astype(float)
    lons = [grid.column_edge(x) for x in range(x0, x1 + 2)]
    lats = [grid.row_edge(y) for y in range(y0, y1 + 2)]
    masked = np.ma.masked_less(counts, 1)
    if masked.count():
        ax.pcolormesh(lons, lats, masked, cmap="Greys", norm=LogNorm(vmin=1, vmax=max(2, counts.max())),
                      shading="flat", alpha=0.55, rasterized=True)
    for x in range(math.floor(Q1.column_at(extent.west)), math.ceil(Q1.column_at(extent.east)) + 1):
        ax.axvline(Q1.column_edge(x), color="#4a6fa5", lw=0.25, alpha=0.25)
    for y in range(math.floor(Q1.row_at(extent.north)), math.ceil(Q1.row_at(extent.south)) + 1):
        ax.axhline(Q1.row_edge(y), color="#4a6fa5", lw=0.25, alpha=0.25)
    ax.set_xlim(extent.west, extent.east)
    ax.set_ylim(extent.south, extent.north)
    ax.set_aspect(ASPECT)
    if labels:
        ax.set_xlabel("longitude (°E)")
        ax.set_ylabel("latitude (°N)")
    ax.ticklabel_format(useOffset=False)


def draw_routes(ax, routes: Sequence[Route], counts: Counter | None, labels: bool = True,
                scale: float = 1.0) -> None:
    """Arrows from start-cell centre to end-cell centre, width by trip count, coloured and
    labelled by rank; a route that starts and ends in one cell is a ring on that cell."""
    most = max((counts[(r.start, r.end)] for r in routes), default=1) if counts else 1
    for route in reversed(routes):  # rank 1 on top
        (sx, sy), (ex, ey) = parse_cell(route.start), parse_cell(route.end)  # type: ignore[misc]
        (lon0, lat0), (lon1, lat1) = Q1.centre(sx, sy), Q1.centre(ex, ey)
        count = counts[(route.start, route.end)] if counts else 0
        width = scale * (1.0 + 5.0 * (count / most if most else 0))
        colour = RANK_COLOURS[route.rank - 1]
        if (sx, sy) == (ex, ey):
            ax.plot(lon0, lat0, "o", ms=scale * 6 + 2 * width, mfc="none", mec=colour, mew=width * 0.6)
        else:
            ax.annotate("", xy=(lon1, lat1), xytext=(lon0, lat0),
                        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": width, "shrinkA": 0,
                                    "shrinkB": 0, "mutation_scale": scale * 8 + 2 * width})
        if labels:
            ax.text(lon0, lat0, str(route.rank), fontsize=7, fontweight="bold", color="white", ha="center",
                    va="center", bbox={"boxstyle": "circle,pad=0.15", "fc": colour, "ec": "none"})


def draw_areas(ax, areas: Sequence[Area], labels: bool = True) -> None:
    """The profitable cells as squares of their exact 250 m extent, coloured by rank."""
    for area in reversed(areas):
        x, y = parse_cell(area.cell)  # type: ignore[misc]
        west, south, east, north = Q2.bounds(x, y)
        colour = RANK_COLOURS[area.rank - 1]
        ax.add_patch(Rectangle((west, south), east - west, north - south, fc=colour, ec="black", lw=0.6,
                               alpha=0.9))
        if labels:
            ax.text(east + 0.0008, north, str(area.rank), fontsize=7, color="black", ha="left", va="top",
                    fontweight="bold")


def _including(extent: Extent, points: list[tuple[float, float]]) -> Extent:
    for lon, lat in points:
        extent = extent.including(lon, lat, 0.004)
    return extent


def _footer(fig, text: str) -> None:
    fig.text(0.01, 0.01, text, fontsize=7, color="#555")


def q1_map(answer: Answer, counts: Counter, density: Density, extent: Extent, title: str, footer: str) -> bytes:
    """The whole busy area (left) and a zoom on the routes (right, with rank labels)."""
    routes = answer.entries
    points = [Q1.centre(*parse_cell(c)) for r in routes for c in (r.start, r.end)]  # type: ignore[misc]
    extent = _including(extent, points)
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(13, 7.2), gridspec_kw={"width_ratios": [1, 1.25]})
    draw_background(ax, density, extent)
    draw_routes(ax, routes, counts, labels=False, scale=0.6)
    ax.set_title("the busy area", fontsize=9)
    if points:
        lons, lats = [p[0] for p in points], [p[1] for p in points]
        pad = 0.008
        near = Extent(min(lons) - pad, min(lats) - pad, max(lons) + pad, max(lats) + pad)
        ax.add_patch(Rectangle((near.west, near.south), near.east - near.west, near.north - near.south,
                               fill=False, ec="#d62728", lw=1))
    else:
        near = extent
    draw_background(zoom, density, near)
    draw_routes(zoom, routes, counts)
    zoom.set_title("zoom on the routes (red box)", fontsize=9)
    legend = "\n".join(f"{r.rank:>2}. {r.start} → {r.end}: {counts[(r.start, r.end)]} trips" for r in routes)
    zoom.text(1.02, 1.0, legend or "no route", transform=zoom.transAxes, fontsize=7, va="top", family="monospace",
              bbox={"fc": "white", "ec": "#999", "alpha": 0.85})
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _footer(fig, footer)
    return _png(fig)


def q2_map(answer: Answer, density: Density, extent: Extent, title: str, footer: str) -> bytes:
    areas = answer.entries
    extent = _including(extent, [Q2.centre(*parse_cell(a.cell)) for a in areas])
    fig, (ax, side) = plt.subplots(1, 2, figsize=(12, 8), gridspec_kw={"width_ratios": [2.2, 1]})
    draw_background(ax, density, extent)
    draw_areas(ax, areas)
    ax.set_title(title, fontsize=10)
    side.axis("off")
    rows = [[str(a.rank), a.cell, a.profit, a.empty, a.profitability] for a in areas]
    if rows:
        table = side.table(cellText=rows, colLabels=["rank", "cell", "median profit ($)", "empty taxis",
                                                     "profitability"], loc="upper center", cellLoc="right")
        table.auto_set_font_size(False)
        table.set_fontsize(8)
        table.scale(1, 1.4)
        for i, area in enumerate(areas, 1):
            table[i, 0].set_facecolor(RANK_COLOURS[area.rank - 1])
            table[i, 0].get_text().set_color("white")
    else:
        side.text(0.5, 0.9, "no cell ranked", ha="center")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    _footer(fig, footer)
    return _png(fig)


def strip(panels: list[tuple[str, Answer | None, Answer | None, Counter]], density: Density, extent: Extent,
          footer: str) -> bytes:
    """Small multiples: at each instant, Q1's routes (arrows) and Q2's cells (squares)."""
    columns = min(len(panels), 6)
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(2.6 * columns, 2.9 * rows + 0.4), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (instant, q1, q2, counts) in zip(axes.flat, panels):
        draw_background(ax, density, extent, labels=False)
        if q2 is not None:
            draw_areas(ax, q2.entries, labels=False)
        if q1 is not None:
            draw_routes(ax, q1.entries, counts, labels=False, scale=0.35)
        ax.set_title(instant, fontsize=8)
        ax.tick_params(labelsize=5)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    _footer(fig, footer)
    return _png(fig)
