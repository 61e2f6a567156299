"""The report's figures (matplotlib, Agg), returned as PNG bytes.

Each figure carries a footer naming the data file, its line count and the machine.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from taxi_rsp.verify.workloads import Pair

STYLES = {"engine": "-", "baseline": "--"}


def _finish(fig, footer: str) -> bytes:
    fig.text(0.01, 0.005, footer, fontsize=7, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _series(pairs: Sequence[Pair]):
    """(label, side, delays) for every query of every workload that has delays."""
    for pair in pairs:
        for side in ("engine", "baseline"):
            run = getattr(pair, side)
            if run is None:
                continue
            for query in pair.workload.queries:
                delays = run.delays.get(query)
                if delays is not None and delays.size:
                    yield f"{side} {pair.workload.name}:{query}", side, delays


def delay_cdf(pairs: Sequence[Pair], footer: str) -> bytes:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, side, delays in _series(pairs):
        values = np.sort(delays)
        ax.plot(values, np.arange(1, values.size + 1) / values.size, STYLES[side], label=label)
    ax.set_xscale("log")
    ax.set_xlabel("delay per output line (ms, log scale)")
    ax.set_ylabel("fraction of output lines")
    ax.set_title("Delay distribution (CDF)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _finish(fig, footer)


def delay_over_stream(pairs: Sequence[Pair], footer: str) -> bytes:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, side, delays in _series(pairs):
        ax.plot(np.arange(delays.size), delays, ".", markersize=2, alpha=0.5, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("output line (arrival-triggered lines, in order)")
    ax.set_ylabel("delay (ms, log scale)")
    ax.set_title("Delay over the stream")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, markerscale=4)
    return _finish(fig, footer)


def throughput(pairs: Sequence[Pair], footer: str) -> bytes:
    """Engine: input lines read per second over wall time (sampled from /proc);
    baseline: evaluation instants recomputed per second of recompute, over the run."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for pair in pairs:
        if pair.engine is not None and pair.engine.throughput:
            seconds, rate = zip(*pair.engine.throughput)
            left.plot(seconds, rate, label=f"engine {pair.workload.name}")
    left.set_xlabel("wall time (s)")
    left.set_ylabel("input lines / s")
    left.set_title("Engine throughput over time")
    left.grid(alpha=0.3)
    if left.lines:
        left.legend(fontsize=7)
    else:
        left.text(0.5, 0.5, "engine side missing", ha="center", va="center", transform=left.transAxes)
    for pair in pairs:
        summary = pair.baseline.summary
        names = ", ".join(f"{q}: {summary['instants'][q]:,}" for q in pair.workload.queries)
        means = [summary["recompute_ms"][q]["mean"] for q in pair.workload.queries]
        rate = 1000 / sum(m for m in means if m)  # one instant of every query per step
        right.bar(pair.workload.name, rate, label=names)
    right.set_ylabel("instants / s of recompute")
    right.set_title("Baseline recompute throughput")
    right.grid(alpha=0.3, axis="y")
    right.legend(fontsize=7, title="instants", title_fontsize=7)
    return _finish(fig, footer)


def window_sweep(pairs: Sequence[Pair], footer: str) -> bytes:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    windows = [p.workload.q1_window for p in pairs]
    for side in ("engine", "baseline"):
        runs = [getattr(p, side) for p in pairs]
        if any(r is None for r in runs):
            continue
        for query in ("q1", "q2"):
            means = [r.summary["delay_ms"][query]["mean"] or np.nan for r in runs]
            left.plot(windows, means, STYLES[side], marker="o", label=f"{side} {query}")
        right.plot(windows, [r.summary["exec_seconds"] for r in runs], STYLES[side], marker="o", label=side)
    for ax, ylabel, title in ((left, "mean delay (ms, log scale)", "Delay per window"),
                              (right, "execution time (s)", "Run time per window")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(windows, [str(w) for w in windows])
        ax.set_xlabel("Q1 window (min); Q2 windows W/2 and W")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    left.set_yscale("log")
    return _finish(fig, footer)
