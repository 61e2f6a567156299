"""`taxi-rsp view OUT_DIR`: a finished run's answers on the map, with a time slider."""

from __future__ import annotations

import argparse
from pathlib import Path

from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "view",
        help="show a finished run's Q1 routes and Q2 cells on a map in the browser, with a time slider",
        description="Serves the map page of `run --live` over OUT_DIR's q1.csv / q2.csv on 127.0.0.1; the "
        "slider steps through every instant at which a line was written. Ctrl-C stops it.",
    )
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="folder of a complete `taxi-rsp run`")
    parser.add_argument("--input", type=Path, metavar="TRIPS.csv",
                        help="the run's input, for the background of pickups (default: no background)")
    parser.add_argument("--port", type=int, default=8765, metavar="N",
                        help="port on 127.0.0.1 (default 8765; 0: any free port)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if not args.out_dir.is_dir():
        raise UserError(f"{args.out_dir} is not a folder")
    if args.input is not None and not args.input.is_file():
        raise UserError(f"input file {args.input} does not exist or is not a file")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port {args.port}: give a port number from 0 to 65535")
    from taxi_rsp.live.background import background
    from taxi_rsp.live.history import RunHistory
    from taxi_rsp.live.server import MapServer

    history = RunHistory(args.out_dir)
    page = {**background(args.input), "mode": "view", "folder": str(args.out_dir)}
    steps = history.steps()

    def at(query: dict[str, list[str]]):
        try:
            return history.at(int(query.get("i", ["-1"])[0]))
        except ValueError:
            return None

    server = MapServer(args.port, {"background.json": lambda query: page, "steps.json": lambda query: steps,
                                   "at.json": at}).start()
    if history.skipped:
        print(f"view: not shown (not Q1/Q2 output): {', '.join(history.skipped)}")
    print(f"view: {steps['count']:,} instants of {', '.join(steps['files'])} at {server.url} (Ctrl-C stops)",
          flush=True)
    server.serve_until_interrupted()
    return 0
