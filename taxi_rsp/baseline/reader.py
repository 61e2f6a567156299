"""Reading and validating the input CSV on Spark (SPEC §1, §1.1).

Lines are read as raw bytes split on LF only (Spark's default text reader would also
split on CR), checked in parallel Arrow batches by :func:`parse.check_line`, numbered
in file order, and the ``out_of_order`` reason is decided by a running maximum.

A line that fails ``out_of_order`` never raises the maximum (its drop-off is below
it), so the maximum over *all* earlier lines that passed the per-line checks equals
the maximum over the earlier *accepted* lines: one window function decides it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from taxi_rsp.baseline.parse import Trip, check_line, decode_line

CHECKED_SCHEMA = pa.schema([
    ("stream", pa.int32()), ("block", pa.int64()), ("pos", pa.int64()),
    ("reason", pa.string()), ("raw_line", pa.string()),
    ("medallion", pa.string()), ("pickup_text", pa.string()), ("dropoff_text", pa.string()),
    ("dropoff", pa.int64()),
    ("q1_pickup", pa.int32()), ("q1_dropoff", pa.int32()),
    ("q2_pickup", pa.int32()), ("q2_dropoff", pa.int32()),
    ("profit_cents", pa.int64()),
])
_TRIP_COLUMNS = CHECKED_SCHEMA.names[5:]
CHECKED_DDL = ("stream int, block long, pos long, reason string, raw_line string, medallion string, "
               "pickup_text string, dropoff_text string, dropoff long, q1_pickup int, q1_dropoff int, "
               "q2_pickup int, q2_dropoff int, profit_cents long")


@dataclass(frozen=True)
class ReadResult:
    """The accepted trips (with ``seq``) and the rejects (``line_no, reason, raw_line``).

    Both carry ``stream``: the index of the input file, so that several small inputs
    can be answered by the same Spark jobs (every computation is per stream).
    """

    trips: DataFrame
    rejects: DataFrame


def _check_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: one output row per input line, a reason or the trip fields."""
    for batch in batches:
        columns: dict[str, list] = {name: [] for name in CHECKED_SCHEMA.names}
        for stream, block, pos, raw in zip(*(batch.column(i).to_pylist() for i in range(4))):
            line = decode_line(raw)
            outcome = check_line(line)
            columns["stream"].append(stream)
            columns["block"].append(block)
            columns["pos"].append(pos)
            columns["raw_line"].append(line)  # kept: a line may still be rejected as late
            if isinstance(outcome, Trip):
                columns["reason"].append(None)
                for name in _TRIP_COLUMNS:
                    columns[name].append(getattr(outcome, name))
            else:
                columns["reason"].append(outcome)
                for name in _TRIP_COLUMNS:
                    columns[name].append(None)
        yield pa.RecordBatch.from_pydict(columns, schema=CHECKED_SCHEMA)


def read_trips(spark: SparkSession, paths: Sequence[Path]) -> ReadResult:
    """Validate every line of the input files; both results are cached."""
    scans = [spark.read.option("lineSep", "\n").text(str(path))
             .select(F.lit(stream).cast("int").alias("stream"),
                     F.col("_metadata.file_block_start").alias("block"),
                     F.monotonically_increasing_id().alias("pos"),
                     F.col("value").cast("binary").alias("raw"))
             for stream, path in enumerate(paths)]
    lines = reduce(DataFrame.unionByName, scans)
    checked = lines.mapInArrow(_check_batches, CHECKED_DDL)
    # File order: splits by their byte offset, rows inside a split by read position.
    in_file_order = Window.partitionBy("stream").orderBy("block", "pos")
    numbered = checked.withColumn("seq", F.row_number().over(in_file_order))
    numbered = numbered.drop("block", "pos").cache()
    passed = numbered.where(F.col("reason").isNull())
    before = Window.partitionBy("stream").orderBy("seq").rowsBetween(Window.unboundedPreceding, -1)
    passed = passed.withColumn("latest", F.max("dropoff").over(before))
    late = F.col("latest").isNotNull() & (F.col("dropoff") < F.col("latest"))
    trips = passed.where(~late).drop("reason", "raw_line", "latest")
    rejects = numbered.where(F.col("reason").isNotNull()).select(
        "stream", F.col("seq").alias("line_no"), "reason", "raw_line")
    late_rejects = passed.where(late).select(
        "stream", F.col("seq").alias("line_no"), F.lit("out_of_order").alias("reason"), "raw_line")
    result = ReadResult(trips=trips.cache(), rejects=rejects.unionByName(late_rejects).cache())
    result.trips.count(), result.rejects.count()  # materialise both before the parse cache goes
    numbered.unpersist()
    return result
