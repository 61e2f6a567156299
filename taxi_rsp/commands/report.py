"""`taxi-rsp report INPUT --out DIR`: the Table-1 report, engine vs Spark baseline."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="run engine and baseline workloads and write report.md + report.html (Table 1, plots)",
        description="Runs Individual Q1, Individual Q2 and Mixed with the engine (`taxi-rsp run`) and "
        "the Spark baseline, checks they agree, runs the window sweep, and writes DIR/report.md and a "
        "self-contained DIR/report.html (with maps of Q1's routes and Q2's cells, docs/maps.md). Run folders go to DIR/runs/{engine,baseline}/<workload>/run-<i>.",
    )
    parser.add_argument("input", type=Path, help="taxi trip CSV (DEBS 2015 format)")
    parser.add_argument("--out", type=Path, required=True, help="report folder")
    parser.add_argument("--sweep", default=None, metavar="MIN,...",
                        help="Q1 windows of the window sweep (Q2: W/2, W); empty string: no sweep (default: of "
                        "SPEC's 30,60,120,240 the windows that fit the input's span of drop-off times, halving 30 "
                        "until two fit: 15,30 on the bundled sample)")
    parser.add_argument("--workloads", default="q1,q2,mixed", metavar="NAME,...",
                        help="which of q1, q2, mixed to run (default all three; the sweep adds Mixed runs)")
    parser.add_argument("--reuse", action="store_true",
                        help="read run folders that already hold a summary.json instead of running again")
    parser.add_argument("--repeat", type=int, default=None, metavar="N",
                        help="runs of each workload on each side; with 2 or more the tables give medians and "
                        "min–max (default 1)")
    parser.add_argument("--master", default="local[*]", metavar="URL", help="Spark master for the baseline")
    parser.add_argument("--map-at", metavar="'YYYY-MM-DD HH:MM:SS'",
                        help="event time of the Q1 and Q2 maps (default: the end of the busiest drop-off minute)")
    parser.set_defaults(func=main)


def _sweep(text: str) -> list[int]:
    try:
        windows = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError("--sweep takes minute counts, e.g. 30,60,120,240") from None
    if any(w < 2 for w in windows):
        raise UserError("--sweep windows must be at least 2 minutes (Q2 uses W/2)")
    return windows


def main(args: argparse.Namespace) -> int:
    if not args.input.is_file():
        raise UserError(f"input file {args.input} does not exist or is not a file")
    asked = None if args.sweep is None else _sweep(args.sweep)
    if args.map_at is not None:
        from datetime import datetime

        try:
            datetime.strptime(args.map_at, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise UserError(f"--map-at {args.map_at!r}: give an event time as YYYY-MM-DD HH:MM:SS") from None
    if args.repeat is not None and args.repeat < 1:
        raise UserError("--repeat must be at least 1")
    # Imported here: numpy, matplotlib and Spark are not needed by the other commands.
    from taxi_rsp.verify.workloads import (
        Steps,
        engine_available,
        run_pair,
        standard_workloads,
        sweep_workloads,
    )

    chosen = [name.strip() for name in args.workloads.split(",") if name.strip()]
    known = {w.name for w in standard_workloads()}
    if not chosen or set(chosen) - known:
        raise UserError(f"--workloads takes names among {', '.join(sorted(known))}")
    from taxi_rsp.baseline.session import spark_session
    from taxi_rsp.verify.machine import describe_machine
    from taxi_rsp.verify.report import Context, write_report

    from taxi_rsp.verify.plan import plan_report, read_span

    span = read_span(args.input)
    plan = plan_report(span, asked, args.repeat)
    for line in plan.describe(span):
        print(line)
    windows, repeat, lines = plan.sweep, plan.repeat, span.lines
    args.out.mkdir(parents=True, exist_ok=True)
    bytes_per_line = args.input.stat().st_size / max(1, lines)
    def spark():  # started on first use: with --reuse and complete folders, never
        return spark_session(args.master, driver_memory=ExecutionConfig.from_environment().spark_memory)
    if not engine_available():
        print("note: `taxi-rsp run` is not available: the report shows the baseline side only")
    runs = args.out / "runs"
    standard = [w for w in standard_workloads() if w.name in chosen]
    # Mixed at 30 min is the first sweep point: reuse it rather than run it twice.
    reused = "mixed" in chosen and 30 in windows
    extra = [w for w in sweep_workloads(windows) if not (reused and w.q1_window == 30)]
    sides = 2 if engine_available() else 1
    steps = Steps((len(standard) + len(extra)) * sides * repeat, print)
    pairs = [run_pair(args.input, runs, w, spark, bytes_per_line, args.reuse, steps, repeat) for w in standard]
    mixed = next((p for p in pairs if p.workload.name == "mixed"), None)
    sweep = [mixed if mixed and w.q1_window == 30 and w.q2_windows == (15, 30)
             else run_pair(args.input, runs, w, spark, bytes_per_line, args.reuse, steps, repeat)
             for w in sweep_workloads(windows)]
    command = shlex.join(["taxi-rsp", "report", str(args.input), "--out", str(args.out),
                          "--sweep", ",".join(map(str, windows)), "--workloads", args.workloads,
                          "--repeat", str(repeat),
                          *(["--reuse"] if args.reuse else [])])
    if args.map_at is not None:
        command = shlex.join([*shlex.split(command), "--map-at", args.map_at])
    context = Context(args.input, lines, describe_machine(), command, repeat, args.map_at)
    written = write_report(args.out, pairs, sweep, context)
    for path in written:
        print(f"wrote {path}")
    page = next(path for path in written if path.suffix == ".html")
    print(f"report: {page.resolve()} (open it in a browser; report.md is the same in Markdown)")
    different = [p.workload.name for p in [*pairs, *sweep] if p.identical is False]
    if different:
        print(f"engine and baseline DIFFER on: {', '.join(different)}")
        return 1
    return 0
