"""Comparing query output files line by line, ignoring the measured delay value.

The last field of every Q1/Q2 line is a measured delay: expected files (from the
oracle or hand-written) carry ``*`` where an arrival triggered the line and
``NULL`` where an expiry did. An actual line must have ``NULL`` exactly there and
otherwise a non-negative number with exactly three decimals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

_DELAY = re.compile(r"[0-9]+\.[0-9]{3}")
NULL = "NULL"


def read_output(path: str | Path) -> list[str]:
    """The lines of an output file, without line ends (LF; a CR before it is dropped)."""
    data = Path(path).read_text(encoding="utf-8")
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def compare_outputs(actual_lines: Sequence[str], expected_lines: Sequence[str]) -> list[str]:
    """Human-readable differences (1-based line numbers); empty when the outputs agree."""
    problems: list[str] = []
    for number, (actual, expected) in enumerate(zip(actual_lines, expected_lines), start=1):
        problems += _compare_line(number, actual, expected)
    if len(actual_lines) != len(expected_lines):
        problems.append(f"line count: actual {len(actual_lines)}, expected {len(expected_lines)}")
        longer, name = ((actual_lines, "extra actual") if len(actual_lines) > len(expected_lines)
                        else (expected_lines, "missing, expected"))
        first_extra = min(len(actual_lines), len(expected_lines))
        problems.append(f"line {first_extra + 1} {name}: {longer[first_extra]}")
    return problems


def _compare_line(number: int, actual: str, expected: str) -> list[str]:
    act, exp = actual.split(","), expected.split(",")
    if len(act) != len(exp):
        return [f"line {number}: {len(act)} fields, expected {len(exp)}\n"
                f"  actual:   {actual}\n  expected: {expected}"]
    problems = []
    differing = [i + 1 for i, (a, e) in enumerate(zip(act[:-1], exp[:-1])) if a != e]
    if differing:
        problems.append(f"line {number}: fields {differing} differ\n"
                        f"  actual:   {actual}\n  expected: {expected}")
    delay = act[-1]
    if exp[-1] == NULL and delay != NULL:
        problems.append(f"line {number}: delay {delay!r}, expected NULL (expiry trigger)")
    elif exp[-1] != NULL and _DELAY.fullmatch(delay) is None:
        problems.append(f"line {number}: delay {delay!r} is not a number with 3 decimals")
    return problems
