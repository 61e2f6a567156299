"""`taxi-rsp run INPUT --out DIR [--query q1 ...]`: the engine over a taxi CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.engine.config import JOIN_ROUTING, EngineConfig
from taxi_rsp.errors import UserError
from taxi_rsp.outputs.delays import describe
from taxi_rsp.runner import DEFAULT_QUERIES, RunConfig, run


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run continuous queries over a taxi CSV with the CQELS engine",
        description="Feed INPUT through the CQELS engine; writes DIR/<query>.csv, DIR/rejects.csv and "
        "DIR/summary.json (written last, so its presence marks a complete run).",
    )
    parser.add_argument("input", type=Path, nargs="?", help="taxi trip CSV (DEBS 2015 format)")
    parser.add_argument("--stream", action="append", metavar="[IRI=]FILE",
                        help="an RDF stream instead of INPUT: .nq (one named graph per event) or .tnt "
                        "(timestamped N-Triples); repeat as IRI=FILE (or <IRI>=FILE) for several streams, whose "
                        "events are merged by time; see taxi_rsp.rdfstream")
    parser.add_argument("--stream-iri", metavar="IRI",
                        help="the stream IRI of a --stream FILE given without one (default: the one stream the "
                        "queries read that no other --stream names)")
    parser.add_argument("--format", choices=("csv", "json"), default="csv",
                        help="SELECT results of queries without a DEBS @listener: csv, or json (SPARQL 1.1 JSON "
                        "results, one document per line, in <query>.jsonl)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created if missing)")
    parser.add_argument("--force", action="store_true",
                        help="remove output-like files in --out that this run does not write (without it, the "
                        "run refuses to start; outputs an earlier run's summary.json names are removed anyway)")
    parser.add_argument("--query", action="append", dest="queries", metavar="NAME_OR_PATH",
                        help="query name in queries/ (q1, q2) or a .cqels file; repeat for several "
                        "(default for a taxi CSV: q1 and q2, the DEBS Mixed workload)")
    parser.add_argument("--q1-window", type=int, metavar="MIN", help="Q1 window in minutes (default 30)")
    parser.add_argument("--q2-windows", metavar="PROFIT,EMPTY", help="Q2 windows in minutes (default 15,30)")
    parser.add_argument("--param", action="append", default=[], metavar="[QUERY.]NAME=VALUE",
                        help="bind a query parameter, e.g. q1.window=60m")
    parser.add_argument("--static", action="append", type=Path, default=[], metavar="FILE",
                        help="static RDF dataset to load (.nt, .ttl, .nq, ...)")
    parser.add_argument("--explain", action="store_true", help="print the query plans before running")
    parser.add_argument("--reference", action="store_true",
                        help="run the reference operators only, no compiled plans (for comparisons)")
    parser.add_argument("--join-routing", choices=JOIN_ROUTING, default="adaptive",
                        help="joins of three or more inputs with a stream: one adaptive multi-way join (default), "
                        "the same in the plan's fixed order, or binary left-deep joins (docs/cqels-ql.md)")
    parser.add_argument("--slide-report", choices=("window-close", "content-change"), default="window-close",
                        help="when a RANGE d SLIDE s window reports: as each window closes (default) or, as CQELS "
                        "does, at every arrival over the oldest open window's content so far (docs/semantics.md)")
    parser.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")
    parser.add_argument("--rss-at", default="200000,1000000,2000000", metavar="LINES,...",
                        help="line counts at which summary.json records the peak RSS (rss_mib_at_lines)")
    parser.add_argument("--spark", action="store_true",
                        help="run time-partitioned on Spark (same results; see docs/scaling.md)")
    parser.add_argument("--master", metavar="URL", help="Spark master with --spark (default local[*])")
    parser.add_argument("--partitions", type=int, metavar="N",
                        help="time chunks with --spark (default: Spark's default parallelism)")
    parser.add_argument("--live", action="store_true",
                        help="show the answers on a map in a browser while the run goes (http://127.0.0.1:PORT/; "
                        "Q1 routes, Q2 cells, other queries as tables); after the run the page stays up until Ctrl-C")
    parser.add_argument("--port", type=int, default=8765, metavar="N",
                        help="port of the --live page on 127.0.0.1 (default 8765; 0: any free port)")
    parser.add_argument("--live-wait", action="store_true",
                        help="with --live: start reading the input only once the page has been opened")
    parser.set_defaults(func=main)


def parse_params(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    params: dict[str, dict[str, str]] = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UserError(f"--param {item!r}: use [QUERY.]NAME=VALUE")
        query, dot, key = name.rpartition(".")
        params.setdefault(query if dot else "*", {})[key] = value
    if args.q1_window is not None:
        if args.q1_window <= 0:
            raise UserError("--q1-window must be a positive number of minutes")
        params.setdefault("q1", {})["window"] = f"{args.q1_window}m"
    if args.q2_windows is not None:
        try:
            profit, empty = (int(x) for x in args.q2_windows.split(","))
        except ValueError:
            raise UserError("--q2-windows takes two minute counts, e.g. 15,30") from None
        if profit <= 0 or empty <= 0:
            raise UserError("--q2-windows must be positive minute counts")
        params.setdefault("q2", {}).update(profit_window=f"{profit}m", empty_window=f"{empty}m")
    return params


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The engine options of ``run``'s command line."""
    return EngineConfig(compiled=not args.reference, join_routing=args.join_routing,
                        slide_report=args.slide_report.replace("-", " "))


def parse_line_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"--rss-at {text!r}: give line counts such as 200000,1000000") from None
    if any(count <= 0 for count in counts):
        raise UserError("--rss-at line counts must be positive")
    return counts


def main(args: argparse.Namespace) -> int:
    if (args.input is None) == (args.stream is None):
        raise UserError("give exactly one of INPUT (a taxi CSV) and --stream FILE (an RDF stream)")
    if args.stream is not None and args.live:
        raise UserError("--live shows a taxi CSV run; it is not available with --stream")
    if args.stream is not None:
        return _run_stream(args)
    if args.stream_iri is not None:
        raise UserError("--stream-iri applies to --stream runs only")
    live = _live(args)
    warned: list[str] = []  # printed at registration, not repeated at the end
    config = RunConfig(
        input=args.input,
        out=args.out,
        queries=args.queries or list(DEFAULT_QUERIES),
        params=parse_params(args),
        static=args.static,
        progress=not args.no_progress,
        explain=args.explain,
        engine=engine_config(args),
        rss_checkpoints=parse_line_counts(args.rss_at),
        warn=lambda warning: (warned.append(warning),
                              print(f"taxi-rsp run: warning: {warning}", file=sys.stderr, flush=True)),
        force=args.force,
        result_format=args.format,
        live=live,
    )
    if args.spark and args.format != "csv":
        raise UserError("--format json is not available with --spark (its chunks are joined as CSV)")
    if args.spark:
        from taxi_rsp.scaleout import run_spark  # imported here: Spark is slow to load

        summary = run_spark(config, master=args.master or "local[*]", partitions=args.partitions, report=print,
                            driver_memory=ExecutionConfig.from_environment().spark_memory)
    elif args.master is not None or args.partitions is not None:
        raise UserError("--master and --partitions need --spark")
    else:
        try:
            summary = run(config, report=print)
        except BaseException:
            if live is not None:
                live.close()
            raise
    print_summary(summary, args.out)
    for warning in summary.get("warnings", []):
        if warning not in warned:  # registration warnings were printed when they arose
            print(f"taxi-rsp run: warning: {warning}", file=sys.stderr)
    if live is not None:
        live.linger()
    return 0


def _live(args: argparse.Namespace):
    """The --live map page (taxi_rsp.live), started before the run; None without --live."""
    if not args.live:
        if args.live_wait or args.port != 8765:
            raise UserError("--port and --live-wait need --live")
        return None
    if args.spark:
        raise UserError("--live is not available with --spark (the chunks run in other processes)")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port {args.port}: give a port number from 0 to 65535")
    from taxi_rsp.live.sink import LiveSink

    return LiveSink(args.input, port=args.port, wait=args.live_wait,
                    say=lambda line: print(line, flush=True)).start()


def print_summary(summary: dict, out: Path) -> None:
    """The run in a few lines: counts and speed, then one line per query (output lines,
    reports for non-DEBS queries, the delay's p50, p99, max and mean)."""
    rejected = sum(summary["rejected"].values())
    cpu = f", {summary['cpu_seconds']:.2f} CPU s" if "cpu_seconds" in summary else ""
    print(f"read {summary['lines_read']:,} lines: {summary['accepted']:,} accepted, {rejected:,} rejected "
          f"in {summary['exec_seconds']:.2f} s ({summary['events_per_second'] or 0:,.0f} events/s{cpu})")
    files = {path.stem: path.name for path in out.iterdir() if path.suffix in (".csv", ".nq", ".jsonl")}
    for name, count in summary["emitted"].items():
        delays = summary["delay_ms"][name]
        reports = summary.get("reports", {}).get(name)
        what = f"{count:,} output lines, {reports:,} reports" if reports is not None else f"{count:,} lines"
        delay_text = f", {describe(delays)}" if delays["mean"] is not None else ""
        print(f"  {name}: {what} -> {out / files.get(name, name + '.csv')}{delay_text}")
    print(f"  rejects -> {out / 'rejects.csv'}; summary -> {out / 'summary.json'}")


def _run_stream(args: argparse.Namespace) -> int:
    """``taxi-rsp run --stream [IRI=]FILE …``: RDF streams through the queries."""
    from taxi_rsp.rdfstream.inputs import parse_stream_arg
    from taxi_rsp.rdfstream.run import StreamRunConfig, print_summary, run_stream

    config = StreamRunConfig(
        streams=[parse_stream_arg(text) for text in args.stream],
        out=args.out,
        queries=args.queries or [],
        params=parse_params(args),
        static=args.static,
        stream_iri=args.stream_iri,
        result_format=args.format,
        explain=args.explain,
        engine=engine_config(args),
        force=args.force,
    )
    if not config.queries:
        raise UserError("--stream needs at least one --query")
    summary = run_stream(config, report=print)
    print_summary(summary, args.out)
    return 0
