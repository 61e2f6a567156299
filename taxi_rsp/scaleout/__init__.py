"""Time-partitioned replay of the engine on Spark (`taxi-rsp run --spark`).

The input is cut into line-aligned byte ranges ("chunks"); each Spark task runs the
ordinary engine on one chunk after replaying, without output, the preceding events that
can still be in a window; the driver concatenates the chunk outputs in order. The result
equals a sequential `taxi-rsp run` on every field but the measured delay.
"""

from taxi_rsp.scaleout.driver import run_spark

__all__ = ["run_spark"]
