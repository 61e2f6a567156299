"""The Feeder alone: events/s on the real sample, N-Quads export, and the 20-day file.

    $ .venv/bin/python -m pytest benchmarks/bench_feeder.py --benchmark-only            # real sample
    $ .venv/bin/python -m pytest benchmarks/bench_feeder.py --benchmark-only -m slow    # + 2 M lines

Each benchmark reads the whole file through a fresh Feeder and Dictionary (cold
memo caches, as in a run) and drops the events; ``extra_info`` records events/s from
the mean round time. The slow suite feeds the synthetic 20-day file of
``bench_scale.py`` (generated into ``./cache`` when missing) once and checks its
counts against what the generator says a conformant Feeder must report.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import cached_synthetic

from taxi_rsp.feeder import Feeder
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.nquads import write_nquads

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_20D = ROOT / "taxi_rsp" / "samples" / "debs2015" / "sample20d_first10004.csv"


def feed_all(path: Path) -> Feeder:
    """Pull every event of ``path`` through a fresh Feeder; return it for its stats."""
    feeder = Feeder(path, Dictionary())
    for _ in feeder:
        pass
    return feeder


def record_rate(benchmark, lines: int, events: int) -> None:
    mean = benchmark.stats.stats.mean
    benchmark.extra_info.update(lines=lines, events=events, events_per_second=round(events / mean))


def test_feeder_real_sample(benchmark) -> None:
    feeder = benchmark.pedantic(feed_all, args=(SAMPLE_20D,), rounds=7, warmup_rounds=1)
    assert feeder.stats.lines_read == 10_004 == feeder.stats.accepted
    record_rate(benchmark, feeder.stats.lines_read, feeder.stats.accepted)


def test_feeder_and_nquads_real_sample(benchmark) -> None:
    def export() -> int:
        dictionary = Dictionary()
        with open(os.devnull, "w", encoding="utf-8") as sink:
            return write_nquads(Feeder(SAMPLE_20D, dictionary), dictionary, sink)

    quads = benchmark.pedantic(export, rounds=5, warmup_rounds=1)
    assert quads > 10_004 * 12
    record_rate(benchmark, 10_004, 10_004)
    benchmark.extra_info["quads"] = quads


@pytest.fixture(scope="module")
def synthetic_20_days() -> Path:
    """``cache/synth20_seed0.csv`` and its sidecar, as ``bench_scale.py`` makes them."""
    return cached_synthetic(ROOT / "cache", days=20, seed=0)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_feeder_synthetic_20_days(benchmark, synthetic_20_days: Path) -> None:
    feeder = benchmark.pedantic(feed_all, args=(synthetic_20_days,), rounds=1, iterations=1)
    expected = json.loads(synthetic_20_days.with_suffix(".json").read_text())
    stats = feeder.stats
    assert stats.lines_read == expected["lines"]
    assert stats.rejected == expected["expected_rejects"]
    assert stats.profit_excluded == expected["expected_profit_exclusions"]
    record_rate(benchmark, stats.lines_read, stats.accepted)
