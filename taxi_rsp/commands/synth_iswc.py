"""`taxi-rsp synth-iswc`: the ISWC 2011 conference workload (RFID stream + DBLP-like data).

    $ taxi-rsp synth-iswc --out cache/iswc --people 1000 --static-triples 100000 --events 10000 --seed 1
    $ taxi-rsp run --stream cache/iswc/stream.tnt --static cache/iswc/dblp.nt \\
          --static cache/iswc/floorplan.nq --query queries/iswc2011/q3.cqels --out out/q3
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "synth-iswc",
        help="generate the ISWC 2011 conference workload (RFID stream, floor plan, DBLP-like graph)",
        description="Write DIR/stream.tnt (timestamped triples), DIR/stream.nq (the same stream as "
        "graph events), DIR/dblp.nt, DIR/floorplan.nq and DIR/manifest.json; same arguments, same files.",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--people", type=int, default=1000, help="people in the DBLP graph (default 1000)")
    parser.add_argument("--static-triples", type=int, default=10_000, help="DBLP triples (default 10000)")
    parser.add_argument("--events", type=int, default=10_000, help="RFID detections (default 10000)")
    parser.add_argument("--attendees", type=int, default=100, help="people that walk around (default 100)")
    parser.add_argument("--locations", type=int, default=30, help="locations in the floor plan (default 30)")
    parser.add_argument("--interval-ms", type=int, default=200, help="mean gap between detections (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from taxi_rsp.data.iswc import IswcConfig, generate

    config = IswcConfig(people=args.people, static_triples=args.static_triples, events=args.events,
                        seed=args.seed, attendees=min(args.attendees, args.people), locations=args.locations,
                        interval_ms=args.interval_ms)
    try:
        config.check()
    except ValueError as exc:
        raise UserError(str(exc)) from None
    started = time.perf_counter()
    try:
        manifest = generate(config, args.out)
    except OSError as exc:
        raise UserError(f"cannot write {exc.filename or args.out}: {exc.strerror or exc}") from None
    counts = ", ".join(f"{name} {n:,}" for name, n in manifest["counts"].items())
    print(f"wrote {args.out}: {counts} in {time.perf_counter() - started:.2f} s")
    return 0
