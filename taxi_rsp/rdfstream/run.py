"""`taxi-rsp run --stream FILE`: an RDF stream file through the engine into result files.

Writes ``DIR/<query>.csv`` (SELECT; ``--format json``: ``<query>.jsonl``, SPARQL 1.1
JSON results per report) or ``DIR/<query>.nq`` (CONSTRUCT, an N-Quads stream), and
``DIR/summary.json`` last, all through :class:`taxi_rsp.outputs.atomic.AtomicOutputs`: a failed or
interrupted run leaves no complete-looking folder. A ``# @listener`` pragma (the DEBS
challenge format) needs the taxi CSV's trigger fields, so stream runs write the
generic formats for every query.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp import native
from taxi_rsp.engine.config import EngineConfig
from taxi_rsp.errors import UserError
from taxi_rsp.outputs.atomic import AtomicOutputs
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.rdf.events import GraphEvent
from taxi_rsp.rdf.terms import IRI
from taxi_rsp.rdfstream.graphs import read_graph_events
from taxi_rsp.rdfstream.lines import StreamStats
from taxi_rsp.rdfstream.triples import read_triple_stream
from taxi_rsp.session import Session, SessionConfig

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
    outputs = AtomicOutputs(config.out)
    with outputs:
        # A DEBS @listener needs the taxi CSV's trigger fields: stream runs write the generic formats.
        session.attach_files(outputs.open, config.result_format, challenge_format=False)
        if config.explain:
            report(native.describe())
            for info in session.infos:
                report(session.explain(info.name))
        iri = _stream_iri(session, config.stream_iri)
        warnings = session.registration_warnings({iri})
        for warning in warnings:
            print(f"taxi-rsp run: warning: {warning}", file=sys.stderr, flush=True)
        outputs.claim(config.force, protect=[config.stream, *config.static])
        stats = StreamStats()
        started, cpu_started = time.perf_counter(), time.process_time()
        dictionary = session.dictionary
        session.run(open_stream(config.stream, fmt, dictionary, dictionary.encode(IRI(iri)), stats))
        outputs.commit()
        exec_seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        summary = {
            "stream": str(config.stream),
            "format": fmt,
            "stream_iri": iri,
            "lines_read": stats.lines_read,
            "events": stats.events,
            "triples": stats.triples,
            "static_triples": session.static_triples,
            **session.sink_figures(),
            "exec_seconds": round(exec_seconds, 6),
            "events_per_second": round(stats.events / exec_seconds, 1) if exec_seconds > 0 else None,
            "cpu_seconds": round(cpu_seconds, 3),
            "engine_state_rows": session.state_rows(),
            "engine_modules": native.status(),
            "warnings": warnings,
        }
        outputs.commit_summary(summary)
        return summary


def print_summary(summary: dict, out_dir: Path, print_line: Callable[[str], None] = print) -> None:
    print_line(f"read {summary['events']:,} events ({summary['triples']:,} triples, {summary['lines_read']:,} lines) "
               f"from {summary['stream']} in {summary['exec_seconds']:.2f} s "
               f"({summary['events_per_second'] or 0:,.0f} events/s); static triples {summary['static_triples']:,}")
    for name, count in summary["emitted"].items():
        delays = summary["delay_ms"][name]
        delay_text = f", delay mean {delays['mean']:.3f} ms p99 {delays['p99']:.3f} ms" if delays["mean"] is not None else ""
        print_line(f"  {name}: {count:,} output lines in {summary['reports'][name]:,} reports{delay_text}")
    print_line(f"  outputs and summary.json in {out_dir}")


def main(args: argparse.Namespace, params: dict[str, dict[str, str]]) -> int:
    """The ``taxi-rsp run --stream`` entry point (dispatched from taxi_rsp.commands.run)."""
    config = StreamRunConfig(
        stream=args.stream,
        out=args.out,
        queries=args.queries or [],
        params=params,
        static=args.static,
        stream_iri=args.stream_iri,
        result_format=args.format,
        explain=args.explain,
        engine=EngineConfig(compiled=not args.reference, join_routing=args.join_routing),
        force=args.force,
    )
    if not config.queries:
        raise UserError("--stream needs at least one --query")
    summary = run_stream(config, report=print)
    print_summary(summary, args.out)
    return 0
