"""Reading a query output file (SPEC §5) as lines to grade.

Grading compares every field of a line but the delay (the last field); whether the
delay is ``NULL`` (an expiry-triggered line) must agree too, so the comparison key of
a line is its fields before the delay plus a "delay is NULL" flag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from taxi_rsp.outputs.lines import NULL, fields_key
from taxi_rsp.spec import Q1_FIELD_COUNT, Q2_FIELD_COUNT, TOP_K

FIELD_COUNTS: dict[str, int] = {"q1": Q1_FIELD_COUNT, "q2": Q2_FIELD_COUNT}
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_DELAY = re.compile(r"\d+(\.\d+)?")


def field_names(query: str) -> tuple[str, ...]:
    """The column names of a query's output line, for naming a mismatching field."""
    if query == "q1":
        entry = [f"{part}_cell_{i}" for i in range(1, TOP_K + 1) for part in ("start", "end")]
    else:
        entry = [
            f"{part}_{i}"
            for i in range(1, TOP_K + 1)
            for part in ("cell", "empty_taxis", "median_profit", "profitability")
        ]
    return ("pickup_datetime", "dropoff_datetime", *entry, "delay")


@dataclass(frozen=True)
class OutputLine:
    """One line of an output file, split into fields."""

    number: int  # 1-based line number in its file
    text: str
    fields: tuple[str, ...]

    @property
    def key(self) -> tuple[str, ...]:
        """What grading compares: all fields but the delay, and whether it is NULL."""
        return fields_key(self.fields)

    @property
    def delay_ms(self) -> float | None:
        """The reported delay in milliseconds, or None for NULL or a malformed line."""
        last = self.fields[-1]
        return float(last) if _DELAY.fullmatch(last) else None


def problem(line: OutputLine, query: str) -> str | None:
    """Why a line is malformed for a query, or None when its shape is right."""
    expected = FIELD_COUNTS[query]
    if len(line.fields) != expected:
        return f"{len(line.fields)} fields, expected {expected}"
    for name, value in zip(("pickup_datetime", "dropoff_datetime"), line.fields[:2]):
        if not _DATETIME.fullmatch(value):
            return f"{name} {value!r} is not YYYY-MM-DD HH:MM:SS"
    delay = line.fields[-1]
    if delay != NULL and not _DELAY.fullmatch(delay):
        return f"delay {delay!r} is neither NULL nor a number of milliseconds"
    return None


def parse_lines(data: bytes) -> list[OutputLine]:
    """Split file content into lines (LF or CRLF; a final LF ends the last line)."""
    text = data.decode("utf-8", errors="replace")
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    lines = []
    for number, row in enumerate(rows, start=1):
        row = row.removesuffix("\r")
        lines.append(OutputLine(number, row, tuple(f.strip() for f in row.split(","))))
    return lines


def read_output(path: Path) -> list[OutputLine] | None:
    """The lines of an output file, or None when the file does not exist."""
    if not path.is_file():
        return None
    return parse_lines(path.read_bytes())
