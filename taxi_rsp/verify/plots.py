"""The report's figures (matplotlib, Agg), returned as PNG bytes.

Each figure carries a footer naming the data file, its line count and the machine.
Figures with one series per workload, side and query are faceted by workload, with
the legend below the plots, so no line or label hides the data.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from statistics import median

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from taxi_rsp.verify.workloads import Pair

STYLES = {"engine": "-", "baseline": "--"}
COLORS = {"q1": "tab:blue", "q2": "tab:orange"}
MIN_TIME_SAMPLES = 8  # fewer throughput samples than this make no curve worth drawing


def _finish(fig, footer: str, legend_rows: int = 0) -> bytes:
    fig.text(0.01, 0.005, footer, fontsize=7, color="#555555", ha="left", va="bottom")
    bottom = 0.04 + 0.05 * legend_rows
    fig.tight_layout(rect=(0, bottom, 1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _legend_below(fig, axes) -> int:
    """One legend for all facets, below them; returns the rows it takes."""
    handles, labels = {}, []
    for ax in np.atleast_1d(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
    if not labels:
        return 0
    columns = min(4, len(labels))
    fig.legend([handles[l] for l in labels], labels, loc="lower center", ncol=columns, fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 0.03))
    return -(-len(labels) // columns)


def _facets(pairs: Sequence[Pair], height: float = 3.6):
    fig, axes = plt.subplots(1, max(1, len(pairs)), figsize=(max(5.0, 3.6 * len(pairs)), height), squeeze=False)
    return fig, axes[0]


def _series(pair: Pair):
    """(label, side, query, delays) of one workload's first run of each side."""
    for side in ("engine", "baseline"):
        run = getattr(pair, side)
        if run is None:
            continue
        for query in pair.workload.queries:
            delays = run.delays.get(query)
            if delays is not None and delays.size:
                yield f"{side} {query}", side, query, delays


def delay_cdf(pairs: Sequence[Pair], footer: str) -> bytes:
    fig, axes = _facets(pairs)
    for ax, pair in zip(axes, pairs):
        for label, side, query, delays in _series(pair):
            values = np.sort(delays)
            ax.plot(values, np.arange(1, values.size + 1) / values.size, STYLES[side], color=COLORS.get(query),
                    label=label)
        ax.set_xscale("log")
        ax.set_title(pair.workload.name, fontsize=10)
        ax.set_xlabel("delay per output line (ms, log)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction of output lines")
    return _finish(fig, footer, _legend_below(fig, axes))


def delay_over_stream(pairs: Sequence[Pair], footer: str) -> bytes:
    fig, axes = _facets(pairs)
    for ax, pair in zip(axes, pairs):
        for label, side, query, delays in _series(pair):
            ax.plot(np.arange(delays.size), delays, "." if side == "engine" else "x", markersize=2.5, alpha=0.6,
                    color=COLORS.get(query), label=label)
        ax.set_yscale("log")
        ax.set_title(pair.workload.name, fontsize=10)
        ax.set_xlabel("output line, in order")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("delay (ms, log)")
    fig.legends.clear()
    rows = _legend_below(fig, axes)
    for legend in fig.legends:
        for handle in legend.legend_handles:
            handle.set_markersize(8)
            handle.set_alpha(1)
    return _finish(fig, footer, rows)


def throughput(pairs: Sequence[Pair], footer: str) -> bytes:
    """Input lines per second of execution time, engine and baseline side by side (bar:
    median of the runs, whisker: min–max); the engine's read rate over wall time as a
    second panel only when its longest run gave enough samples to show a curve."""
    curves = [p for p in pairs if p.engine is not None and len(p.engine.throughput) >= MIN_TIME_SAMPLES]
    fig, axes = plt.subplots(1, 2 if curves else 1, figsize=(10 if curves else 6.5, 4), squeeze=False)
    bars = axes[0][0]
    x = np.arange(len(pairs))
    for offset, side in ((-0.2, "engine"), (0.2, "baseline")):
        rates = [[r.lines_per_second for r in (p.engines if side == "engine" else p.baselines)
                  if r.lines_per_second] for p in pairs]
        mid = [median(r) if r else np.nan for r in rates]
        low = [m - min(r) if r else 0 for m, r in zip(mid, rates)]
        high = [max(r) - m if r else 0 for m, r in zip(mid, rates)]
        bars.bar(x + offset, mid, 0.4, yerr=[low, high], capsize=3, label=side,
                 color="tab:green" if side == "engine" else "tab:gray")
    bars.set_xticks(x, [p.workload.name for p in pairs])
    bars.set_yscale("log")
    bars.set_ylabel("input lines / s of execution time (log)")
    bars.grid(alpha=0.3, axis="y")
    bars.legend(fontsize=8)
    if curves:
        over = axes[0][1]
        for pair in curves:
            seconds, rate = zip(*pair.engine.throughput)
            over.plot(seconds, rate, label=f"engine {pair.workload.name}")
        over.set_xlabel("wall time (s)")
        over.set_ylabel("input lines / s")
        over.set_title("engine read rate over time", fontsize=10)
        over.grid(alpha=0.3)
        over.legend(fontsize=8)
    return _finish(fig, footer)


def window_sweep(pairs: Sequence[Pair], footer: str, flagged: set[str] | frozenset = frozenset()) -> bytes:
    """Mean delay and run time per window; windows longer than the data (``flagged``
    workload names) are drawn hollow and labelled, since they measure running totals."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    windows = [p.workload.q1_window for p in pairs]
    for side in ("engine", "baseline"):
        runs = [p.engines if side == "engine" else p.baselines for p in pairs]
        if any(not r for r in runs):
            continue
        for query in ("q1", "q2"):
            means = [_median_of(r, lambda run: run.summary["delay_ms"][query]["mean"]) for r in runs]
            left.plot(windows, means, STYLES[side], marker="o", color=COLORS[query], label=f"{side} {query}")
        seconds = [_median_of(r, lambda run: run.summary["exec_seconds"]) for r in runs]
        right.plot(windows, seconds, STYLES[side], marker="s", color="black", label=f"{side} exec")
    for ax, ylabel in ((left, "mean delay (ms, median of runs, log)"), (right, "execution time (s, median, log)")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(windows, [str(w) for w in windows])
        ax.set_xlabel("Q1 window (min); Q2 windows W/2 and W")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        for pair in pairs:
            if pair.workload.name in flagged:
                ax.axvspan(pair.workload.q1_window / 1.2, pair.workload.q1_window * 1.2, color="#f4c7c3", alpha=0.6,
                           zorder=0, label="window > data")
    left.set_yscale("log")
    right.set_yscale("log")
    return _finish(fig, footer, _legend_below(fig, [left, right]))


def _median_of(runs, value) -> float:  # noqa: ANN001 - RunResults and a getter
    present = [v for v in map(value, runs) if v is not None]
    return median(present) if present else np.nan
