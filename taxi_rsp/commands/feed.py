"""`taxi-rsp feed`: run the Feeder alone; export the RDF event stream as N-Quads.

    $ taxi-rsp feed taxi_rsp/samples/debs2015/sample20d_first10004.csv --nquads events.nq --rejects rejects.csv

Without ``--nquads`` the file is only validated and counted. Output files are written
under a temporary name and renamed when the whole input has been read, so an
interrupted run never leaves a complete-looking file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from taxi_rsp.errors import UserError
from taxi_rsp.outputs import make_parent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "feed",
        help="validate a trip CSV and export its RDF graph events as N-Quads",
        description="Stream a DEBS 2015 trip CSV through the Feeder (SPEC §1): count accepted and "
        "rejected lines, optionally write the graph events as N-Quads (one named graph per trip, "
        "its drop-off time as prov:generatedAtTime) and the rejected lines as CSV.",
    )
    parser.add_argument("input", type=Path, metavar="INPUT", help="trip CSV file")
    parser.add_argument("--nquads", type=Path, metavar="OUT.nq", help="write the event stream as N-Quads (missing folders are created)")
    parser.add_argument("--rejects", type=Path, metavar="FILE", help="write rejected lines (line_no,reason,raw_line)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from taxi_rsp.feeder import Feeder
    from taxi_rsp.rdf.dictionary import Dictionary
    from taxi_rsp.rdf.nquads import write_nquads

    if not args.input.is_file():
        raise UserError(f"no such file: {args.input}")
    for target in (args.nquads, args.rejects):
        if target is not None:
            make_parent(target)
    dictionary = Dictionary()
    started = time.perf_counter()
    try:
        with _atomic(args.rejects) as rejects, _atomic(args.nquads) as nquads:
            feeder = Feeder(args.input, dictionary, rejects)
            if nquads is not None:
                quads = write_nquads(feeder, dictionary, nquads)
            else:
                quads = sum(1 for _ in feeder)  # events only counted
    except OSError as exc:  # e.g. the disk filled up while writing
        raise UserError(f"{exc.filename or 'output'}: {exc.strerror or exc}") from None
    seconds = time.perf_counter() - started
    print(_summary(feeder.stats, quads if nquads is not None else None, seconds))
    return 0


def _summary(stats, quads: int | None, seconds: float) -> str:  # noqa: ANN001 - FeedStats
    rejected = sum(stats.rejected.values())
    reasons = ", ".join(f"{reason} {n:,}" for reason, n in stats.rejected.items() if n)
    text = (f"{stats.lines_read:,} lines: {stats.accepted:,} accepted, {rejected:,} rejected"
            f"{f' ({reasons})' if reasons else ''}; outliers q1 {stats.outliers['q1']:,}, "
            f"q2 {stats.outliers['q2']:,}; profit excluded {stats.profit_excluded:,}")
    if quads is not None:
        text += f"; {quads:,} quads"
    rate = stats.lines_read / seconds if seconds > 0 else 0.0
    return f"{text}; {seconds:.2f} s ({rate:,.0f} lines/s)"


@contextlib.contextmanager
def _atomic(path: Path | None) -> Iterator[TextIO | None]:
    """A text file written as ``.NAME.partial`` next to ``path`` and renamed on success."""
    if path is None:
        yield None
        return
    partial = path.with_name(f".{path.name}.partial")
    try:
        handle = partial.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with handle:
            yield handle
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
