"""The `run --live` sink's own CPU cost, apart from the engine (docs/maps.md): the event
wrapper per event, one published state, and the density background read before a run.

    .venv/bin/python benchmarks/live_sink_cost.py RUN_INPUT.csv BACKGROUND_INPUT.csv

(the figures in docs/maps.md and in the history of docs/performance.md: a 50,000-line and the 200,000-line slice of
`taxi-rsp synth --days 2 --seed 0`).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from taxi_rsp.live.background import background
from taxi_rsp.live.sink import LiveSink
from taxi_rsp.runner import RunConfig, run


def main(run_input: Path, background_input: Path) -> None:
    events = [SimpleNamespace(time=i) for i in range(200_000)]
    sink = LiveSink(run_input, port=0, say=lambda line: None).start()
    stats = SimpleNamespace(lines_read=0)
    plain = wrapped = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _event in events:
            pass
        plain = min(plain, time.process_time() - started)
        started = time.process_time()
        for _event in sink.observe(iter(events), stats):
            pass
        wrapped = min(wrapped, time.process_time() - started)
    sink.close()
    print(f"event wrapper: {(wrapped - plain) / len(events) * 1e9:.0f} ns per event")

    sink = LiveSink(run_input, port=0, say=lambda line: None).start()
    with tempfile.TemporaryDirectory() as out:
        run(RunConfig(input=run_input, out=Path(out), live=sink))
        count = 200
        started = time.process_time()
        for _ in range(count):
            sink.publish(done=False)
        each = (time.process_time() - started) / count
    sink.close()
    print(f"one state: {each * 1e3:.2f} CPU ms; at 4 a second {each * 4 * 100:.2f} % of a core")
    started = time.process_time()
    background(background_input)
    print(f"background of {background_input}: {time.process_time() - started:.2f} CPU s")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
