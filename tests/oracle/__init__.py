"""An independent, deliberately simple test oracle for the DEBS 2015 queries.

Written from SPEC.md alone (it imports nothing from ``taxi_rsp``): it rebuilds each
window's contents and recomputes the top-10 at every evaluation instant. Slow but
literal; it is the ground truth the engine and the Spark baseline are checked against.
"""

from .run import OracleResult, run_oracle

__all__ = ["OracleResult", "run_oracle"]
