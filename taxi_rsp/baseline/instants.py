"""Evaluation instants of one query (SPEC §3) and their split into chunks.

Instants are ordered by ``(time, seq)``: an arrival carries its trigger's seq, an
expiry instant seq 0. An expiry instant τ = d + W (a trip valid for the query, one of
the query's windows) is evaluated only when a later event has time > τ and no event
has time == τ (then it is merged into that arrival). No event follows the last one.

The timeline of each stream is cut into chunks of equal time spans; each chunk also
gets the last instant before it (its *context*, evaluated only to know the previous
top-10 list) and every valid trip that a window of its instants can see.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F


@dataclass(frozen=True)
class Chunks:
    """Instants (``stream, chunk, time, seq, pickup_text, dropoff_text, context``) and
    the trips each chunk needs (``stream, chunk`` plus the trip columns)."""

    instants: DataFrame
    trips: DataFrame
    count: int


def evaluation_instants(trips: DataFrame, valid: DataFrame, windows_s: tuple[int, ...]) -> DataFrame:
    """Every arrival of ``trips`` plus the evaluated expiry instants of ``valid`` trips."""
    arrivals = trips.select("stream", F.col("dropoff").alias("time"), "seq", "pickup_text", "dropoff_text")
    event_times = trips.select("stream", F.col("dropoff").alias("time")).distinct()
    last_time = trips.groupBy("stream").agg(F.max("dropoff").alias("last_time"))
    expiries = (valid.select("stream", F.explode(F.array(*(F.col("dropoff") + w for w in windows_s))).alias("time"))
                .distinct()
                .join(event_times, ["stream", "time"], "left_anti")
                .join(last_time, "stream").where(F.col("time") < F.col("last_time"))
                .select("stream", "time", F.lit(0).cast("long").alias("seq"),
                        F.lit(None).cast("string").alias("pickup_text"),
                        F.lit(None).cast("string").alias("dropoff_text")))
    return arrivals.unionByName(expiries)


def split_into_chunks(spark: SparkSession, instants: DataFrame, valid: DataFrame,
                      bounds: dict[int, tuple[int, int]], longest_window_s: int, chunks: int) -> Chunks:
    """Cut each stream's instants into at most ``chunks`` equal time spans and attach trips.

    ``bounds[stream]`` = (first, last) drop-off time of the stream: every instant lies
    in between (expiry instants come after an arrival and before the last one).
    """
    spans = [(stream, lo, max(1, -(-(hi - lo + 1) // max(1, chunks)))) for stream, (lo, hi) in bounds.items()]
    if not spans:
        spans = [(0, 0, 1)]
    spans_df = F.broadcast(spark.createDataFrame(spans, "stream int, lo long, span long"))
    tagged = (instants.join(spans_df, "stream")
              .withColumn("chunk", ((F.col("time") - F.col("lo")) / F.col("span")).cast("int"))
              .drop("lo", "span").withColumn("context", F.lit(False)))
    # The last instant of each chunk is the context of the stream's next non-empty chunk.
    lasts = (tagged.groupBy("stream", "chunk")
             .agg(F.max(F.struct("time", "seq")).alias("last"), F.min("time").alias("first_time"))
             .orderBy("stream", "chunk").collect())
    context_rows, ranges = [], []
    previous = None
    for row in lasts:
        first_time = row["first_time"]
        if previous is not None and previous[0] == row["stream"]:
            context_rows.append((row["stream"], row["chunk"], previous[1]["time"], previous[1]["seq"]))
            first_time = previous[1]["time"]
        ranges.append((row["stream"], row["chunk"], first_time - longest_window_s, row["last"]["time"]))
        previous = (row["stream"], row["last"])
    instants_all = tagged
    if context_rows:
        keys = spark.createDataFrame(context_rows, "stream int, chunk int, time long, seq long")
        context = instants.join(F.broadcast(keys), ["stream", "time", "seq"]).withColumn("context", F.lit(True))
        instants_all = tagged.unionByName(context)
    # Each chunk sees its stream's valid trips with lo < dropoff <= hi (windows are (τ - W, τ]).
    ranges_df = spark.createDataFrame(ranges or [(0, 0, 0, -1)], "range_stream int, chunk int, lo long, hi long")
    inside = ((F.col("stream") == F.col("range_stream"))
              & (F.col("dropoff") > F.col("lo")) & (F.col("dropoff") <= F.col("hi")))
    # The stream column is taken from the ranges side: both cogroup sides descending
    # from the same trips would otherwise share one ambiguous `stream` attribute.
    chunk_trips = (valid.join(F.broadcast(ranges_df), inside).drop("stream", "lo", "hi")
                   .withColumnRenamed("range_stream", "stream"))
    return Chunks(instants_all, chunk_trips, len(lasts))
