"""Evaluation instants of one query (SPEC §3) and their split into chunks.

Instants are ordered by ``(time, seq)``: an arrival carries its trigger's seq, an
expiry instant seq 0. An expiry instant τ = d + W (a trip valid for the query, one of
the query's windows) is evaluated only when a later event has time > τ and no event
has time == τ (then it is merged into that arrival). No event follows the last one.

The timeline is cut into chunks of whole time spans; each chunk also gets the last
instant before it (its *context*, evaluated only to know the previous top-10 list) and
every valid trip that a window of its instants can see.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

INSTANT_COLUMNS = ("time", "seq", "pickup_text", "dropoff_text")


@dataclass(frozen=True)
class Chunks:
    """Instants (``chunk, time, seq, pickup_text, dropoff_text, context``) and the trips
    each chunk needs (``chunk`` plus the trip columns)."""

    instants: DataFrame
    trips: DataFrame
    count: int


def evaluation_instants(trips: DataFrame, valid: DataFrame, windows_s: tuple[int, ...]) -> DataFrame:
    """Every arrival of ``trips`` plus the evaluated expiry instants of ``valid`` trips."""
    arrivals = trips.select(F.col("dropoff").alias("time"), "seq", "pickup_text", "dropoff_text")
    event_times = trips.select(F.col("dropoff").alias("time")).distinct()
    last_time = trips.agg(F.max("dropoff").alias("last_time"))
    expiries = (valid.select(F.explode(F.array(*(F.col("dropoff") + w for w in windows_s))).alias("time"))
                .distinct()
                .join(event_times, "time", "left_anti")
                .crossJoin(last_time).where(F.col("time") < F.col("last_time"))
                .select("time", F.lit(0).cast("long").alias("seq"),
                        F.lit(None).cast("string").alias("pickup_text"),
                        F.lit(None).cast("string").alias("dropoff_text")))
    return arrivals.unionByName(expiries)


def split_into_chunks(spark: SparkSession, instants: DataFrame, valid: DataFrame,
                      longest_window_s: int, chunks: int) -> Chunks:
    """Cut the instants into at most ``chunks`` equal time spans and attach their trips."""
    bounds = instants.agg(F.min("time").alias("lo"), F.max("time").alias("hi")).first()
    if bounds is None or bounds["lo"] is None:
        empty = instants.withColumn("chunk", F.lit(0)).withColumn("context", F.lit(False))
        return Chunks(empty, valid.withColumn("chunk", F.lit(0)), 0)
    span = max(1, -(-(bounds["hi"] - bounds["lo"] + 1) // max(1, chunks)))
    tagged = instants.withColumn("chunk", ((F.col("time") - bounds["lo"]) / span).cast("int"))
    tagged = tagged.withColumn("context", F.lit(False))
    # The last instant of each chunk is the context of the next non-empty chunk.
    lasts = (tagged.groupBy("chunk")
             .agg(F.max(F.struct("time", "seq")).alias("last"), F.min("time").alias("first_time"))
             .orderBy("chunk").collect())
    context_rows, ranges = [], []
    previous = None
    for row in lasts:
        first_time = row["first_time"]
        if previous is not None:
            context_rows.append((row["chunk"], previous["time"], previous["seq"]))
            first_time = previous["time"]
        ranges.append((row["chunk"], first_time - longest_window_s, row["last"]["time"]))
        previous = row["last"]
    instants_all = tagged
    if context_rows:
        keys = spark.createDataFrame(context_rows, "chunk int, time long, seq long")
        context = (instants.join(keys, ["time", "seq"])
                   .withColumn("context", F.lit(True)))
        instants_all = tagged.unionByName(context)
    # Each chunk sees the valid trips with lo < dropoff <= hi (windows are (τ - W, τ]).
    ranges_df = F.broadcast(spark.createDataFrame(ranges, "chunk int, lo long, hi long"))
    chunk_trips = (valid.join(ranges_df, (valid["dropoff"] > ranges_df["lo"]) & (valid["dropoff"] <= ranges_df["hi"]))
                   .drop("lo", "hi"))
    return Chunks(instants_all, chunk_trips, len(lasts))
