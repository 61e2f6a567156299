"""`taxi-rsp synth`: write a synthetic 20-day trip file, or check one against the sample.

    $ taxi-rsp synth --days 20 --out cache/synth20.csv --seed 0
    $ taxi-rsp synth --check cache/synth20.csv
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from taxi_rsp.errors import UserError
from taxi_rsp.outputs import make_parent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "synth",
        help="generate a synthetic DEBS 2015 trip file calibrated on the real sample",
        description="Generate a synthetic trip file (sorted by drop-off, streamed to disk), "
        "or with --check compare a file with the real sample and print the fidelity table "
        "(exit code 1 if a statistic is outside its tolerance).",
    )
    parser.add_argument("--days", type=int, default=20, help="days from 2013-01-01 (default 20)")
    parser.add_argument("--out", type=Path, help="file to write (missing folders are created)")
    parser.add_argument("--seed", type=int, default=0, help="random seed; same seed, same file (default 0)")
    parser.add_argument("--trips", type=int, help="expected number of trips in total (default: ≈100 k per day)")
    parser.add_argument("--dirty", type=float, default=0.001,
                        help="share of damaged lines, 0 for a clean file (default 0.001)")
    parser.add_argument("--minutes", type=int, help="stop drawing pickups after this many minutes (quick previews)")
    parser.add_argument("--check", type=Path, metavar="FILE", help="print the fidelity table of FILE instead")
    parser.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check is not None:
        return _check(args.check)
    return _generate(args)


def _generate(args: argparse.Namespace) -> int:
    from taxi_rsp.data import SynthConfig, generate

    if args.out is None:
        raise UserError("--out FILE is required (or use --check FILE)")
    if args.days < 1:
        raise UserError("--days must be at least 1")
    if args.trips is not None and args.trips < 1:
        raise UserError("--trips must be at least 1")
    if not 0.0 <= args.dirty <= 0.5:
        raise UserError("--dirty must be between 0 and 0.5")
    if args.minutes is not None and args.minutes < 1:
        raise UserError("--minutes must be at least 1")
    make_parent(args.out)
    config = SynthConfig(days=args.days, seed=args.seed, trips=args.trips, dirty=args.dirty, minutes=args.minutes)
    started = time.perf_counter()
    try:
        with _progress(not args.no_progress) as on_minute:
            result = generate(config, args.out, on_minute=on_minute)
    except OSError as exc:
        raise UserError(f"cannot write {args.out}: {exc.strerror}") from exc
    seconds = time.perf_counter() - started
    rejects = ", ".join(f"{k} {v}" for k, v in sorted(result.expected_rejects.items())) or "none"
    print(f"wrote {result.lines:,} lines to {args.out} in {seconds:.1f} s "
          f"(drop-offs {result.first_dropoff_minute} .. {result.last_dropoff_minute}, {result.medallions:,} taxis)")
    print(f"damaged lines: {sum(result.dirty.values()):,}; a SPEC Feeder rejects {rejects}; "
          f"profit exclusions {result.expected_profit_exclusions:,}")
    return 0


class _progress:
    """A progress line on a terminal while a file is drawn (a synthetic year takes half
    an hour): the days drawn and an ETA, redrawn once per simulated hour."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._bar = None

    def __enter__(self) -> Callable[[int, int], None] | None:
        if not self.enabled:
            return None
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        self._bar = Progress(TextColumn("{task.fields[days]} days drawn"), BarColumn(), TaskProgressColumn(),
                             TextColumn("ETA"), TimeRemainingColumn(), transient=True, refresh_per_second=4)
        self._bar.__enter__()
        task = self._bar.add_task("synth", total=None, days="0.0")

        def on_minute(minute: int, minutes: int) -> None:
            if minute % 60 == 0 or minute == minutes:
                self._bar.update(task, completed=minute, total=minutes, days=f"{minute / 1440:.1f}")

        return on_minute

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _check(path: Path) -> int:
    from taxi_rsp.data.fidelity import compare, format_table

    if not path.is_file():
        raise UserError(f"no such file: {path}")
    rows = compare(path)
    print(format_table(rows))
    failed = [r.label for r in rows if r.ok is False]
    if failed:
        print(f"{len(failed)} statistic(s) outside tolerance: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0
