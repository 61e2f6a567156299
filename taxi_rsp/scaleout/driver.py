"""`taxi-rsp run INPUT --out DIR --spark`: the driver of a time-partitioned run.

Stage 1 scans the byte ranges in parallel (line counts, drop-off maxima, checkpoints);
the driver plans one exact task per range; stage 2 runs the chunks in parallel; the
driver concatenates their files into the output folder, atomically like `taxi-rsp run`.
On a cluster the input and the output folder must be on storage all executors share.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from taxi_rsp.baseline.session import DEFAULT_MASTER, spark_session
from taxi_rsp.errors import UserError
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.runner import RunConfig
from taxi_rsp.scaleout.chunk import run_chunk
from taxi_rsp.scaleout.job import Job, build_session, longest_window_ms
from taxi_rsp.scaleout.merge import chunk_figures, concatenate, merge_summaries
from taxi_rsp.scaleout.plan import plan_chunks
from taxi_rsp.scaleout.scan import CHECKPOINT_SPACING, scan_range
from taxi_rsp.scaleout.slices import ranges_at_lines, split_ranges

# Applies a function to every item, in parallel or not, and returns the results in order.
Mapper = Callable[[Callable[[Any], Any], list], list]


def local_map(function: Callable[[Any], Any], items: list) -> list:
    """The in-process mapper (tests, and a reference for the Spark one)."""
    return [function(item) for item in items]


def spark_map(context) -> Mapper:
    """A mapper running one Spark task per item."""
    def apply(function: Callable[[Any], Any], items: list) -> list:
        return context.parallelize(items, max(1, len(items))).map(function).collect()
    return apply


def _check_input(path: Path) -> None:
    if not path.is_file():
        raise UserError(f"input file {path} does not exist or is not a file")
    try:
        path.open("rb").close()
    except OSError as exc:
        raise UserError(f"cannot read input {path}: {exc.strerror}") from None


def run_spark(config: RunConfig, master: str = DEFAULT_MASTER, partitions: int | None = None,
              report: Callable[[str], None] = lambda line: None, cut_lines: Sequence[int] | None = None,
              driver_memory: str = "2g") -> dict:
    """Run the queries of ``config`` time-partitioned on Spark; returns the summary
    (also written as summary.json). ``partitions``: chunk count (default: Spark's
    default parallelism); ``cut_lines``: chunk first lines instead (tests)."""
    _check_input(config.input)
    if partitions is not None and partitions < 1:
        raise UserError("--partitions must be a positive number")
    Job.from_config(config)  # bad queries fail before Spark starts
    started = time.perf_counter()
    context = spark_session(master, app_name="taxi-rsp-scaleout", driver_memory=driver_memory).sparkContext
    spark_start = time.perf_counter() - started
    return run_partitioned(config, spark_map(context), partitions or context.defaultParallelism, report,
                           cut_lines, {"master": master, "spark_start_seconds": round(spark_start, 3)})


def run_partitioned(config: RunConfig, mapper: Mapper, chunks: int,
                    report: Callable[[str], None] = lambda line: None,
                    cut_lines: Sequence[int] | None = None, figures: dict | None = None,
                    checkpoint_spacing: int = CHECKPOINT_SPACING) -> dict:
    """The time-partitioned run with any ``mapper`` (Spark's or :func:`local_map`);
    ``figures`` are added to the summary's ``scaleout`` section; checkpoints (possible
    warm-up starts) are about ``checkpoint_spacing`` bytes apart."""
    _check_input(config.input)
    job = Job.from_config(config)
    names: list[str] = []

    def probe_file(name: str) -> io.StringIO:
        names.append(name)  # the files a chunk writes, in the order `taxi-rsp run` opens them
        return io.StringIO()

    probe = build_session(job, probe_file)  # also checks the queries before any work
    longest = longest_window_ms(probe)
    windows = {info.name: info.range_windows_ms() for info in probe.infos}
    if config.explain:
        for info in probe.infos:
            report(probe.explain(info.name))

    outputs = AtomicOutputs(config.out)
    parts = Path(tempfile.mkdtemp(prefix=".scaleout-", dir=config.out))
    try:
        with outputs:
            handles = {name: outputs.open(name) for name in [*names, "rejects.csv"]}
            outputs.claim(config.force, protect=[config.input, *config.static])
            started = time.perf_counter()
            path = str(config.input)
            ranges = (ranges_at_lines(config.input, list(cut_lines)) if cut_lines is not None
                      else split_ranges(config.input, chunks))
            report(f"stage 1/2: scanning {len(ranges)} byte ranges of {config.input}")
            scans = mapper(lambda r: scan_range(path, *r, checkpoint_spacing), ranges)
            tasks = plan_chunks(scans, longest)
            scanned = time.perf_counter()
            report(f"stage 2/2: {sum(s.lines for s in scans):,} lines scanned in {scanned - started:.1f} s; "
                   f"running {len(tasks)} chunks, each warmed up over the longest window ({longest / 60_000:g} min)")
            folder = str(parts)
            results = mapper(lambda t: run_chunk(job, t, folder), tasks)
            replayed = time.perf_counter()
            report(f"chunks done in {replayed - scanned:.1f} s; concatenating their outputs in order")
            for name, handle in handles.items():
                concatenate(results, parts, name, handle)
            outputs.commit()
            finished = time.perf_counter()
            summary = merge_summaries(results, parts, finished - started, windows)
            if summary["lines_read"] != sum(s.lines for s in scans):  # the two stages must agree
                raise RuntimeError(f"chunks read {summary['lines_read']} lines, the scan counted "
                                   f"{sum(s.lines for s in scans)}")
            summary["scaleout"] = {
                **(figures or {}),
                "chunks": len(tasks),
                "longest_window_ms": longest,
                "scan_seconds": round(scanned - started, 3),
                "scan_cpu_seconds": round(sum(s.cpu_seconds for s in scans), 3),
                "replay_seconds": round(replayed - scanned, 3),
                "concat_seconds": round(finished - replayed, 3),
                "per_chunk": chunk_figures(results),
            }
            outputs.commit_summary(summary)
            return summary
    finally:
        shutil.rmtree(parts, ignore_errors=True)
