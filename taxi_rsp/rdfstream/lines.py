"""Line iteration shared by the stream readers, and what they count."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from taxi_rsp.errors import UserError
from taxi_rsp.rdfstream.errors import StreamInputError


@dataclass
class StreamStats:
    lines_read: int = 0
    events: int = 0
    triples: int = 0


def statement_lines(path: Path, stats: StreamStats) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line that may hold a statement: lines end at
    LF (a CRLF's CR is dropped); blank lines and ``#`` comment lines are skipped."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UserError(f"cannot read stream {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            stats.lines_read = number
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise StreamInputError(path, number, exc.start + 1, "not valid UTF-8") from None
            text = text.removesuffix("\n").removesuffix("\r")
            stripped = text.lstrip()
            if not stripped or stripped.startswith("#"):
                continue
            yield number, text


def now_ns() -> int:
    return time.perf_counter_ns()
