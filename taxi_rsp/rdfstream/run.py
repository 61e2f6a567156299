"""`taxi-rsp run --stream FILE`: an RDF stream file through the engine into result files.

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
from taxi_rsp.rdfstream.lines import StreamStats
from taxi_rsp.rdfstream.triples import read_triple_stream
from taxi_rsp.session import Session, SessionConfig
from taxi_rsp.session.driver import drive

READERS = {"graphs": read_graph_events, "triples": read_triple_stream}
SUFFIXES = {".nq": "graphs", ".tnt": "triples"}


@dataclass
class StreamRunConfig:
    stream: Path
    out: Path
    queries: list[str]
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # query name ("*": all) -> params
    static: list[Path] = field(default_factory=list)
    stream_iri: str | None = None  # None: the one stream the queries read
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


def _stream_iri(session: Session, requested: str | None) -> str:
    if requested is not None:
        return requested
    iris = session.streams()
    if len(iris) != 1:
        named = ", ".join(f"<{i}>" for i in iris) or "no stream"
        raise UserError(f"the queries read {named}: name the stream of the file with --stream-iri")
    return iris[0]


def run_stream(config: StreamRunConfig, report: Callable[[str], None] = lambda line: None) -> dict:
    """Run the queries over the stream file; returns the summary (also written as summary.json)."""
    fmt = stream_format(config.stream, config.stream_format)
    if not config.stream.is_file():
        raise UserError(f"stream file {config.stream} does not exist or is not a file")
    if config.result_format not in ("csv", "json"):
        raise UserError(f"unknown result format {config.result_format!r} (use csv or json)")
    session = Session(SessionConfig.resolve(config.queries, config.params, config.static, config.engine))
    source = StreamSource(config.stream, fmt, _stream_iri(session, config.stream_iri))

    def warn(warning: str) -> None:
        print(f"taxi-rsp run: warning: {warning}", file=sys.stderr, flush=True)

    return drive(session, source, config.out, result_format=config.result_format, explain=config.explain,
                 force=config.force, protect=tuple(config.static), warn=warn, report=report)


class StreamSource:
    """An RDF stream file as a run's source (:class:`~taxi_rsp.session.driver.Source`).
    A ``# @listener`` pragma (the DEBS challenge format) needs the taxi CSV's trigger
    fields, so stream runs write the generic formats for every query."""

    trigger_stamps = None

    def __init__(self, path: Path, fmt: str, iri: str) -> None:
        self.path = path
        self.format = fmt
        self.iri = iri
        self.stats = StreamStats()

    def streams(self, session: Session) -> set[str]:
        return {self.iri}

    def open(self, session: Session, outputs: AtomicOutputs, sinks: dict) -> None:
        """No output of its own."""

    @contextmanager
    def running(self, session: Session) -> Iterator[tuple[Iterator[GraphEvent], None]]:
        dictionary = session.dictionary
        yield open_stream(self.path, self.format, dictionary, dictionary.encode(IRI(self.iri)), self.stats), None

    def check(self, outputs: AtomicOutputs) -> None:
        """Nothing to check: a malformed line has already stopped the run."""

    def counts(self, session: Session) -> dict:
        return {"stream": str(self.path), "format": self.format, "stream_iri": self.iri,
                "lines_read": self.stats.lines_read, "events": self.stats.events, "triples": self.stats.triples,
                "static_triples": session.static_triples}

    def rate(self) -> int:
        return self.stats.events

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
