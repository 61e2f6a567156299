"""The baseline run: read on Spark, recompute every instant of each query, write files.

Writes the same files as ``taxi-rsp run`` (SPEC §5): ``q1.csv``/``q2.csv``, ``rejects.csv``
and ``summary.json`` (last). The summary adds ``recompute_ms`` per query (statistics of
the recompute time over *all* evaluation instants, emitted or not) and ``instants``.

Several inputs can share one batch of Spark jobs (:func:`run_batch`): each file is a
``stream`` and every computation is per stream; this is what makes the many small
inputs of the tests affordable. ``exec_seconds`` is then the time of the whole batch.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from taxi_rsp.baseline.evaluate import RESULT_DDL, QuerySpec, chunk_function
from taxi_rsp.baseline.instants import evaluation_instants, split_into_chunks
from taxi_rsp.baseline.reader import read_trips
from taxi_rsp.baseline.topk import SELF_CHECK_FAILED
from taxi_rsp.errors import UserError
from taxi_rsp.spec import REJECT_REASONS, REJECTS_HEADER
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.outputs.delays import delay_stats
from taxi_rsp.outputs.summary import data_warnings

MINUTE = 60
QUERY_COLUMNS = {
    "q1": ("stream", "seq", "dropoff", "q1_pickup", "q1_dropoff"),
    "q2": ("stream", "seq", "dropoff", "medallion", "q2_pickup", "q2_dropoff", "profit_cents"),
}
VALID_COLUMN = {"q1": "q1_pickup", "q2": "q2_pickup"}  # null exactly for the query's outliers


@dataclass(frozen=True)
class BaselineSettings:
    """What to compute; windows in minutes, ``chunks`` = 0 picks 4 per Spark core."""

    queries: Sequence[str] = ("q1", "q2")
    q1_window_min: int = 30
    q2_windows_min: tuple[int, int] = (15, 30)
    chunks: int = 0

    def specs(self) -> list[QuerySpec]:
        windows = {"q1": (self.q1_window_min * MINUTE,),
                   "q2": tuple(w * MINUTE for w in self.q2_windows_min)}
        return [QuerySpec(name, windows[name]) for name in self.queries]


Report = Callable[[str], None]


def run_baseline(input_path: Path, out: Path, settings: BaselineSettings, spark: SparkSession,
                 report: Report = lambda line: None, force: bool = False) -> dict:
    """Run the baseline on one file; returns the summary also written as summary.json.
    ``force``: remove output-like files in ``out`` this run does not write (else refuse)."""
    return run_batch([(input_path, out)], settings, spark, report, force)[0]


def run_batch(jobs: Sequence[tuple[Path, Path]], settings: BaselineSettings, spark: SparkSession,
              report: Report = lambda line: None, force: bool = False) -> list[dict]:
    """Run the baseline on several (input file, output folder) pairs in one set of jobs."""
    for input_path, _ in jobs:
        if not input_path.is_file():
            raise UserError(f"input file {input_path} does not exist or is not a file")
    unknown = sorted(set(settings.queries) - set(QUERY_COLUMNS))
    if unknown or not settings.queries:
        raise UserError(f"the baseline answers q1 and q2 only (got {', '.join(unknown) or 'none'})")
    writing = [*(f"{name}.csv" for name in settings.queries), "rejects.csv"]
    folders = [AtomicOutputs(out) for _, out in jobs]
    try:
        # Every file is open before any work, so a folder holding files this run would not
        # rewrite refuses the run (unless ``force``) before Spark reads anything.
        files = [{name: folder.open(name) for name in writing} for folder in folders]
        for folder, (input_path, _) in zip(folders, jobs):
            folder.claim(force, protect=[input_path])
        started = time.perf_counter()
        read = read_trips(spark, [input_path.resolve() for input_path, _ in jobs])
        summaries, bounds = _counts(read.trips, read.rejects, len(jobs))
        windows_ms = {spec.name: [w * 1000 for w in spec.windows_s] for spec in settings.specs()}
        for stream, summary in enumerate(summaries):  # same warnings as `taxi-rsp run` (docs/semantics.md)
            first, last = bounds.get(stream, (None, None))
            span_ms = None if first is None else (last - first) * 1000
            summary["warnings"] = data_warnings(summary["lines_read"], span_ms, windows_ms)
        report(f"read {sum(s['lines_read'] for s in summaries):,} lines: "
               f"{sum(s['accepted'] for s in summaries):,} accepted")
        chunks = settings.chunks or 4 * spark.sparkContext.defaultParallelism
        for summary in summaries:
            summary.update(emitted={}, delay_ms={}, recompute_ms={}, instants={})
        for spec in settings.specs():
            try:
                per_stream = _run_query(spark, read.trips, spec, bounds, chunks,
                                        [handles[f"{spec.name}.csv"] for handles in files])
            except Exception as exc:  # a worker's self-check arrives wrapped in Spark's error
                error = _self_check_error(exc)
                if error is None:
                    raise
                raise error from None
            for summary, stats in zip(summaries, per_stream):
                for key, value in stats.items():
                    summary[key][spec.name] = value
            report(f"{spec.name}: {sum(s['instants'] for s in per_stream):,} instants recomputed, "
                   f"{sum(s['emitted'] for s in per_stream):,} lines")
        _write_rejects(read.rejects, [handles["rejects.csv"] for handles in files])
        exec_seconds = round(time.perf_counter() - started, 6)
        for summary, folder in zip(summaries, folders):
            summary.update(exec_seconds=exec_seconds, batch_size=len(jobs), chunks=chunks,
                           master=spark.sparkContext.master)
            folder.commit("summary.json", json.dumps(summary, indent=2) + "\n")
        read.trips.unpersist()
        read.rejects.unpersist()
        return summaries
    except BaseException:
        for folder in folders:
            folder.abort()
        raise


def _self_check_error(exc: Exception) -> UserError | None:
    """The one-line message of a :class:`SelfCheckError` raised in a Python worker."""
    for line in str(exc).splitlines():
        if SELF_CHECK_FAILED in line:
            return UserError(line[line.index(SELF_CHECK_FAILED):].strip())
    return None


def _counts(trips: DataFrame, rejects: DataFrame, streams: int) -> tuple[list[dict], dict[int, tuple[int, int]]]:
    """Per stream: the SPEC §5 counts, and (first, last) drop-off time when it has trips."""
    rows = {row["stream"]: row for row in trips.groupBy("stream").agg(
        F.count(F.lit(1)).alias("accepted"),
        F.count_if(F.col("q1_pickup").isNull()).alias("q1"),
        F.count_if(F.col("q2_pickup").isNull()).alias("q2"),
        F.count_if(F.col("profit_cents").isNull()).alias("profit_excluded"),
        F.min("dropoff").alias("first"), F.max("dropoff").alias("last")).collect()}
    by_reason = {(row["stream"], row["reason"]): row["count"]
                 for row in rejects.groupBy("stream", "reason").count().collect()}
    summaries = []
    for stream in range(streams):
        row = rows.get(stream)
        rejected = {reason: int(by_reason.get((stream, reason), 0)) for reason in REJECT_REASONS}
        accepted = row["accepted"] if row else 0
        summaries.append({
            "lines_read": accepted + sum(rejected.values()),
            "accepted": accepted,
            "rejected": rejected,
            "outliers": {"q1": row["q1"] if row else 0, "q2": row["q2"] if row else 0},
            "profit_excluded": row["profit_excluded"] if row else 0,
        })
    bounds = {stream: (row["first"], row["last"]) for stream, row in rows.items()}
    return summaries, bounds


def _run_query(spark: SparkSession, trips: DataFrame, spec: QuerySpec, bounds: dict[int, tuple[int, int]],
               chunks: int, handles: Sequence[TextIO]) -> list[dict]:
    """Recompute every instant of one query, write its file per stream (``handles``);
    returns per-stream statistics."""
    valid = trips.where(F.col(VALID_COLUMN[spec.name]).isNotNull()).select(*QUERY_COLUMNS[spec.name])
    instants = evaluation_instants(trips, valid, spec.windows_s).cache()  # used three times below
    parts = split_into_chunks(spark, instants, valid, bounds, spec.longest_s, chunks)
    results = (parts.instants.groupBy("stream", "chunk")
               .cogroup(parts.trips.groupBy("stream", "chunk"))
               .applyInPandas(chunk_function(spec), RESULT_DDL)
               .cache())
    emitted = [0] * len(handles)
    try:
        timings = results.select("stream", "recompute_ms", "delay_ms").toArrow()
        lines = (results.where(F.col("line").isNotNull())
                 .orderBy("stream", "time", "seq").select("stream", "line"))
        for row in lines.toLocalIterator():
            handles[row["stream"]].write(row["line"] + "\n")
            emitted[row["stream"]] += 1
    finally:
        results.unpersist()
        instants.unpersist()
    streams = timings.column("stream").to_numpy()
    recompute = timings.column("recompute_ms").to_numpy()
    delays = timings.column("delay_ms").to_numpy(zero_copy_only=False)
    stats = []
    for stream in range(len(handles)):
        mine = streams == stream
        stats.append({
            "emitted": emitted[stream],
            "delay_ms": delay_stats(delays[mine]).summary(),  # NaN: an instant without a line
            "recompute_ms": delay_stats(recompute[mine]).summary(),
            "instants": int(mine.sum()),
        })
    return stats


def _write_rejects(rejects: DataFrame, handles: Sequence[TextIO]) -> None:
    writers = []
    for handle in handles:
        handle.write(REJECTS_HEADER + "\n")
        writers.append(csv.writer(handle, lineterminator="\n"))
    for row in rejects.orderBy("stream", "line_no").toLocalIterator():
        writers[row["stream"]].writerow((row["line_no"], row["reason"], row["raw_line"]))
