"""The driver's side of stage 2: chunk files concatenated in order, summaries merged."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from taxi_rsp.outputs.delay_log import DelayLog
from taxi_rsp.outputs.delays import delay_stats
from taxi_rsp.outputs.summary import data_warnings
from taxi_rsp.scaleout.chunk import ChunkResult, chunk_dir


def concatenate(results: Sequence[ChunkResult], parts: Path, name: str, out: TextIO) -> None:
    """Append every chunk's ``name`` to ``out`` in chunk order (headers are in the first
    chunk's file only, see :mod:`taxi_rsp.scaleout.chunk`)."""
    for result in results:
        with (chunk_dir(parts, result.index) / name).open(encoding="utf-8", newline="") as part:
            shutil.copyfileobj(part, out, 1 << 20)


def _sum(dicts: Sequence[dict[str, int]]) -> dict[str, int]:
    total: Counter = Counter()
    for d in dicts:
        total.update(d)
    # Keep every key of the first dict (zero counts included), in its order.
    return {key: total[key] for key in dict.fromkeys(k for d in dicts for k in d)}


def merged_delay_stats(results: Sequence[ChunkResult], parts: Path, name: str) -> dict:
    """The delay summary of query ``name`` over every chunk's delay file, in chunk order
    (read into a :class:`DelayLog`: bounded memory however long the stream)."""
    log = DelayLog()
    try:
        for result in results:
            with (chunk_dir(parts, result.index) / result.delay_files[name]).open("rb") as handle:
                log.extend_from(handle)
        return delay_stats(log).summary()
    finally:
        log.close()


def merge_summaries(results: Sequence[ChunkResult], parts: Path, exec_seconds: float,
                    windows_ms: dict[str, list[int]]) -> dict:
    """The run summary of `taxi-rsp run` (its counts, delays and warnings) from the
    chunks' results and their files under ``parts``; ``windows_ms``: the RANGE windows of
    each query, for the warnings."""
    accepted = sum(r.accepted for r in results)
    names = list(results[0].emitted)
    times = [t for r in results for t in (r.first_time, r.last_time) if t is not None]
    span_ms = max(times) - min(times) if times else None
    lines_read = sum(r.lines_read for r in results)
    return {
        "lines_read": lines_read,
        "accepted": accepted,
        "rejected": _sum([r.rejected for r in results]),
        "outliers": _sum([r.outliers for r in results]),
        "profit_excluded": sum(r.profit_excluded for r in results),
        "emitted": {name: sum(r.emitted[name] for r in results) for name in names},
        "exec_seconds": round(exec_seconds, 6),
        "events_per_second": round(accepted / exec_seconds, 1) if exec_seconds > 0 else None,
        "delay_ms": {name: merged_delay_stats(results, parts, name) for name in names},
        "engine_state_rows": dict(results[-1].state_rows),  # the state at the end of input
        "warnings": data_warnings(lines_read, span_ms, windows_ms),
    }


def chunk_figures(results: Sequence[ChunkResult]) -> list[dict]:
    """Per-chunk lines and times, for docs/scaling.md."""
    return [{
        "index": r.index,
        "lines": r.lines_read,
        "warm_lines": r.warm_lines,
        "warm_seconds": round(r.warm_seconds, 3),
        "warm_cpu_seconds": round(r.warm_cpu_seconds, 3),
        "run_seconds": round(r.run_seconds, 3),
        "run_cpu_seconds": round(r.run_cpu_seconds, 3),
        "rss_mib": r.rss_mib,
    } for r in results]
