"""Stage 1: what a chunk must know about the lines before it.

Whether a line is accepted depends on the latest accepted drop-off before it (the
``out_of_order`` check, SPEC §1.1), and that is a prefix maximum: a well-formed line is
accepted iff its drop-off is not below the maximum drop-off of the well-formed lines
before it, so the latest accepted drop-off after any line is the maximum drop-off of all
well-formed lines so far. Each range is therefore scanned once, on its own, with the
ordinary Feeder started with no previous drop-off: the Feeder's clock then follows the
range's own running maximum. The driver turns the per-range results into exact global
values (line numbers and running maxima) by prefix sums and prefix maxima.

Besides its line count and maximum, a range reports *checkpoints*: line starts, about
every ``spacing`` bytes, with the running maximum before them. A chunk's warm-up starts
at one of them (see :mod:`taxi_rsp.scaleout.plan`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.feeder import Feeder
from taxi_rsp.rdf.dictionary import Dictionary
from taxi_rsp.scaleout.slices import LineReader

NO_DROPOFF = None  # no well-formed line yet: nothing can be out of order
CHECKPOINT_SPACING = 64 * 1024  # bytes; bounds the warm-up read beyond the longest window


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A line start: its byte offset, the number of lines of the range before it and
    the maximum well-formed drop-off (ms) of those lines (None: none of them)."""

    offset: int
    lines_before: int
    max_dropoff: int | None


@dataclass(frozen=True)
class RangeScan:
    start: int
    end: int
    lines: int
    max_dropoff: int | None
    checkpoints: tuple[Checkpoint, ...] = field(default=())
    cpu_seconds: float = 0.0  # CPU time of the scan (figures only)


def scan_range(path: str, start: int, end: int, spacing: int = CHECKPOINT_SPACING) -> RangeScan:
    """Line count, maximum well-formed drop-off and checkpoints of bytes [start, end)."""
    cpu_started = time.process_time()
    reader = LineReader(Path(path), start, end)
    feeder = Feeder(Path(path), Dictionary(), lines=reader)
    checkpoints = [Checkpoint(start, 0, NO_DROPOFF)]
    latest = NO_DROPOFF
    for event in feeder:
        # Accepted events are exactly the new running maxima, so ``latest`` is the
        # running maximum after the line the reader has just handed out.
        latest = event.time
        if reader.position - checkpoints[-1].offset >= spacing and reader.position < end:
            checkpoints.append(Checkpoint(reader.position, feeder.stats.lines_read, latest))
    return RangeScan(start, end, feeder.stats.lines_read, latest, tuple(checkpoints),
                     time.process_time() - cpu_started)
