"""Run a fixed slice of events through the engine for an instruction count (callgrind).

    GCMODE=policy PYTHONHASHSEED=0 valgrind --tool=callgrind \\
        --toggle-collect='__pyx_pw_8taxi_rsp_6engine_6engine_6Engine_*run' \\
        .venv/bin/python benchmarks/count_events.py q2 25000 cache/s300k.csv

Registers the queries (``q1``, ``q2``, ``mixed``, or comma-separated ``.cqels`` paths), reads
the first N events of FILE with the Feeder *before* anything is counted, processes the
first W (default 5,000: code generation, first rows, windows filling), then hands the rest
to ``Engine.run`` — the only function the toggle above counts, so the Feeder and start-up
stay out. ``GCMODE``: ``policy`` (default) runs under :func:`~taxi_rsp.engine.gcpolicy.engine_gc`
as ``taxi-rsp run`` does; ``default`` keeps CPython's collector settings (the counts of
stops 22-24, which include young collections real runs do not make); ``off`` disables it.
Prints the CPU seconds, the queries' state sizes and the package's path.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.gcpolicy import engine_gc
from taxi_rsp.feeder.reader import Feeder
from taxi_rsp.planner import register

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = {"q1": ["queries/q1.cqels"], "q2": ["queries/q2.cqels"],
             "mixed": ["queries/q1.cqels", "queries/q2.cqels"]}


def main(argv: list[str]) -> None:
    which, count = argv[0], int(argv[1])
    path = Path(argv[2]) if len(argv) > 2 else ROOT / "cache" / "s300k.csv"
    warm = int(argv[3]) if len(argv) > 3 else 5000
    engine = Engine()
    for name in WORKLOADS.get(which) or which.split(","):
        query = Path(name) if Path(name).is_absolute() else ROOT / name
        register(engine, query.read_text(), query.stem)
    events = []
    for event in Feeder(path, engine.dictionary):
        events.append(event)
        if len(events) >= count:
            break
    for event in events[:warm]:
        engine.process(event)
    mode = os.environ.get("GCMODE", "policy")
    if mode == "off":
        gc.disable()
    started = time.process_time()
    with engine_gc() if mode == "policy" else nullcontext():
        engine.run(events[warm:])
    print("cpu", round(time.process_time() - started, 3), "events", len(events) - warm, file=sys.stderr)
    print("state", [query.state_size() for query in engine.queries], file=sys.stderr)
    print(Path(sys.modules["taxi_rsp"].__file__).parent, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
