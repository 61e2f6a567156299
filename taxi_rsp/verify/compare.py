"""Comparing two output folders (SPEC §5): query files, rejects and summary counts.

Query lines in the challenge's format are compared on every field but the delay; for
the delay only whether it is ``NULL`` (an expiry trigger) must agree, because a measured
time never repeats. The result files of other queries (``time,trigger,change,rank,…``
CSV or SPARQL JSON lines, ``.jsonl``, named after the query in summary.json) carry no delay and are
compared line for line.
Both files are streamed side by side, so memory stays constant however long they are
(docs/performance.md, its git history, "polars at run time": a columnar comparison was slower).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from taxi_rsp.errors import UserError
from taxi_rsp.outputs.lines import split_delay

QUERY_FILES = ("q1.csv", "q2.csv")
REJECTS_FILE = "rejects.csv"
COUNT_KEYS = ("lines_read", "accepted", "rejected", "outliers", "profit_excluded")


@dataclass(frozen=True)
class Difference:
    """One disagreement: the file, the 1-based line number (0: the whole file) and why."""

    file: str
    line_no: int
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line_no}" if self.line_no else self.file
        return f"{where}: {self.message}"


@dataclass
class Comparison:
    """The files compared and the differences found (at most ``limit`` per file kept)."""

    compared: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    counted: dict[str, int] = field(default_factory=dict)  # file -> number of differing lines

    @property
    def identical(self) -> bool:
        return not self.differences


def _read_lines(path: Path) -> Iterator[str]:
    """The lines of ``path`` without their LF, one at a time."""
    with path.open(encoding="utf-8", newline="") as handle:
        for line in handle:
            yield line.rstrip("\n")


def query_line_differences(a: Iterable[str], b: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, message) for every line pair that disagrees."""
    for line_no, (left, right) in enumerate(zip_longest(a, b), start=1):
        if left is None or right is None:
            side = "A" if right is None else "B"
            yield line_no, f"only in {side}: {left if right is None else right}"
            continue
        (left_body, left_null), (right_body, right_null) = split_delay(left), split_delay(right)
        if left_body != right_body:
            yield line_no, f"A: {left_body}\n    B: {right_body}"
        elif left_null != right_null:
            yield line_no, f"delay NULL in {'A' if left_null else 'B'} only"


def rejects_differences(a: Path, b: Path) -> Iterator[tuple[int, str]]:
    """Row-by-row differences of two rejects files (parsed as CSV)."""
    with a.open(encoding="utf-8", newline="") as fa, b.open(encoding="utf-8", newline="") as fb:
        for line_no, (left, right) in enumerate(zip_longest(csv.reader(fa), csv.reader(fb)), start=1):
            if left != right:
                yield line_no, f"A: {left}\n    B: {right}"


GENERIC_HEADER = "time,trigger,change,rank"  # listener/generic.py's CSV


def _result_files(folder: Path) -> list[str]:
    """The result files summary.json names (one per query, CSV or JSON lines)."""
    path = folder / "summary.json"
    if not path.is_file():
        return []
    emitted = json.loads(path.read_text(encoding="utf-8")).get("emitted") or {}
    return [f"{name}{suffix}" for name in emitted for suffix in (".csv", ".jsonl") if (folder / f"{name}{suffix}").is_file()]


def _carries_delays(path: Path) -> bool:
    """Whether ``path`` is in the challenge's format (a delay last on each line)."""
    if path.suffix != ".csv":
        return False
    with path.open(encoding="utf-8", newline="") as handle:
        return not handle.readline().startswith(GENERIC_HEADER)


def exact_line_differences(a: Iterable[str], b: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, message) for every line pair that is not the same text."""
    for line_no, (left, right) in enumerate(zip_longest(a, b), start=1):
        if left != right:
            if left is None or right is None:
                yield line_no, f"only in {'A' if right is None else 'B'}: {left if right is None else right}"
            else:
                yield line_no, f"A: {left}\n    B: {right}"


def _summary_counts(folder: Path) -> dict | None:
    path = folder / "summary.json"
    if not path.is_file():
        return None
    summary = json.loads(path.read_text(encoding="utf-8"))
    return {key: summary.get(key) for key in COUNT_KEYS}


def compare_folders(a: Path, b: Path, queries: Sequence[str] | None = None, limit: int = 5) -> Comparison:
    """Compare output folders ``a`` and ``b``; ``queries`` limits the query files."""
    for folder in (a, b):
        if not folder.is_dir():
            raise UserError(f"{folder} is not a folder")
    if queries:
        names = [f"{q}.csv" for q in queries]
    else:
        names = [n for n in QUERY_FILES if (a / n).exists() or (b / n).exists()]
        names += [n for n in dict.fromkeys(_result_files(a) + _result_files(b)) if n not in names]
    if not names and not (a / REJECTS_FILE).exists() and not (b / REJECTS_FILE).exists():
        raise UserError(f"neither {a} nor {b} holds q1.csv, q2.csv or rejects.csv")
    result = Comparison()
    for name in [*names, REJECTS_FILE]:
        missing = [label for label, folder in (("A", a), ("B", b)) if not (folder / name).is_file()]
        if missing:
            result.differences.append(Difference(name, 0, f"missing in {' and '.join(missing)}"))
            continue
        result.compared.append(name)
        if name == REJECTS_FILE:
            found = rejects_differences(a / name, b / name)
        elif _carries_delays(a / name):
            found = query_line_differences(_read_lines(a / name), _read_lines(b / name))
        else:
            found = exact_line_differences(_read_lines(a / name), _read_lines(b / name))
        count = 0
        for line_no, message in found:
            count += 1
            if count <= limit:
                result.differences.append(Difference(name, line_no, message))
        if count:
            result.counted[name] = count
    counts_a, counts_b = _summary_counts(a), _summary_counts(b)
    if counts_a is not None and counts_b is not None:
        result.compared.append("summary.json")
        for key in COUNT_KEYS:
            if counts_a[key] != counts_b[key]:
                result.differences.append(Difference("summary.json", 0, f"{key}: A {counts_a[key]} != B {counts_b[key]}"))
    return result
