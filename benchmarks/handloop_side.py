"""One side of ``bench_handloop.py`` in a process of its own: the engine or a hand loop.

    python benchmarks/handloop_side.py engine q1,q2 INPUT.csv OUT_DIR
    python benchmarks/handloop_side.py loop q2 INPUT.csv OUT.csv

Prints one JSON object: the CPU seconds of the call (``time.process_time`` around it:
interpreter start-up and imports excluded, as for both sides) and what the call
returned (the engine's summary, the loop's counts).

Why a process per side: run in one process after other workloads, either side inherits a
heap the earlier ones fragmented. Measured on the 2 M-line file (Mixed after the Q2 hand
loop in the same process, two alternated pairs): +4.3 s and +4.5 s (+10 to +13 %) against a
fresh process. A user's ``taxi-rsp run`` starts fresh, and so does a hand-written script.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import handloop_q1
import handloop_q2

LOOPS = {"q1": handloop_q1.run, "q2": handloop_q2.run}


def main(argv: list[str]) -> None:
    side, queries, input_file, out = argv[0], argv[1].split(","), argv[2], argv[3]
    if side == "engine":
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `taxi-rsp` sets it (taxi_rsp/cli.py)
        from taxi_rsp.runner import RunConfig, run

        started = time.process_time()
        result = run(RunConfig(input=Path(input_file), out=Path(out), queries=queries))
    elif side == "loop" and len(queries) == 1 and queries[0] in LOOPS:
        started = time.process_time()
        result = LOOPS[queries[0]](input_file, out)
    else:
        raise SystemExit(f"usage: handloop_side.py engine|loop QUERIES INPUT OUT (got {argv})")
    cpu = time.process_time() - started
    print(json.dumps({"cpu_s": cpu, "result": result}))


if __name__ == "__main__":
    main(sys.argv[1:])
