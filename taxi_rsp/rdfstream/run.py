"""`taxi-rsp run --stream FILE`: RDF stream files through the engine into result files.

Several ``--stream IRI=FILE`` feed several streams in one run, their events merged by
time (:mod:`taxi_rsp.rdfstream.merge`; which file feeds which stream:
:mod:`taxi_rsp.rdfstream.inputs`).

Writes ``DIR/<query>.csv`` (SELECT; ``--format json``: ``<query>.jsonl``, SPARQL 1.1
JSON results per report) or ``DIR/<query>.nq`` (CONSTRUCT, an N-Quads stream), and
``DIR/summary.json`` last, all through :class:`taxi_rsp.outputs.atomic.AtomicOutputs`: a failed or
interrupted run leaves no complete-looking folder. A ``# @listener`` pragma (the DEBS
challenge format) needs the taxi CSV's trigger fields, so stream runs write the
generic formats for every query.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.errors import UserError
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.outputs.delays import describe
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.rdfstream.graphs import read_graph_events
from taxi_rsp.rdfstream.inputs import StreamSpec, assign_iris
from taxi_rsp.rdfstream.lines import StreamStats
from taxi_rsp.rdfstream.merge import merge_by_time
from taxi_rsp.rdfstream.triples import read_triple_stream
from taxi_rsp.session import Session, SessionConfig
from taxi_rsp.session.driver import drive

READERS = {"graphs": read_graph_events, "triples": read_triple_stream}
SUFFIXES = {".nq": "graphs", ".tnt": "triples"}


@dataclass
class StreamRunConfig:
    streams: list[StreamSpec]  # the files, each with the stream IRI it feeds (None: see inputs.assign_iris)
    out: Path
    queries: list[str]
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # query name ("*": all) -> params
    static: list[Path] = field(default_factory=list)
    stream_iri: str | None = None  # the stream of the one file given without an IRI
    stream_format: str | None = None  # "graphs" | "triples"; None: from the suffix
    result_format: str = "csv"  # "csv" | "json" (SELECT results)
    explain: bool = False
    engine: EngineConfig = EngineConfig()  # compiled or reference operators, join routing, top-k
    force: bool = False  # remove output-like files in ``out`` this run does not write


def stream_format(path: Path, requested: str | None) -> str:
    if requested is not None:
        if requested not in READERS:
            raise UserError(f"unknown stream format {requested!r} (use {' or '.join(READERS)})")
        return requested
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise UserError(f"{path}: cannot tell the stream format from the suffix; use .nq (one named graph per "
                        "event) or .tnt (timestamped N-Triples)")
    return found


def open_stream(path: Path, fmt: str, dictionary: Dictionary, stream_id: int,
                stats: StreamStats) -> Iterator[GraphEvent]:
    """The events of a stream file (format "graphs" or "triples")."""
    if not path.is_file():
        raise UserError(f"stream file {path} does not exist or is not a file")
    return READERS[fmt](path, dictionary, stream_id, stats)


def run_stream(config: StreamRunConfig, report: Callable[[str], None] = lambda line: None) -> dict:
    """Run the queries over the stream files; returns the summary (also written as summary.json)."""
    if not config.streams:
        raise UserError("give at least one --stream FILE")
    formats = [stream_format(spec.path, config.stream_format) for spec in config.streams]
    for spec in config.streams:
        if not spec.path.is_file():
            raise UserError(f"stream file {spec.path} does not exist or is not a file")
    if config.result_format not in ("csv", "json"):
        raise UserError(f"unknown result format {config.result_format!r} (use csv or json)")
    session = Session(SessionConfig.resolve(config.queries, config.params, config.static, config.engine))
    specs = assign_iris(config.streams, config.stream_iri, session.streams())
    source = StreamSource([StreamInput(spec.path, fmt, spec.iri) for spec, fmt in zip(specs, formats)])

    def warn(warning: str) -> None:
        print(f"taxi-rsp run: warning: {warning}", file=sys.stderr, flush=True)

    return drive(session, source, config.out, result_format=config.result_format, explain=config.explain,
                 force=config.force, protect=(*source.other_paths, *config.static), warn=warn, report=report)


@dataclass
class StreamInput:
    """One stream file of a run: its path, format ("graphs" or "triples"), the stream
    IRI it feeds, and what its reader counted."""

    path: Path
    format: str
    iri: str
    stats: StreamStats = field(default_factory=StreamStats)

    def summary(self) -> dict:
        return {"file": str(self.path), "format": self.format, "stream_iri": self.iri,
                "lines_read": self.stats.lines_read, "events": self.stats.events, "triples": self.stats.triples}


class StreamSource:
    """RDF stream files as a run's source (:class:`~taxi_rsp.session.driver.Source`):
    one file as it is read, several merged by time (:func:`merge_by_time`). A
    ``# @listener`` pragma (the DEBS challenge format) needs the taxi CSV's trigger
    fields, so stream runs write the generic formats for every query."""

    trigger_stamps = None

    def __init__(self, inputs: list[StreamInput]) -> None:
        self.inputs = inputs
        self.path = inputs[0].path  # the driver never overwrites it; the others: other_paths
        self.other_paths = tuple(item.path for item in inputs[1:])

    def streams(self, session: Session) -> set[str]:
        return {item.iri for item in self.inputs}

    def open(self, session: Session, outputs: AtomicOutputs, sinks: dict) -> None:
        """No output of its own."""

    @contextmanager
    def running(self, session: Session) -> Iterator[tuple[Iterator[GraphEvent], None]]:
        dictionary = session.dictionary
        readers = [open_stream(item.path, item.format, dictionary, dictionary.encode(IRI(item.iri)), item.stats)
                   for item in self.inputs]
        yield (readers[0] if len(readers) == 1 else merge_by_time(readers)), None

    def check(self, outputs: AtomicOutputs) -> None:
        """Nothing to check: a malformed line has already stopped the run."""

    def counts(self, session: Session) -> dict:
        """``stream``, ``format`` and ``stream_iri`` (joined by ", " for several files),
        the totals, and ``streams``: the same per file."""
        joined = {key: ", ".join(str(item.summary()[source]) for item in self.inputs)
                  for key, source in (("stream", "file"), ("format", "format"), ("stream_iri", "stream_iri"))}
        return {**joined, "lines_read": sum(item.stats.lines_read for item in self.inputs),
                "events": self.rate(), "triples": sum(item.stats.triples for item in self.inputs),
                "streams": [item.summary() for item in self.inputs], "static_triples": session.static_triples}

    def rate(self) -> int:
        return sum(item.stats.events for item in self.inputs)

    def details(self, session: Session) -> dict:
        return {}

    def warnings(self, session: Session) -> list[str]:
        return []


def print_summary(summary: dict, out_dir: Path, print_line: Callable[[str], None] = print) -> None:
    print_line(f"read {summary['events']:,} events ({summary['triples']:,} triples, {summary['lines_read']:,} lines) "
               f"from {summary['stream']} in {summary['exec_seconds']:.2f} s "
               f"({summary['events_per_second'] or 0:,.0f} events/s); static triples {summary['static_triples']:,}")
    for name, count in summary["emitted"].items():
        delays = summary["delay_ms"][name]
        delay_text = f", {describe(delays)}" if delays["mean"] is not None else ""
        print_line(f"  {name}: {count:,} output lines in {summary['reports'][name]:,} reports{delay_text}")
    print_line(f"  outputs and summary.json in {out_dir}")
