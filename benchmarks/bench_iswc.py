"""The ISWC 2011 evaluation on our engine: average query execution time per stream element.

    .venv/bin/python -m pytest benchmarks/bench_iswc.py -m "not slow" --benchmark-json=cache/bench_iswc.json
    .venv/bin/python -m pytest benchmarks/bench_iswc.py -m slow ...   # adds the 1 M-triple DBLP graph and 1,024 instances

The paper (CQELS ISWC 2011, §5.1) registers one query instance, streams triples in
and averages the processing time of each re-execution; Exp.(1) uses 10 instances per
template (one for Q2, which has no constant) over a 10^5-triple DBLP graph, Exp.(2)
grows the DBLP graph. Here: a ``taxi-rsp synth-iswc`` workload (10 % as many people
as DBLP triples, 100 attendees, 30 locations, one detection per 200 ms on average);
the stream is read once, then each instance gets a fresh engine sharing the loaded
static store and replays ``EVENTS`` elements. ``extra_info`` holds the per-element
time in CPU ms (``time.process_time``) and wall ms; registration (which evaluates
and caches the static sub-queries) is timed apart. Figures: docs/iswc2011.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from taxi_rsp.data.iswc import STREAM_IRI, IswcConfig, author_name, generate
from taxi_rsp.engine.engine import Engine
from taxi_rsp.engine.static import StaticStore
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.rdfstream.triples import read_triple_stream
from taxi_rsp.planner import register

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "queries" / "iswc2011"
EVENTS = 500
INSTANCES = [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]  # attendees: prolific to ordinary authors
PAPER_MS = {1: 0.47, 2: 3.90, 3: 0.51, 4: 0.53, 5: 21.83}  # Table 2, CQELS row


class Workload:
    """Generated files, the loaded static store and the stream as decoded events."""

    def __init__(self, cache: Path, static_triples: int) -> None:
        folder = cache / f"iswc-{static_triples}"
        config = IswcConfig(people=max(static_triples // 10, 100), static_triples=static_triples,
                            events=EVENTS, attendees=100, locations=30, interval_ms=200, seed=1)
        if not (folder / "manifest.json").exists():
            generate(config, folder)
        self.dictionary = Dictionary()
        self.static = StaticStore(self.dictionary)
        started = time.process_time()
        self.loaded = sum(self.static.load(folder / name) for name in ("dblp.nt", "floorplan.nq"))
        self.load_cpu_s = time.process_time() - started
        stream = self.dictionary.encode(IRI(STREAM_IRI))
        self.events = list(read_triple_stream(folder / "stream.tnt", self.dictionary, stream))

    def engine(self) -> Engine:
        engine = Engine(self.dictionary)
        engine.static = self.static  # shared: loaded once, read-only during the runs
        return engine


_WORKLOADS: dict[int, Workload] = {}


def workload(cache: Path, static_triples: int) -> Workload:
    if static_triples not in _WORKLOADS:
        if static_triples >= 1_000_000 or any(size >= 1_000_000 for size in _WORKLOADS):
            _WORKLOADS.clear()  # the 1 M graph is large: keep it alone in memory
        _WORKLOADS[static_triples] = Workload(cache, static_triples)
    return _WORKLOADS[static_triples]


def instance_text(number: int, author: int) -> str:
    """A query instance: the paper's $Name$ (our files say "Author 1") replaced."""
    text = (QUERIES / f"q{number}.cqels").read_text()
    return text.replace('"Author 1"', f'"{author_name(author)}"')


def measure(data: Workload, number: int, authors: list[int]) -> dict[str, float]:
    """Per-element CPU and wall ms over all instances, and registration CPU ms."""
    cpu = wall = registering = 0.0
    results = 0
    for author in authors:
        engine = data.engine()
        started = time.process_time()
        query = register(engine, instance_text(number, author), f"q{number}")
        registering += time.process_time() - started
        outputs: list = []
        query.listeners.append(outputs.append)
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        for event in data.events:
            engine.process(event)
        cpu += time.process_time() - cpu_start
        wall += time.perf_counter() - wall_start
        results += len(outputs)
    elements = len(authors) * len(data.events)
    return {"cpu_ms_per_element": round(1000 * cpu / elements, 4), "wall_ms_per_element": round(1000 * wall / elements, 4),
            "register_cpu_ms": round(1000 * registering / len(authors), 2), "reports": results,
            "instances": len(authors), "elements": len(data.events), "static_triples": data.loaded,
            "static_load_cpu_s": round(data.load_cpu_s, 2), "paper_ms": PAPER_MS[number]}


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_table2_single_query(benchmark, cache_dir: Path, number: int) -> None:
    """Exp.(1): 10 instances per template (1 for Q2) over a 10^5-triple DBLP graph."""
    data = workload(cache_dir, 100_000)
    authors = INSTANCES if number != 2 else INSTANCES[:1]
    info = benchmark.pedantic(measure, args=(data, number, authors), rounds=1, iterations=1)
    benchmark.extra_info.update(info)


@pytest.mark.parametrize("static_triples", [10_000, 100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("number", [1, 3, 4, 5])
def test_growing_static_data(benchmark, cache_dir: Path, number: int, static_triples: int) -> None:
    """Exp.(2): per-element cost as the DBLP graph grows (3 instances per template)."""
    data = workload(cache_dir, static_triples)
    info = benchmark.pedantic(measure, args=(data, number, INSTANCES[:3]), rounds=1, iterations=1)
    benchmark.extra_info.update(info)


def measure_many(data: Workload, number: int, count: int) -> dict[str, float]:
    """Exp.(3): ``count`` instances of one template on one engine (authors 1, 2, ...)."""
    engine = data.engine()
    started = time.process_time()
    for author in range(1, count + 1):
        register(engine, instance_text(number, author), f"q{number}_{author}")
    registering = time.process_time() - started
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for event in data.events:
        engine.process(event)
    cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
    elements = len(data.events)
    return {"instances": count, "cpu_ms_per_element": round(1000 * cpu / elements, 4),
            "wall_ms_per_element": round(1000 * wall / elements, 4),
            "cpu_ms_per_element_per_instance": round(1000 * cpu / elements / count, 4),
            "register_cpu_s": round(registering, 2), "elements": elements, "static_triples": data.loaded}


@pytest.mark.parametrize("count", [1, 16, 128, pytest.param(1024, marks=pytest.mark.slow)])
@pytest.mark.parametrize("number", [1, 3, 4])
def test_many_instances(benchmark, cache_dir: Path, number: int, count: int) -> None:
    """Exp.(3): 2^M instances of Q1, Q3 and Q4 registered together (10^5 DBLP triples)."""
    data = workload(cache_dir, 100_000)
    info = benchmark.pedantic(measure_many, args=(data, number, count), rounds=1, iterations=1)
    benchmark.extra_info.update(info)
