"""The baseline run: read on Spark, recompute every instant of each query, write files.

Writes the same files as ``taxi-rsp run`` (SPEC §5): ``q1.csv``/``q2.csv``, ``rejects.csv``
and ``summary.json`` (last). The summary adds ``recompute_ms`` per query: statistics of
the recompute time over *all* evaluation instants, emitted or not.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from taxi_rsp.baseline.evaluate import RESULT_DDL, QuerySpec, chunk_function
from taxi_rsp.baseline.instants import evaluation_instants, split_into_chunks
from taxi_rsp.baseline.outputs import OutputFolder
from taxi_rsp.baseline.reader import read_trips
from taxi_rsp.errors import UserError
from taxi_rsp.spec import REJECT_REASONS, REJECTS_HEADER
from taxi_rsp.verify.delays import delay_stats

MINUTE = 60
QUERY_COLUMNS = {
    "q1": ("seq", "dropoff", "q1_pickup", "q1_dropoff"),
    "q2": ("seq", "dropoff", "medallion", "q2_pickup", "q2_dropoff", "profit_cents"),
}
VALID_COLUMN = {"q1": "q1_pickup", "q2": "q2_pickup"}  # null exactly for the query's outliers


@dataclass(frozen=True)
class BaselineConfig:
    """One baseline run; windows in minutes, ``chunks`` = 0 picks 4 per Spark core."""

    input: Path
    out: Path
    queries: Sequence[str] = ("q1", "q2")
    q1_window_min: int = 30
    q2_windows_min: tuple[int, int] = (15, 30)
    chunks: int = 0
    extra: dict = field(default_factory=dict)

    def specs(self) -> list[QuerySpec]:
        windows = {"q1": (self.q1_window_min * MINUTE,),
                   "q2": tuple(w * MINUTE for w in self.q2_windows_min)}
        return [QuerySpec(name, windows[name]) for name in self.queries]


def run_baseline(config: BaselineConfig, spark: SparkSession,
                 report: Callable[[str], None] = lambda line: None) -> dict:
    """Run the baseline; returns the summary that is also written as summary.json."""
    if not config.input.is_file():
        raise UserError(f"input file {config.input} does not exist or is not a file")
    unknown = sorted(set(config.queries) - set(QUERY_COLUMNS))
    if unknown or not config.queries:
        raise UserError(f"the baseline answers q1 and q2 only (got {', '.join(unknown) or 'none'})")
    folder = OutputFolder(config.out)
    try:
        started = time.perf_counter()
        read = read_trips(spark, config.input.resolve())
        summary = _counts(read.trips, read.rejects)
        report(f"read {summary['lines_read']:,} lines: {summary['accepted']:,} accepted")
        chunks = config.chunks or 4 * spark.sparkContext.defaultParallelism
        summary.update(emitted={}, delay_ms={}, recompute_ms={}, instants={})
        for spec in config.specs():
            stats = _run_query(spark, read.trips, spec, chunks, folder)
            for key, value in stats.items():
                summary[key][spec.name] = value
            report(f"{spec.name}: {stats['instants']:,} instants recomputed, {stats['emitted']:,} lines")
        _write_rejects(read.rejects, folder)
        summary["exec_seconds"] = round(time.perf_counter() - started, 6)
        summary["chunks"] = chunks
        summary["master"] = spark.sparkContext.master
        folder.commit(json.dumps(summary, indent=2) + "\n")
        read.trips.unpersist()
        read.rejects.unpersist()
        return summary
    except BaseException:
        folder.abort()
        raise


def _counts(trips: DataFrame, rejects: DataFrame) -> dict:
    """lines_read, accepted, rejected per reason, outliers per query, profit_excluded."""
    row = trips.agg(F.count(F.lit(1)).alias("accepted"),
                    F.count_if(F.col("q1_pickup").isNull()).alias("q1"),
                    F.count_if(F.col("q2_pickup").isNull()).alias("q2"),
                    F.count_if(F.col("profit_cents").isNull()).alias("profit_excluded")).first()
    by_reason = dict(rejects.groupBy("reason").count().collect())
    rejected = {reason: int(by_reason.get(reason, 0)) for reason in REJECT_REASONS}
    return {
        "lines_read": row["accepted"] + sum(rejected.values()),
        "accepted": row["accepted"],
        "rejected": rejected,
        "outliers": {"q1": row["q1"], "q2": row["q2"]},
        "profit_excluded": row["profit_excluded"],
    }


def _run_query(spark: SparkSession, trips: DataFrame, spec: QuerySpec, chunks: int,
               folder: OutputFolder) -> dict:
    """Recompute every instant of one query, write its file; returns its statistics."""
    valid = trips.where(F.col(VALID_COLUMN[spec.name]).isNotNull()).select(*QUERY_COLUMNS[spec.name])
    instants = evaluation_instants(trips, valid, spec.windows_s).cache()  # used three times below
    parts = split_into_chunks(spark, instants, valid, spec.longest_s, chunks)
    results = (parts.instants.groupBy("chunk")
               .cogroup(parts.trips.groupBy("chunk"))
               .applyInPandas(chunk_function(spec), RESULT_DDL)
               .cache())
    try:
        timings = results.select("recompute_ms", "delay_ms").toArrow()
        emitted = 0
        with folder.open(f"{spec.name}.csv") as handle:
            for row in results.where(F.col("line").isNotNull()).orderBy("time", "seq").select("line").toLocalIterator():
                handle.write(row["line"] + "\n")
                emitted += 1
    finally:
        results.unpersist()
        instants.unpersist()
    delays = timings.column("delay_ms").drop_null().to_numpy()
    return {
        "emitted": emitted,
        "delay_ms": delay_stats(delays),
        "recompute_ms": delay_stats(timings.column("recompute_ms").to_numpy()),
        "instants": timings.num_rows,
    }


def _write_rejects(rejects: DataFrame, folder: OutputFolder) -> None:
    with folder.open("rejects.csv") as handle:
        handle.write(REJECTS_HEADER + "\n")
        writer = csv.writer(handle, lineterminator="\n")
        for row in rejects.orderBy("line_no").toLocalIterator():
            writer.writerow((row["line_no"], row["reason"], row["raw_line"]))
