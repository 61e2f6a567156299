"""The answers of a finished run, read back from its SPEC §5 files for drawing.

A Q1 line is ten (start cell, end cell) routes, a Q2 line ten (cell, empty taxis,
median profit, profitability) entries; missing entries are ``NULL`` and are dropped here.
Times are the trigger's drop-off time as written (``YYYY-MM-DD HH:MM:SS``), which sorts
as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taxi_rsp.viz.grid import Q1, Q2, parse_cell


@dataclass(frozen=True)
class Route:
    rank: int
    start: str
    end: str

    def as_dict(self) -> dict:
        (sx, sy), (ex, ey) = parse_cell(self.start), parse_cell(self.end)  # type: ignore[misc]
        return {"rank": self.rank, "start": self.start, "end": self.end,
                "from": Q1.centre(sx, sy), "to": Q1.centre(ex, ey)}


@dataclass(frozen=True)
class Area:
    rank: int
    cell: str
    empty: str
    profit: str
    profitability: str

    def as_dict(self) -> dict:
        x, y = parse_cell(self.cell)  # type: ignore[misc]
        return {"rank": self.rank, "cell": self.cell, "empty": self.empty, "profit": self.profit,
                "profitability": self.profitability, "bounds": Q2.bounds(x, y)}


@dataclass(frozen=True)
class Answer:
    """One output line: its 1-based line number, trigger time, delay and entries."""

    line: int
    pickup: str
    time: str
    delay: str
    entries: tuple

    @property
    def expiry(self) -> bool:
        return self.delay == "NULL"


def parse_q1(text: str, line: int) -> Answer:
    fields = text.rstrip("\r\n").split(",")
    pairs = fields[2:-1]
    routes = tuple(Route(i // 2 + 1, pairs[i], pairs[i + 1]) for i in range(0, len(pairs) - 1, 2)
                   if pairs[i] != "NULL")
    return Answer(line, fields[0], fields[1], fields[-1], routes)


def parse_q2(text: str, line: int) -> Answer:
    fields = text.rstrip("\r\n").split(",")
    entries = fields[2:-1]
    areas = tuple(Area(i // 4 + 1, *entries[i:i + 4]) for i in range(0, len(entries) - 3, 4)
                  if entries[i] != "NULL")
    return Answer(line, fields[0], fields[1], fields[-1], areas)


PARSERS = {"q1": parse_q1, "q2": parse_q2}


def read_answers(path: Path, query: str) -> list[Answer]:
    """Every line of ``q1.csv`` or ``q2.csv`` (``query`` says which format)."""
    parse = PARSERS[query]
    with path.open(encoding="utf-8") as handle:
        return [parse(text, number) for number, text in enumerate(handle, 1) if text.strip()]


def at(answers: list[Answer], time: str) -> Answer | None:
    """The last answer written at or before ``time`` (the one on screen then)."""
    from bisect import bisect_right

    index = bisect_right([a.time for a in answers], time)
    return answers[index - 1] if index else None
