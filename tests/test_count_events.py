"""benchmarks/count_events.py, the driver of docs/performance.md's instruction counts: it
processes a fixed slice of events, reports what the counted run did, and honours GCMODE."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("count_events", ROOT / "benchmarks" / "count_events.py")
assert spec is not None and spec.loader is not None
count_events = importlib.util.module_from_spec(spec)
spec.loader.exec_module(count_events)


@pytest.mark.parametrize("mode", ["policy", "default"])
def test_a_slice_of_events_is_processed_and_reported(sample_20d: Path, mode: str, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GCMODE", mode)
    thresholds = gc.get_threshold()
    count_events.main(["mixed", "600", str(sample_20d), "200"])
    printed = capsys.readouterr().err.splitlines()
    assert printed[0].startswith("cpu ") and printed[0].endswith(" events 400")
    sizes = eval(printed[1].removeprefix("state "))  # noqa: S307 - our own printed list
    assert len(sizes) == 2 and all(size > 0 for size in sizes)  # both queries hold window state
    assert printed[2].endswith("taxi_rsp")
    assert gc.get_threshold() == thresholds  # the engine's settings do not outlive the run
