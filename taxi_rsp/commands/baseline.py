"""`taxi-rsp baseline INPUT --out DIR`: the Spark recompute baseline of Q1/Q2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.outputs.delays import describe
from taxi_rsp.outputs.stale import earlier_run, stale_outputs
from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "baseline",
        help="answer Q1/Q2 by recomputing every instant from scratch on Spark",
        description="Recompute every evaluation instant of Q1/Q2 from the raw window contents on "
        "PySpark; writes the same files as `taxi-rsp run` (DIR/q1.csv, DIR/q2.csv, DIR/rejects.csv, "
        "DIR/summary.json last). The delay column is each instant's recompute time.",
    )
    parser.add_argument("input", type=Path, help="taxi trip CSV (DEBS 2015 format)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created if missing)")
    parser.add_argument("--force", action="store_true",
                        help="remove output-like files in --out that this run does not write (see `run --force`)")
    parser.add_argument("--query", action="append", dest="queries", choices=("q1", "q2"),
                        help="query to answer; repeat for both (default: q1 and q2)")
    parser.add_argument("--q1-window", type=int, default=30, metavar="MIN", help="Q1 window in minutes (default 30)")
    parser.add_argument("--q2-windows", default="15,30", metavar="PROFIT,EMPTY",
                        help="Q2 profit and empty-taxi windows in minutes (default 15,30)")
    parser.add_argument("--master", default="local[*]", metavar="URL",
                        help="Spark master (default local[*]; e.g. spark://host:7077)")
    parser.add_argument("--chunks", type=int, default=0, metavar="N",
                        help="time chunks recomputed in parallel (default 4 per Spark core)")
    parser.set_defaults(func=main)


def parse_windows(q1_window: int, q2_windows: str) -> tuple[int, tuple[int, int]]:
    """Validated window minutes from the command line."""
    try:
        profit, empty = (int(part) for part in q2_windows.split(","))
    except ValueError:
        raise UserError("--q2-windows takes two minute counts, e.g. 15,30") from None
    if q1_window <= 0 or profit <= 0 or empty <= 0:
        raise UserError("windows must be positive numbers of minutes")
    return q1_window, (profit, empty)


def main(args: argparse.Namespace) -> int:
    q1_window, q2_windows = parse_windows(args.q1_window, args.q2_windows)
    if args.chunks < 0:
        raise UserError("--chunks must be 0 (automatic) or positive")
    if not args.input.is_file():
        raise UserError(f"input file {args.input} does not exist or is not a file")
    try:  # checked here: Spark would fail on it later, with a Java stack trace
        args.input.open("rb").close()
    except OSError as exc:
        raise UserError(f"cannot read input {args.input}: {exc.strerror}") from None
    queries = tuple(dict.fromkeys(args.queries or ["q1", "q2"]))
    writing = [*(f"{name}.csv" for name in queries), "rejects.csv"]
    # Checked before Spark starts (the run checks again): a refusal should not take 10 s.
    stale_outputs(args.out, writing, earlier_run(args.out), args.force, [args.input])
    # Imported here: starting Spark is slow, and the other commands do not need it.
    from taxi_rsp.baseline.run import BaselineSettings, run_baseline
    from taxi_rsp.baseline.session import spark_session

    settings = BaselineSettings(queries, q1_window, q2_windows, args.chunks)
    summary = run_baseline(args.input, args.out, settings, spark_session(args.master, driver_memory=ExecutionConfig.from_environment().spark_memory), report=print,
                           force=args.force)
    for name in queries:
        delays = summary["recompute_ms"][name]
        print(f"  {name}: {summary['emitted'][name]:,} lines -> {args.out / (name + '.csv')}; "
              f"{describe(delays, 'recompute per instant')}")
    print(f"done in {summary['exec_seconds']:.2f} s; rejects -> {args.out / 'rejects.csv'}")
    for warning in summary.get("warnings", []):
        print(f"taxi-rsp baseline: warning: {warning}", file=sys.stderr)
    return 0
